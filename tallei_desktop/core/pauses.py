"""Pausing assistant platforms: while one is paused, its tool calls are refused by every process on
the store.

:class:`Pauses` keeps one service's view of the paused set; the rows themselves are in
``store/pause_rows.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime

from tallei_desktop.core import validate as v
from tallei_desktop.core.errors import InvalidInput
from tallei_desktop.core.models import APP_PLATFORM
from tallei_desktop.core.store import pause_rows
from tallei_desktop.core.store.database import Database

__all__ = ["Pauses"]


class Pauses:
    """The paused platforms of one store, as set by any process on it.

    Asked on every tool call, so the set is cached with the ``PRAGMA data_version`` it was read at
    and read again only after some connection committed: one pragma, no table read, while nothing
    changes.
    """

    def __init__(self, db: Database, clock: Callable[[], datetime]) -> None:
        self._db = db
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: tuple[int, frozenset[str]] | None = None

    def paused(self) -> frozenset[str]:
        """The platforms whose tool calls are refused."""
        with self._lock:
            # The version is taken before the read: a commit in between makes the next call read again.
            version = self._db.data_version()
            if self._cached is None or self._cached[0] != version:
                with self._db.read() as conn:
                    self._cached = (version, pause_rows.paused_platforms(conn))
            return self._cached[1]

    def set(self, platform: str, paused: bool) -> None:
        """Pause (or resume) ``platform``. Idempotent; each real change is an event in the feed."""
        if type(paused) is not bool:
            raise InvalidInput("paused must be true or false.")
        if not isinstance(platform, str) or not platform.strip():
            raise InvalidInput("Name the assistant platform to pause, such as 'claude' or 'chatgpt'.")
        name = v.clean_platform(platform)
        if name == APP_PLATFORM:
            raise InvalidInput(
                f"'{APP_PLATFORM}' stands for what you do in Tallei, not an assistant; it cannot be paused."
            )
        with self._db.write() as conn:
            pause_rows.set_paused(conn, name, paused, self._clock().timestamp())
