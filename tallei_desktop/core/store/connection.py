"""Opening the encrypted database, and turning apsw's errors into ours.

Every connection is keyed with a raw 256-bit ChaCha20-Poly1305 key (SQLite3 Multiple Ciphers), so the
main file, the WAL and every index inside them are ciphertext on disk. The key is random, so it goes
in raw and skips the passphrase KDF, which would otherwise cost ~25 ms per connection for no gain.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator
from pathlib import Path

import apsw
import sqlite_vec

from tallei_desktop.core.errors import (
    BugError,
    InvalidInput,
    KnownError,
    StoreBusy,
    StoreUnavailable,
    TalleiError,
    WrongKey,
)

__all__ = ["BUSY_TIMEOUT_MS", "map_errors", "open_connection"]

#: How long a writer waits for another process's write transaction before giving up.
BUSY_TIMEOUT_MS = 15_000


def open_connection(
    path: Path, key: bytes, *, key_source: str, readonly: bool = False, cache_mib: int = 64
) -> apsw.Connection:
    """Open ``path`` with ``key``, verify the key, load sqlite-vec and set the pragmas.

    Raises :class:`WrongKey` when the key does not decrypt the file, and :class:`StoreUnavailable` when
    the file cannot be opened. Never returns a half-open connection.
    """
    if len(key) != 32:
        raise BugError("The store key must be 32 bytes.")
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    try:
        conn = apsw.Connection(str(path), flags=flags)
    except apsw.Error as exc:
        raise StoreUnavailable(f"Cannot open the memory store at {path}: {exc}.") from exc
    try:
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        conn.execute("PRAGMA cipher = 'chacha20'")
        conn.execute(f"PRAGMA key = \"x'{key.hex()}'\"")
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except apsw.NotADBError:
            raise _unopened(path, key, key_source) from None
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        if not readonly:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
            if str(mode).lower() != "wal":
                raise StoreUnavailable(f"The memory store at {path} cannot switch to WAL mode (got {mode}).")
        # FULL: a save is only acknowledged once its WAL frame is on disk, so power loss keeps it too.
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA cache_size = -{cache_mib * 1024}")  # decrypted pages kept per connection
    except TalleiError:
        conn.close()
        raise
    except apsw.Error as exc:
        conn.close()
        raise _translate(exc, path) from exc
    return conn


def _unopened(path: Path, key: bytes, key_source: str) -> TalleiError:
    """WrongKey, unless the same key opens the newest backup: then the store itself is damaged."""
    from tallei_desktop.core.store.backup_files import backups_dir, damaged_store_error, newest_backup

    newest = newest_backup(backups_dir(path))
    if newest is not None and newest != path:
        try:
            open_connection(newest, key, key_source=key_source, readonly=True).close()
        except TalleiError:
            pass
        else:
            return damaged_store_error(path, "its first page fails the cipher's check")
    return WrongKey(
        f"The key from {key_source} does not open the memory store at {path}. "
        "Use the key or passphrase this store was created with."
    )


def _translate(exc: apsw.Error, path: Path | None = None) -> TalleiError:
    where = f" at {path}" if path else ""
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return StoreBusy(
            f"The memory store{where} stayed locked by another program for too long. Try again in a moment."
        )
    if isinstance(exc, apsw.FullError):
        return StoreUnavailable(
            f"The disk holding the memory store{where} is full. Free some space and try again."
        )
    if isinstance(exc, apsw.ReadOnlyError | apsw.PermissionsError | apsw.CantOpenError):
        return StoreUnavailable(
            f"The memory store{where} cannot be written: {exc}. Check the folder's permissions."
        )
    if isinstance(exc, apsw.IOError):
        if exc.__cause__ is not None and getattr(exc.__cause__, "errno", None) == errno.ENOSPC:
            return StoreUnavailable(f"The disk holding the memory store{where} is full.")
        return StoreUnavailable(f"Reading or writing the memory store{where} failed: {exc}.")
    if isinstance(exc, apsw.NotADBError | apsw.CorruptError):
        if path is not None:
            from tallei_desktop.core.store.backup_files import damaged_store_error

            return damaged_store_error(path, str(exc))
        return StoreUnavailable(
            f"The memory store is damaged or not a Tallei store ({exc}). Restore it from a backup."
        )
    if isinstance(exc, apsw.TooBigError):
        return InvalidInput("That memory is too large to store.")
    return BugError(f"Unexpected database error: {type(exc).__name__}: {exc}")


@contextlib.contextmanager
def map_errors(path: Path | None = None) -> Iterator[None]:
    """Re-raise any apsw error inside the block as a :class:`TalleiError`."""
    try:
        yield
    except KnownError:
        raise
    except apsw.Error as exc:
        raise _translate(exc, path) from exc
