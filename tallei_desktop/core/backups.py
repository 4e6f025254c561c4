"""Backups of the store: where they live, how they are named and pruned, and restoring one.

Backups are whole-store copies, still encrypted with the store's key, named
``<data_dir>/backups/tallei-YYYYmmdd-HHMMSS.db`` (UTC). The newest ``keep`` are kept. A restore
first checks that the backup opens with the key and that no other program has the store open, then
moves the current file aside as ``tallei.db.replaced-YYYYmmdd-HHMMSS`` and puts the backup in its place.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tallei_desktop.core.errors import StoreUnavailable
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

__all__ = [
    "AUTO_BACKUP_EVERY",
    "DEFAULT_KEEP",
    "BackupInfo",
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

DEFAULT_KEEP = 7
AUTO_BACKUP_EVERY = timedelta(days=1)
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
