"""The encrypted store: ciphertext on disk, key checks, migrations, several processes at once."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import apsw
import pytest

from tallei_desktop.core.errors import StoreUnavailable, WrongKey
from tallei_desktop.core.models import Memory
from tallei_desktop.core.store import conflicts as sc
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.database import Database
from tallei_desktop.core.store.migrations import SCHEMA_VERSION
from tests.conftest import REPO_ROOT
from tests.core.conftest import KEY, ServiceFactory
from tests.support.fake_embedder import HashEmbedder

PHRASE = "zebra-marmalade-7731 lives at 42 Quiet Lane"


def test_store_file_and_wal_hold_no_plaintext(make_service: ServiceFactory, tmp_path: Path) -> None:
    service = make_service(embedder=HashEmbedder())
    service.save(PHRASE, platform="claude")
    service.drain()  # vectors and the text index are written too
    service.recall("zebra marmalade")
    wal = tmp_path / "tallei.db-wal"
    assert wal.exists() and wal.stat().st_size > 0, "the WAL should hold the recent writes"
    needles = [b"zebra-marmalade", b"Quiet Lane", "zebra".encode("utf-16-le"), b"SQLite format 3"]
    for path in (tmp_path / "tallei.db", wal):
        data = path.read_bytes()
        for needle in needles:
            assert needle not in data, f"{needle!r} found in plaintext in {path.name}"
    service.db.checkpoint()
    data = (tmp_path / "tallei.db").read_bytes()
    assert b"zebra-marmalade" not in data and b"memories" not in data


def test_wrong_key_names_the_key_source_and_opens_nothing(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service()
    service.save("I prefer tea over coffee")
    service.close()
    with pytest.raises(WrongKey, match="the spare key"):
        Database(tmp_path / "tallei.db", bytes(32), key_source="the spare key")
    # The right key still opens it, and the memory is intact.
    db = Database(tmp_path / "tallei.db", KEY, key_source="test key")
    try:
        assert db.reader().execute("SELECT count(*) FROM memories").fetchone()[0] == 1
    finally:
        db.close()


def test_plain_sqlite_cannot_read_the_store(make_service: ServiceFactory, tmp_path: Path) -> None:
    make_service().save("my bank PIN hint is the cat's birthday")
    conn = apsw.Connection(str(tmp_path / "tallei.db"))
    with pytest.raises(apsw.NotADBError):
        conn.execute("SELECT * FROM sqlite_master").fetchall()
    conn.close()


def test_migrations_set_user_version_and_are_idempotent(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    assert db.schema_version == SCHEMA_VERSION
    db.close()
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    assert db.reader().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


def test_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    with db.write() as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    db.close()
    with pytest.raises(StoreUnavailable, match="newer Tallei"):
        Database(tmp_path / "t.db", KEY, key_source="k")


def test_unwritable_folder_gives_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreUnavailable, match="data folder"):
        Database(blocker / "sub" / "t.db", KEY, key_source="k")


_WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from tallei_desktop.core.recall import Budgets
    from tallei_desktop.core.service import MemoryService
    from tallei_desktop.core.store.database import Database
    from tests.support.fake_embedder import HashEmbedder
    db = Database(Path({path!r}), bytes(range(32)), key_source="k")
    service = MemoryService(db, HashEmbedder(), budgets=Budgets(1500, 4800, 1700, 60))
    for i in range({count}):
        service.save(f"writer {{sys.argv[1]}} note number {{i}} about topic {{i * 7 % 13}}")
        if i % 10 == 0:
            service.recall(f"topic {{i % 13}}", count_use=True)
    service.close()
    print("done")
    """
)


def test_several_processes_write_at_once_without_locked_errors(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    Database(path, KEY, key_source="k").close()
    script = _WRITER.format(root=str(REPO_ROOT), path=str(path), count=150)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(n)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for n in range(4)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "locked" not in err.lower()
        assert out.strip() == "done"
    db = Database(path, KEY, key_source="k")
    try:
        n = db.reader().execute("SELECT count(*) FROM memories").fetchone()[0]
        assert n == 4 * 150
    finally:
        db.close()


def test_provenance_attached_to_a_memory_keeps_every_other_field(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    try:
        with db.write() as conn:
            conn.execute(
                "INSERT INTO memories (rowid, id, content, norm_hash, type, bucket, platform, created_at,"
                " updated_at, occurred_at) VALUES (7, 'm7', 'x', 'h', 'fact', 'long_term', 'claude', 0, 0, 0)"
            )
            conn.execute(
                "INSERT INTO provenance (memory_rowid, platform, at, action)"
                " VALUES (7, 'claude', 1, 'saved'), (7, 'chatgpt', 2, 'confirmed')"
            )
        # Each field holds its own value: a field of Memory that is not carried over shows here.
        values: dict[str, Any] = {f.name: f"value of {f.name}" for f in dataclasses.fields(Memory)}
        memory = Memory(**values)
        with db.read() as conn:
            (row,) = q.load_provenance(conn, [q.Row(7, memory)])
        assert [(p.platform, p.action) for p in row.memory.provenance] == [
            ("claude", "saved"),
            ("chatgpt", "confirmed"),
        ]
        assert row.memory == dataclasses.replace(memory, provenance=row.memory.provenance)
    finally:
        db.close()


def test_open_conflicts_are_counted_on_each_of_their_memories(make_service: ServiceFactory) -> None:
    svc = make_service(embedder=HashEmbedder())
    a, b, c, d = (svc.save(f"Works from the office on day {n}.", platform="claude").id for n in range(4))
    with svc.db.write() as conn:
        rowid = {str(m): int(r) for r, m in conn.execute("SELECT rowid, id FROM memories")}
        sc.open_conflict(conn, rowid[a], rowid[b], 1.0)
        sc.open_conflict(conn, rowid[a], rowid[c], 2.0)
        settled = sc.open_conflict(conn, rowid[c], rowid[d], 3.0)
        conn.execute("UPDATE conflicts SET status = 'resolved' WHERE id = ?", (settled,))
    with svc.db.read() as conn:
        assert sc.open_conflicts_per_memory(conn) == {rowid[a]: 2, rowid[b]: 1, rowid[c]: 1}
