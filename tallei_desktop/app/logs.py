"""Logging to a rotating file in the user log folder, for processes nobody watches the stderr of."""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from tallei_desktop.config import Settings

__all__ = ["LOG_BACKUPS", "LOG_BYTES", "log_to_file"]

log = logging.getLogger(__name__)

LOG_BYTES = 1024 * 1024
LOG_BACKUPS = 3


def log_to_file(settings: Settings, file_name: str) -> Path | None:
    """Also log to ``file_name`` in ``settings.log_dir``, keeping stderr exactly as verbose as it was.

    The file gets INFO and above (more when the root logger is set lower); several processes may
    share one file, so each line carries its process id. Returns the file's path, or ``None`` when
    it cannot be written (logged as a warning; logging then goes to stderr only).
    """
    root = logging.getLogger()
    path = settings.log_dir / file_name
    try:
        settings.log_dir.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8")
    except OSError as exc:
        log.warning(
            "Cannot write a log file in %s (%s); logging to stderr only.", settings.log_dir, exc.strerror
        )
        return None
    was = root.level or logging.WARNING
    for existing in root.handlers:
        if existing.level == logging.NOTSET:
            existing.setLevel(was)
    handler.setLevel(min(was, logging.INFO))
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(min(was, logging.INFO))
    return path
