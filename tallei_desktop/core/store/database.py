"""The database: one writer connection per process, one reader connection per thread.

Writes go through :meth:`Database.write`, which serialises them inside the process with a lock and
across processes with ``BEGIN IMMEDIATE`` (WAL lets readers carry on meanwhile). ``SQLITE_BUSY`` is
retried until a deadline, so "database is locked" never reaches a caller; past the deadline the caller
gets :class:`StoreBusy` with a plain message instead.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw

from tallei_desktop.core.errors import StoreBusy, StoreUnavailable
from tallei_desktop.core.store.backup_files import copy_database
from tallei_desktop.core.store.connection import map_errors, open_connection
from tallei_desktop.core.store.migrations import migrate

__all__ = ["Database"]

log = logging.getLogger(__name__)

#: Total time a write keeps retrying a busy store before it gives up with StoreBusy.
WRITE_DEADLINE_S = 30.0


class Database:
    def __init__(self, path: Path, key: bytes, *, key_source: str) -> None:
        """Open (creating if needed) and migrate the store at ``path``."""
        self.path = path
        self.key_source = key_source
        self._key = key
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"Cannot create the data folder {path.parent}: {exc.strerror}.") from exc
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[apsw.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._watch: apsw.Connection | None = None
        self._watch_lock = threading.Lock()
        # The writer touches few pages per transaction; readers scan, so they get the larger cache.
        self._writer = open_connection(path, key, key_source=key_source, cache_mib=8)
        try:
            with map_errors(path):
                self.schema_version = migrate(self._writer)
        except BaseException:
            self._writer.close()
            raise

    def reader(self) -> apsw.Connection:
        """This thread's read connection (opened on first use)."""
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreUnavailable("The memory store is closed.")
            conn = open_connection(self.path, self._key, key_source=self.key_source)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextlib.contextmanager
    def read(self) -> Iterator[apsw.Connection]:
        """A read transaction: every query inside sees one consistent snapshot."""
        conn = self.reader()
        with map_errors(self.path):
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if not conn.getautocommit():
                    conn.execute("COMMIT")

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``), committed on success, rolled back on error."""
        if self._closed:
            raise StoreUnavailable("The memory store is closed.")
        with self._write_lock, map_errors(self.path):
            conn = self._writer
            self._begin_immediate(conn)
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self._commit(conn)

    def _begin_immediate(self, conn: apsw.Connection) -> None:
        deadline = time.monotonic() + WRITE_DEADLINE_S
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except apsw.BusyError:
                # The busy handler already waited BUSY_TIMEOUT_MS; keep trying until the deadline.
                if time.monotonic() > deadline:
                    raise StoreBusy(
                        f"Another program kept the memory store at {self.path} locked for over "
                        f"{WRITE_DEADLINE_S:.0f} s. Try again in a moment."
                    ) from None
                log.warning("store busy; retrying the write")

    def _commit(self, conn: apsw.Connection) -> None:
        deadline = time.monotonic() + WRITE_DEADLINE_S
        while True:
            try:
                conn.execute("COMMIT")
                return
            except apsw.BusyError:
                if time.monotonic() > deadline:
                    conn.execute("ROLLBACK")
                    raise StoreBusy(
                        f"The memory store at {self.path} stayed busy; nothing was saved."
                    ) from None

    def generation(self) -> int:
        """The content generation: bumped in the same transaction as every content change."""
        with map_errors(self.path):
            row = self.reader().execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def backup_to(self, dest: Path) -> None:
        """Copy the store, still encrypted with its key, to the new file ``dest``: online and consistent."""
        if self._closed:
            raise StoreUnavailable("The memory store is closed.")
        copy_database(self.reader(), dest, self._key)

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version`` on a connection kept only for this: it changes whenever any
        other connection (this process's writer included) commits, and reads no table to say so."""
        with self._watch_lock:
            if self._watch is None:
                if self._closed:
                    raise StoreUnavailable("The memory store is closed.")
                self._watch = open_connection(self.path, self._key, key_source=self.key_source, cache_mib=1)
            with map_errors(self.path):
                version: Any = self._watch.execute("PRAGMA data_version").fetchall()[0][0]
                return int(version)

    def checkpoint(self) -> None:
        with map_errors(self.path):
            self._writer.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        """Close every connection this process opened. Idempotent."""
        if self._closed:
            return
        self._closed = True
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for conn in readers:
            conn.close()
        with self._watch_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
        with self._write_lock:
            self._writer.close()


def bump_generation(conn: apsw.Connection) -> None:
    """Mark a content change; call inside the write transaction that makes it."""
    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
