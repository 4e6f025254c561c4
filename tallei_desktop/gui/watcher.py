"""Notices when any process changes the store, and when a conflict appears.

A timer asks the core, off the Qt thread, for its change token (cheap); when it moves, views reload
and the open conflicts are read again. Each conflict is announced once, whichever process flagged it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from tallei_desktop.core.models import Conflict
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops

__all__ = ["POLL_MS", "StoreWatcher"]

#: Half a second keeps a conflict's notification well inside two seconds of its flagging.
POLL_MS = 500


class StoreWatcher(QObject):
    #: The store changed (this process or another); views reload what they show.
    changed = Signal()
    #: A conflict opened since the watcher started; emitted once per conflict.
    conflict_opened = Signal(object)
    #: The open conflicts, whenever they may have changed.
    conflicts = Signal(list)

    def __init__(
        self, backend: Backend, ops: Ops, parent: QObject | None = None, *, poll_ms: int = POLL_MS
    ) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        self._token: int | None = None
        self._known: set[str] | None = None
        self._busy = False
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        """Read the current state (announcing nothing already open) and begin polling."""
        self._timer.start()
        self.check()

    def stop(self) -> None:
        self._timer.stop()

    def check(self) -> None:
        """Look once now (skipped while the previous look is still running)."""
        if self._busy:
            return
        self._busy = True
        self._ops.run(self._look, self._looked, self._failed)

    def _look(self) -> tuple[int, list[Conflict] | None]:
        token = self._backend.change_token()
        if token == self._token:
            return token, None
        return token, self._backend.open_conflicts()

    def _looked(self, result: tuple[int, list[Conflict] | None]) -> None:
        self._busy = False
        token, open_now = result
        if open_now is None:
            return
        first = self._token is None
        self._token = token
        if self._known is None:
            self._known = {c.id for c in open_now}
        else:
            for conflict in reversed(open_now):  # oldest first
                if conflict.id not in self._known:
                    self._known.add(conflict.id)
                    self.conflict_opened.emit(conflict)
        self.conflicts.emit(open_now)
        if not first:
            self.changed.emit()

    def _failed(self, error: Exception) -> None:
        self._busy = False
        self._ops.report(error)
