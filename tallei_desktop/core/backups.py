"""Backups of the store: where they live, how they are named, pruned and scheduled, and restoring one.

Backups are whole-store copies, still encrypted with the store's key, named
``<data_dir>/backups/tallei-YYYYmmdd-HHMMSS.db`` (UTC). The newest ``keep`` are kept. A restore
first checks that the backup opens with the key and that no other program has the store open, then
moves the current file aside as ``tallei.db.replaced-YYYYmmdd-HHMMSS`` and puts the backup in its place.

:class:`Backups` is what a service keeps: its folder, count and schedule. The parts that need SQLite
(the online copy, checking a copy, holding the store for a restore) are in ``store/backup_files.py``.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tallei_desktop.core.errors import InvalidInput, KnownError, StoreUnavailable
from tallei_desktop.core.files import sync_folder
from tallei_desktop.core.store.backup_files import (
    BackupInfo,
    backups_dir,
    damaged_store_error,
    exclusive_store,
    list_backups,
    newest_backup,
    verify_store,
)
from tallei_desktop.core.store.database import Database

__all__ = [
    "AUTO_BACKUP_EVERY",
    "DEFAULT_KEEP",
    "RETRY_AFTER",
    "BackupInfo",
    "Backups",
    "RestoreResult",
    "backup_due",
    "backups_dir",
    "damaged_store_error",
    "list_backups",
    "new_backup_path",
    "newest_backup",
    "prune_backups",
    "restore_backup",
]

log = logging.getLogger(__name__)

DEFAULT_KEEP = 7
AUTO_BACKUP_EVERY = timedelta(days=1)
#: How long an automatic backup that failed (full disk, folder gone) waits before the next try.
RETRY_AFTER = timedelta(hours=1)
_STAMP = "%Y%m%d-%H%M%S"


@dataclass(frozen=True, slots=True)
class RestoreResult:
    restored_from: Path
    replaced: Path | None  # where the previous store file now is (None if there was none)


def new_backup_path(folder: Path, now: datetime) -> Path:
    """A name for a backup taken at ``now`` that no file has yet."""
    stem = f"tallei-{now.astimezone(UTC):{_STAMP}}"
    path = folder / f"{stem}.db"
    n = 1
    while path.exists():
        path = folder / f"{stem}-{n}.db"
        n += 1
    return path


def prune_backups(folder: Path, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` backups; returns what was deleted."""
    if keep < 1:
        raise StoreUnavailable("backup_keep must be at least 1.")
    gone = []
    for info in list_backups(folder)[keep:]:
        info.path.unlink(missing_ok=True)
        gone.append(info.path)
    return gone


def backup_due(folder: Path, now: datetime, every: timedelta = AUTO_BACKUP_EVERY) -> bool:
    """True when the newest backup in ``folder`` is older than ``every`` (or there is none).

    Judged from the files, so every process on the store agrees and together they make one a day.
    """
    backups = list_backups(folder)
    return not backups or now - backups[0].taken_at >= every


class Backups:
    """One service's backups of its store: the folder, how many to keep, how often the background
    worker makes one, and when it next needs to look.

    Automatic backups are off until :meth:`configure`. Whether one is due is judged from the files
    (see :func:`backup_due`), so every process on the store agrees; between checks the time of the
    next one is kept here, so most background rounds do not even list the folder. Copies are taken
    one at a time: the worker's automatic backup and a "back up now" in the same second would
    otherwise choose the same file name.
    """

    def __init__(self, db: Database, clock: Callable[[], datetime]) -> None:
        self._db = db
        self._clock = clock
        self._lock = threading.Lock()
        self._folder: Path | None = None
        self._keep = DEFAULT_KEEP
        self._every = AUTO_BACKUP_EVERY
        self._next_check: datetime | None = None

    def configure(
        self, folder: Path, *, keep: int = DEFAULT_KEEP, every: timedelta = AUTO_BACKUP_EVERY
    ) -> None:
        """Keep ``keep`` backups in ``folder`` and make one when the newest is older than ``every``
        (judged by the clock); the next background round looks again."""
        if keep < 1:
            raise InvalidInput("backup_keep must be at least 1.")
        with self._lock:
            self._folder = folder
            self._keep = keep
            self._every = every
            self._next_check = None

    def backup_now(self, folder: Path) -> Path:
        """Copy the store, still encrypted with its key, into ``folder``; prune old backups; return the copy."""
        with self._lock:
            return self._copy(folder)

    def run_if_due(self) -> Path | None:
        """Make the automatic backup if one is due and return it; None when none was due or it failed.

        A failure (full disk, folder not writable) is logged, not raised, and tried again after
        :data:`RETRY_AFTER`: the background round that calls this must carry on.
        """
        with self._lock:
            folder = self._folder
            if folder is None:
                return None
            now = self._clock()
            if self._next_check is not None and now < self._next_check:
                return None
            made: Path | None = None
            try:
                if backup_due(folder, now, self._every):
                    made = self._copy(folder)
                newest = list_backups(folder)
                self._next_check = (newest[0].taken_at if newest else now) + self._every
            except KnownError as exc:
                log.warning("automatic backup failed; trying again in an hour: %s", exc)
                self._next_check = now + RETRY_AFTER
                return None
            return made

    def _copy(self, folder: Path) -> Path:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"Cannot create the backup folder {folder}: {exc.strerror}.") from None
        dest = new_backup_path(folder, self._clock())
        partial = dest.with_name(f".{dest.name}.partial")
        try:
            self._db.backup_to(partial)
            os.replace(partial, dest)
        except OSError as exc:
            raise StoreUnavailable(f"Cannot write the backup {dest}: {exc.strerror}.") from None
        finally:
            partial.unlink(missing_ok=True)
        prune_backups(folder, self._keep)
        log.info("backed up the store to %s", dest)
        return dest


def restore_backup(
    db_path: Path, key: bytes, backup: Path | None = None, *, key_source: str, now: datetime
) -> RestoreResult:
    """Replace the store at ``db_path`` with ``backup`` (default: the newest backup).

    Raises StoreUnavailable when there is no backup or it does not open with ``key`` or check out,
    and StoreBusy when another program has the store open; in each case the store is left as it was.
    """
    source = backup or newest_backup(backups_dir(db_path))
    if source is None:
        raise StoreUnavailable(f"There are no backups in {backups_dir(db_path)} to restore.")
    verify_store(source, key, key_source=key_source)
    staged = db_path.with_name(f".{db_path.name}.restoring")
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, staged)
        with staged.open("rb+") as f:
            os.fsync(f.fileno())
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise StoreUnavailable(f"Cannot copy the backup {source} beside the store: {exc.strerror}.") from None
    replaced: Path | None = None
    try:
        with exclusive_store(db_path, key, key_source=key_source):
            pass  # checkpointed, and nobody else has it open
        if db_path.exists():
            replaced = db_path.with_name(f"{db_path.name}.replaced-{now.astimezone(UTC):{_STAMP}}")
            os.replace(db_path, replaced)
            wal = db_path.with_name(db_path.name + "-wal")
            if wal.exists() and wal.stat().st_size > 0:
                # Checkpointed above, so this is only kept beside the old file for safety.
                os.replace(wal, replaced.with_name(replaced.name + "-wal"))
            for stale in (wal, db_path.with_name(db_path.name + "-shm")):
                stale.unlink(missing_ok=True)
        os.replace(staged, db_path)
        sync_folder(db_path.parent)
    except OSError as exc:
        raise StoreUnavailable(f"Restoring {source} over {db_path} failed: {exc.strerror}.") from None
    finally:
        staged.unlink(missing_ok=True)
    return RestoreResult(source, replaced)
