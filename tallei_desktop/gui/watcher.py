"""Notices when any process changes the store, and when a conflict appears.

A timer asks the core's change feed, off the Qt thread, whether anything was committed (one cheap
``PRAGMA``) and, if so, what: views reload, and each conflict flagged since is announced once,
whichever process flagged it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from tallei_desktop.gui.backend import Backend, Changes
from tallei_desktop.gui.ops import Ops

__all__ = ["POLL_MS", "StoreWatcher"]

#: Half a second keeps a conflict's notification well inside two seconds of its flagging.
POLL_MS = 500


class StoreWatcher(QObject):
    #: The store changed (this process or another); views reload what they show.
    changed = Signal()
    #: A conflict opened since the watcher started and is still open; emitted once per conflict.
    conflict_opened = Signal(object)
    #: The open conflicts, at the start and whenever the store changed.
    conflicts = Signal(list)

    def __init__(
        self, backend: Backend, ops: Ops, parent: QObject | None = None, *, poll_ms: int = POLL_MS
    ) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        self._seq: int | None = None
        self._announced: set[str] = set()
        self._busy = False
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        """Read the open conflicts (announcing none of them) and begin following the feed."""
        self._timer.start()
        self.check()

    def stop(self) -> None:
        self._timer.stop()

    def check(self) -> None:
        """Look once now (skipped while the previous look is still running)."""
        if self._busy:
            return
        self._busy = True
        seq = self._seq
        self._ops.run(lambda: self._backend.follow(seq), self._looked, self._failed)

    def _looked(self, changes: Changes) -> None:
        self._busy = False
        first = self._seq is None
        self._seq = changes.seq
        if changes.conflicts is None:
            return
        still_open = {c.id: c for c in changes.conflicts}
        for conflict_id in changes.opened:
            if conflict_id in still_open and conflict_id not in self._announced:
                self._announced.add(conflict_id)
                self.conflict_opened.emit(still_open[conflict_id])
        self.conflicts.emit(list(changes.conflicts))
        if changes.changed and not first:
            self.changed.emit()

    def _failed(self, error: Exception) -> None:
        self._busy = False
        self._ops.report(error)
