"""SQLite-level backup work: online copies, checking a copy opens, and taking the store for a restore.

A copy is written through SQLite's online backup API into a connection keyed with the store's own
key, so SQLite3 Multiple Ciphers re-encrypts every page on the way: the copy is as encrypted as the
store, and consistent even while other processes write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import apsw

from tallei_desktop.core.errors import StoreBusy, StoreDamaged, StoreUnavailable, WrongKey
from tallei_desktop.core.store.connection import map_errors, open_connection

__all__ = ["copy_database", "exclusive_store", "verify_store"]


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
    """Check that ``path`` opens with ``key`` and passes SQLite's quick check, or raise WrongKey /
    StoreUnavailable saying why."""
    if not path.is_file():
        raise StoreUnavailable(f"There is no backup at {path}.")
    try:
        conn = open_connection(path, key, key_source=key_source, readonly=True)
    except (WrongKey, StoreDamaged):
        raise WrongKey(
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
