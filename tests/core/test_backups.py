"""Backups and restore on real encrypted stores, with a real second process holding the store."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from tallei_desktop.core.backups import Backups, backups_dir, list_backups, newest_backup, restore_backup
from tallei_desktop.core.errors import InvalidInput, StoreBusy, StoreDamaged, StoreUnavailable, WrongKey
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.connection import open_connection
from tallei_desktop.core.store.database import Database
from tests.core.conftest import KEY, Clock, ServiceFactory

SECRET = "The vault combination is 31-17-42"


def _contents(path: Path, key: bytes = KEY) -> list[str]:
    conn = open_connection(path, key, key_source="test key", readonly=True)
    try:
        return [str(c) for (c,) in conn.execute("SELECT content FROM memories ORDER BY rowid")]
    finally:
        conn.close()


def test_backup_is_still_encrypted_and_opens_with_the_store_key(
    service: MemoryService, tmp_path: Path
) -> None:
    service.save(SECRET, platform="claude")
    folder = backups_dir(service.db.path)
    path = service.backup_now(folder)
    assert path.parent == folder and path.name == "tallei-20260601-120000.db"
    data = path.read_bytes()
    assert b"vault" not in data and b"31-17-42" not in data and b"SQLite format 3" not in data
    assert sorted(p.name for p in folder.iterdir()) == [path.name]  # no -wal, no partial file
    assert _contents(path) == [SECRET]
    with pytest.raises(WrongKey):
        _contents(path, bytes(32))


def test_backup_while_another_process_writes_is_consistent(service: MemoryService, tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path\n"
        "from tallei_desktop.core.store.database import Database\n"
        "db = Database(Path(sys.argv[1]), bytes(range(32)), key_source='t')\n"
        "for i in range(300):\n"
        "    with db.write() as c:\n"
        '        c.execute("INSERT INTO memories (id, content, norm_hash, type, bucket, platform, created_at,'
        " updated_at, occurred_at) VALUES (?, ?, ?, 'fact', 'long_term', 'x', 1, 1, 1)\","
        " (f'{i:012x}', f'row {i}', f'h{i}'))\n"
        "db.close()\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", script, str(service.db.path)])
    try:
        copies = [service.backup_now(tmp_path / "b") for _ in range(3)]
    finally:
        assert writer.wait(timeout=120) == 0
    for copy in copies:
        rows = _contents(copy)
        assert rows == [f"row {i}" for i in range(len(rows))]  # a prefix: never a torn write


def test_only_the_newest_backups_are_kept(service: MemoryService, clock: Clock, tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    service.configure_backups(folder, keep=3)
    made = []
    for _ in range(5):
        made.append(service.backup_now(folder))
        clock.advance(hours=1)
    assert [b.path for b in list_backups(folder)] == made[:1:-1]
    assert newest_backup(folder) == made[-1]


def test_automatic_backup_runs_at_most_once_a_day_across_processes(
    make_service: ServiceFactory, clock: Clock, tmp_path: Path
) -> None:
    first = make_service()
    folder = backups_dir(first.db.path)
    first.save("Something worth keeping")
    first.drain()
    assert list_backups(folder) == []  # off until configured
    first.configure_backups(folder, keep=7)
    first.drain()
    assert len(list_backups(folder)) == 1
    clock.advance(hours=23)
    first.drain()
    other = make_service()  # a second process on the same store judges by the same files
    other.configure_backups(folder, keep=7)
    other.drain()
    assert len(list_backups(folder)) == 1
    clock.advance(hours=1, seconds=1)
    other.drain()
    first.drain()
    assert len(list_backups(folder)) == 2


def test_the_background_worker_makes_the_daily_backup(make_service: ServiceFactory, tmp_path: Path) -> None:
    service = make_service()
    folder = tmp_path / "auto"
    service.configure_backups(folder, keep=7)
    service.start_background(poll_s=0.2)
    assert service.wait_idle(30)
    assert len(list_backups(folder)) == 1


def test_restore_brings_back_the_backup_and_keeps_the_replaced_store(
    make_service: ServiceFactory, clock: Clock, tmp_path: Path
) -> None:
    service = make_service()
    service.save("Saved before the backup")
    backup = service.backup_now(backups_dir(service.db.path))
    service.save("Saved after the backup")
    path = service.db.path
    service.close()

    result = restore_backup(path, KEY, key_source="test key", now=clock())
    assert result.restored_from == backup
    assert result.replaced == path.with_name("tallei.db.replaced-20260601-120000")
    assert not path.with_name("tallei.db-wal").exists() and not path.with_name("tallei.db-shm").exists()
    assert _contents(result.replaced) == ["Saved before the backup", "Saved after the backup"]
    reopened = make_service()
    assert [m.content for m in reopened.list()] == ["Saved before the backup"]
    reopened.save("Saved after the restore")  # the restored store is a working store


def test_restore_refuses_while_another_process_has_the_store_open(
    make_service: ServiceFactory, clock: Clock, tmp_path: Path
) -> None:
    service = make_service()
    service.save("Kept in place")
    service.backup_now(backups_dir(service.db.path))
    path = service.db.path
    service.close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path\n"
            "from tallei_desktop.core.store.database import Database\n"
            "db = Database(Path(sys.argv[1]), bytes(range(32)), key_source='t')\n"
            "with db.read() as c: c.execute('SELECT count(*) FROM memories').fetchall()\n"
            "print('open', flush=True); sys.stdin.readline(); db.close()\n",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        before = sorted(p.name for p in path.parent.iterdir())
        with pytest.raises(StoreBusy, match="open in another program"):
            restore_backup(path, KEY, key_source="test key", now=clock())
        assert sorted(p.name for p in path.parent.iterdir()) == before
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
        holder.stdout.close()
    assert restore_backup(path, KEY, key_source="test key", now=clock()).replaced is not None


def test_restore_refuses_a_backup_of_another_store(make_service: ServiceFactory, tmp_path: Path) -> None:
    foreign = Database(tmp_path / "other" / "tallei.db", bytes(32), key_source="other key")
    foreign.close()
    service = make_service()
    service.save("Still here")
    path = service.db.path
    service.close()
    before = sorted(p.name for p in path.parent.iterdir())
    with pytest.raises(StoreUnavailable, match="not a backup of this store"):
        restore_backup(path, KEY, tmp_path / "other" / "tallei.db", key_source="test key", now=Clock()())
    with pytest.raises(StoreUnavailable, match="no backups"):
        restore_backup(path, KEY, key_source="test key", now=Clock()())
    assert sorted(p.name for p in path.parent.iterdir()) == before
    assert _contents(path) == ["Still here"]


def _damaged_store(make_service: ServiceFactory, *, with_backup: bool) -> Path:
    service = make_service()
    for i in range(400):
        service.save(f"Memory number {i} padded out with enough words to fill several pages of the file")
    if with_backup:
        service.backup_now(backups_dir(service.db.path))
    path = service.db.path
    service.close()  # checkpoints the WAL into the main file
    return path


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    for i in range(offset, offset + 16):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def test_damaged_page_names_the_newest_backup(make_service: ServiceFactory, tmp_path: Path) -> None:
    path = _damaged_store(make_service, with_backup=True)
    newest = newest_backup(backups_dir(path))
    _flip(path, path.stat().st_size // 2)
    with pytest.raises(StoreDamaged) as caught:
        service = make_service()
        service.list(limit=500)
        service.search("padded words")
    message = str(caught.value)
    assert str(newest) in message and "restore it" in message and "\n" not in message


def test_damaged_first_page_is_told_apart_from_a_wrong_key(make_service: ServiceFactory) -> None:
    path = _damaged_store(make_service, with_backup=True)
    _flip(path, 200)
    with pytest.raises(StoreDamaged, match="restore it"):
        make_service()
    with pytest.raises(WrongKey):  # a wrong key is still a wrong key
        Database(path, bytes(32), key_source="other key")


def test_damaged_store_without_backup_says_so(make_service: ServiceFactory) -> None:
    path = _damaged_store(make_service, with_backup=False)
    _flip(path, path.stat().st_size // 2)
    with pytest.raises(StoreDamaged, match="There is no backup"):
        service = make_service()
        service.list(limit=500)
        service.search("padded words")


def test_restore_onto_a_computer_without_a_store_puts_the_backup_in_place(
    make_service: ServiceFactory, clock: Clock, tmp_path: Path
) -> None:
    service = make_service()
    service.save("Carried to a new computer")
    backup = service.backup_now(tmp_path / "carried")
    service.close()
    target = tmp_path / "new-computer" / "data" / "tallei.db"
    result = restore_backup(target, KEY, backup, key_source="test key", now=clock())
    assert result.replaced is None
    assert _contents(target) == ["Carried to a new computer"]


def test_a_failed_automatic_backup_is_tried_again_an_hour_later_not_every_round(
    service: MemoryService, clock: Clock, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    folder.write_text("a file where the folder should be")
    schedule = Backups(service.db, clock)
    schedule.configure(folder)
    assert schedule.run_if_due() is None  # logged, not raised
    folder.unlink()
    clock.advance(minutes=59)
    assert schedule.run_if_due() is None
    assert not folder.exists()  # not tried again yet
    clock.advance(minutes=1)
    made = schedule.run_if_due()
    assert made is not None and [b.path for b in list_backups(folder)] == [made]


def test_between_checks_the_folder_is_not_listed_again(
    service: MemoryService, clock: Clock, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    schedule = Backups(service.db, clock)
    schedule.configure(folder)
    first = schedule.run_if_due()
    assert first is not None
    first.unlink()  # an empty folder is due at once, but only a look at it would tell
    clock.advance(hours=23, minutes=59)
    assert schedule.run_if_due() is None and list_backups(folder) == []
    clock.advance(minutes=1)
    assert schedule.run_if_due() is not None and len(list_backups(folder)) == 1


def test_the_next_automatic_backup_is_due_a_day_after_one_another_process_made(
    make_service: ServiceFactory, clock: Clock, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    other = Backups(make_service().db, clock)
    other.configure(folder)
    made_elsewhere = other.backup_now(folder)
    schedule = Backups(make_service().db, clock)
    schedule.configure(folder)
    clock.advance(hours=6)
    assert schedule.run_if_due() is None
    clock.advance(hours=17, minutes=59)
    assert schedule.run_if_due() is None
    clock.advance(minutes=1)
    made = schedule.run_if_due()
    assert made is not None and [b.path for b in list_backups(folder)] == [made, made_elsewhere]


def test_configuring_again_takes_the_new_schedule_at_the_next_round(
    service: MemoryService, clock: Clock, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    schedule = Backups(service.db, clock)
    schedule.configure(folder)
    assert schedule.run_if_due() is not None
    clock.advance(hours=2)
    assert schedule.run_if_due() is None  # the daily one is not due for 22 hours
    schedule.configure(folder, keep=2, every=timedelta(hours=1))
    assert schedule.run_if_due() is not None
    clock.advance(hours=1)
    assert schedule.run_if_due() is not None
    assert len(list_backups(folder)) == 2  # the new count prunes too


def test_a_backup_now_and_the_automatic_one_in_the_same_second_make_two_whole_copies(
    service: MemoryService, clock: Clock, tmp_path: Path
) -> None:
    service.save(SECRET)
    folder = tmp_path / "backups"
    schedule = Backups(service.db, clock)
    schedule.configure(folder, keep=100)

    def automatic(start: threading.Barrier, made: list[Path | None]) -> None:
        start.wait()
        made.append(schedule.run_if_due())

    every: list[Path] = []
    for _ in range(5):
        clock.advance(days=1)
        start = threading.Barrier(2)
        made: list[Path | None] = []
        worker = threading.Thread(target=automatic, args=(start, made))
        worker.start()
        start.wait()
        made.append(schedule.backup_now(folder))
        worker.join(timeout=60)
        # The automatic one is made unless the other copy got in first and made it not due.
        every += [m for m in made if m is not None]
    assert len(set(every)) == len(every) >= 5
    backups = list_backups(folder)
    assert sorted(b.path for b in backups) == sorted(every)
    assert all(_contents(b.path) == [SECRET] for b in backups)


def test_keeping_fewer_than_one_backup_is_refused(service: MemoryService, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="at least 1"):
        Backups(service.db, Clock()).configure(tmp_path, keep=0)
