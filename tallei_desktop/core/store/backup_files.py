"""Backup work at the file level: online copies, checking a copy opens, taking the store for a
restore, and finding the backup files (the damaged-store error names the newest one).

``core/backups.py`` decides when to copy, what to keep and how to restore; this holds what needs
SQLite itself.

A copy is written through SQLite's online backup API into a connection keyed with the store's own
key, so SQLite3 Multiple Ciphers re-encrypts every page on the way: the copy is as encrypted as the
store, and consistent even while other processes write.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import apsw

from tallei_desktop.core.errors import StoreBusy, StoreDamaged, StoreUnavailable, WrongKey
from tallei_desktop.core.store.connection import map_errors, open_connection

__all__ = [
    "BackupInfo",
    "backups_dir",
    "copy_database",
    "damaged_store_error",
    "exclusive_store",
    "list_backups",
    "newest_backup",
    "verify_store",
]

#: tallei-YYYYmmdd-HHMMSS.db, with -N added when two are taken in the same second.
_NAME = re.compile(r"^tallei-(\d{8}-\d{6})(?:-(\d+))?\.db$")
_STAMP = "%Y%m%d-%H%M%S"


@dataclass(frozen=True, slots=True)
class BackupInfo:
    path: Path
    taken_at: datetime  # from the file name, UTC
    size: int  # bytes


def backups_dir(db_path: Path) -> Path:
    """The folder holding the backups of the store at ``db_path``."""
    return db_path.parent / "backups"


def list_backups(folder: Path) -> list[BackupInfo]:
    """The backups in ``folder``, newest first; files not named like a backup are ignored."""
    found: list[tuple[datetime, int, BackupInfo]] = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreUnavailable(f"Cannot read the backup folder {folder}: {exc.strerror}.") from None
    for entry in entries:
        match = _NAME.match(entry.name)
        if match is None or not entry.is_file():
            continue
        taken = datetime.strptime(match[1], _STAMP).replace(tzinfo=UTC)
        info = BackupInfo(Path(entry.path), taken, entry.stat().st_size)
        found.append((taken, int(match[2] or 0), info))
    found.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [info for _, _, info in found]


def newest_backup(folder: Path) -> Path | None:
    backups = list_backups(folder)
    return backups[0].path if backups else None


def damaged_store_error(db_path: Path, detail: str) -> StoreDamaged:
    """The error for a store file that fails the cipher's page check, naming the way back."""
    newest = newest_backup(backups_dir(db_path))
    if newest is not None:
        advice = f"The newest backup is {newest}; restore it."
    else:
        advice = f"There is no backup in {backups_dir(db_path)}; move the file away and import an export."
    return StoreDamaged(f"The memory store at {db_path} is damaged ({detail}). {advice}")


def _keyed(path: Path, key: bytes) -> apsw.Connection:
    """A bare keyed connection: no extension, no pragmas, no busy wait (the caller decides)."""
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA cipher = 'chacha20'")
    conn.execute(f"PRAGMA key = \"x'{key.hex()}'\"")
    return conn


def copy_database(source: apsw.Connection, dest: Path, key: bytes) -> None:
    """Copy the store behind ``source`` (a connection outside any transaction) to a new file ``dest``."""
    with map_errors(dest):
        conn = _keyed(dest, key)
        try:
            with conn.backup("main", source, "main") as job:
                job.step(-1)
            # Leave a single self-contained file: no -wal beside the copy.
            conn.execute("PRAGMA journal_mode = DELETE").fetchall()
        finally:
            conn.close()


def verify_store(path: Path, key: bytes, *, key_source: str) -> None:
    """Check that the backup at ``path`` opens with ``key`` and passes SQLite's quick check, or raise
    StoreUnavailable saying why."""
    if not path.is_file():
        raise StoreUnavailable(f"There is no backup at {path}.")
    try:
        conn = open_connection(path, key, key_source=key_source, readonly=True)
    except (WrongKey, StoreDamaged):
        raise StoreUnavailable(
            f"{path} does not open with the key from {key_source}: it is not a backup of this store, "
            "or it is damaged. Choose another backup."
        ) from None
    try:
        with map_errors(path):
            verdict = conn.execute("PRAGMA quick_check").fetchall()
        if [str(v[0]) for v in verdict] != ["ok"]:
            raise StoreUnavailable(f"The backup at {path} is damaged ({verdict[0][0]}); choose another one.")
    finally:
        conn.close()


@contextlib.contextmanager
def exclusive_store(path: Path, key: bytes, *, key_source: str) -> Iterator[None]:
    """Hold the store exclusively for the block, or fail at once with StoreBusy if any other
    connection (in any process) has it open.

    Every connection to a WAL store keeps a shared lock on the file while it is open, so an
    exclusive lock taken with no busy wait succeeds only when nobody else is connected. The WAL is
    checkpointed into the main file first, so the file alone holds every committed change.
    """
    if not path.exists():
        yield
        return
    try:
        conn = _keyed(path, key)
    except apsw.Error as exc:
        raise StoreUnavailable(f"Cannot open the memory store at {path}: {exc}.") from exc
    try:
        conn.setbusytimeout(0)
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        try:
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            conn.execute("COMMIT")
        except apsw.BusyError:
            raise StoreBusy(
                f"The memory store at {path} is open in another program (the tray app or an assistant's "
                "MCP server). Quit it and try again."
            ) from None
        except apsw.NotADBError:
            # A damaged store cannot be read, but nobody else holds it either: restoring is the cure.
            conn.close()
            yield
            return
        with map_errors(path):
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        yield
    finally:
        conn.close()
