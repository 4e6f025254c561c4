"""The tray icon and its menu: the main action first, Quit last.

Conflict notifications: the first one shows at once. Conflicts that arrive while its balloon is
still up are told together in one balloon ("3 new conflicts …"), which replaces the first no
sooner than ``MIN_SHOW_S`` after it appeared, so no balloon flashes by. A click on the balloon, or
on the tray icon soon after one (some desktops only dismiss a balloon when its text is clicked),
opens the conflict it announced last.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from tallei_desktop.core import Conflict
from tallei_desktop.gui.icons import TrayState, tray_icon
from tallei_desktop.gui.main_window import PageName

__all__ = ["Tray"]

_NOTIFY_MS = 10_000
#: How long a balloon shows before the desktop takes it down.
NOTIFY_S = _NOTIFY_MS / 1000
#: A balloon stays at least this long before one telling more conflicts replaces it.
MIN_SHOW_S = 4.0
#: A click on the tray icon this soon after a conflict balloon appeared opens that conflict.
CLICK_GRACE_S = NOTIFY_S + 5.0
#: How many conflicts a combined balloon names before "and N more".
_NAMED = 3


class Tray(QObject):
    open_requested = Signal()
    page_requested = Signal(object)  # PageName
    pause_toggled = Signal()
    copy_requested = Signal()
    quit_requested = Signal()
    #: The person clicked the notification about this conflict.
    conflict_clicked = Signal(str)
    #: A notification went out for this conflict.
    notified = Signal(str)
    #: (title, text) of each balloon, as the desktop is asked to show it.
    balloon_shown = Signal(str, str)

    def __init__(self, parent: QObject | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self._clock = clock
        self.icon = QSystemTrayIcon(self)
        self.menu = QMenu()
        self.menu.setToolTipsVisible(True)
        self.open_action = self._add("&Open Tallei", self.open_requested.emit)
        self.conflicts_action = self._add("&Conflicts", lambda: self.page_requested.emit(PageName.CONFLICTS))
        self.conflicts_action.setVisible(False)
        self._add("&Recall preview", lambda: self.page_requested.emit(PageName.RECALL))
        self._add("&Assistants", lambda: self.page_requested.emit(PageName.ASSISTANTS))
        self.menu.addSeparator()
        self.pause_action = self._add("&Pause HTTP endpoint", self.pause_toggled.emit)
        self.copy_action = self._add("Copy HTTP address and &token", self.copy_requested.emit)
        self.menu.addSeparator()
        self._add("&Settings", lambda: self.page_requested.emit(PageName.SETTINGS))
        self.menu.addSeparator()
        self._add("&Quit", self.quit_requested.emit)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_activated)
        self.icon.messageClicked.connect(self._on_message_clicked)
        self._conflicts = 0
        self._paused = False
        self._serving = True
        self._endpoint_problem: str | None = None
        self._problem: str | None = None
        #: The conflicts the balloon on screen tells of (or is about to), oldest first.
        self._batch: list[Conflict] = []
        #: The conflict the last balloon announced last; None after a balloon about something else.
        self._balloon_conflict: str | None = None
        self._balloon_at = -math.inf
        #: The balloon on screen no longer tells every conflict in the batch.
        self._behind = False
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.timeout.connect(self.flush_notifications)
        self._refresh()

    def _add(self, text: str, slot: object) -> QAction:
        action = self.menu.addAction(text)
        action.triggered.connect(slot)
        return action

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def set_conflicts(self, count: int) -> None:
        self._conflicts = count
        self._refresh()

    def set_paused(self, paused: bool) -> None:
        self._paused = paused
        self._refresh()

    def set_problem(self, problem: str | None) -> None:
        """A lasting problem (the port is taken), shown in the tooltip and once as a message."""
        if problem and problem != self._problem:
            self._balloon("Tallei", problem, QSystemTrayIcon.MessageIcon.Warning)
            # That balloon took the place of any conflict balloon: a click on it opens the window.
            self._balloon_conflict = None
            self._batch = []
            self._behind = False
            self._flush_timer.stop()
        self._problem = problem
        self._refresh()

    def set_endpoint_state(self, serving: bool, problem: str | None = None) -> None:
        """Whether the HTTP endpoint answers. When it does not (and is not paused on purpose), the
        menu's pause and copy items are disabled and say why (``problem``, else the lasting problem
        given to :meth:`set_problem`)."""
        self._serving = serving
        self._endpoint_problem = problem
        self._refresh()

    def notify_conflict(self, conflict: Conflict) -> None:
        """Announce a new conflict: at once, or together with the ones announced a moment ago."""
        self.notified.emit(conflict.id)
        now = self._clock()
        showing = self._balloon_conflict is not None and now - self._balloon_at < NOTIFY_S
        if not showing:
            self._batch = [conflict]
            self._show_batch(now)
            return
        self._batch.append(conflict)
        self._behind = True
        wait = MIN_SHOW_S - (now - self._balloon_at)
        if wait > 0:
            if not self._flush_timer.isActive():
                self._flush_timer.start(math.ceil(wait * 1000))
        else:
            self._show_batch(now)

    def flush_notifications(self) -> None:
        """Show the balloon telling every conflict announced since the one on screen appeared."""
        self._flush_timer.stop()
        if self._behind and self._batch:
            self._show_batch(self._clock())

    def _show_batch(self, now: float) -> None:
        batch = self._batch
        if len(batch) == 1:
            a, b = batch[0].memory_a, batch[0].memory_b
            title = "Your assistants disagree"
            body = f"{a.platform}: “{_clip(a.content, 80)}”\n{b.platform}: “{_clip(b.content, 80)}”\nClick to settle it."
        else:
            title = f"{len(batch)} new conflicts between your assistants"
            lines = [
                f"{c.memory_a.platform} and {c.memory_b.platform}: “{_clip(c.memory_a.content, 40)}”"
                for c in batch[-_NAMED:]
            ]
            if len(batch) > _NAMED:
                lines.append(f"and {len(batch) - _NAMED} more")
            body = "\n".join([*lines, "Click to settle them."])
        self._balloon(title, body, QSystemTrayIcon.MessageIcon.Information)
        self._balloon_conflict = batch[-1].id
        self._balloon_at = now
        self._behind = False

    def greet(self, text: str) -> None:
        """A one-off information balloon, such as where Tallei went when its window stays closed."""
        self._balloon("Tallei", text, QSystemTrayIcon.MessageIcon.Information)

    def _balloon(self, title: str, text: str, kind: QSystemTrayIcon.MessageIcon) -> None:
        self.icon.showMessage(title, text, kind, _NOTIFY_MS)
        self.balloon_shown.emit(title, text)

    def _refresh(self) -> None:
        n = self._conflicts
        self.conflicts_action.setText(f"&Conflicts ({n})")
        self.conflicts_action.setVisible(n > 0)
        down = not self._serving and not self._paused
        why = self._endpoint_problem or self._problem or "The HTTP endpoint is not serving."
        if down:
            self.pause_action.setText("HTTP endpoint not serving")
        else:
            self.pause_action.setText("&Resume HTTP endpoint" if self._paused else "&Pause HTTP endpoint")
        for action in (self.pause_action, self.copy_action):
            action.setEnabled(not down)
            action.setToolTip(why if down else action.text().replace("&", ""))
        state = TrayState.CONFLICTS if n else TrayState.PAUSED if self._paused else TrayState.NORMAL
        self.icon.setIcon(tray_icon(state, count=n))
        lines = [f"Tallei — {n} conflict{'s wait' if n != 1 else ' waits'} for you" if n else "Tallei"]
        if self._paused:
            lines.append("HTTP endpoint paused")
        if self._problem:
            lines.append(self._problem)
        self.icon.setToolTip("\n".join(lines))

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason not in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            return
        recent = self._clock() - self._balloon_at < CLICK_GRACE_S
        if self._balloon_conflict is not None and recent:
            # Where a click on the balloon only dismissed it, the person clicks the icon next.
            self._balloon_at = -math.inf  # once: later clicks open the window as usual
            self.conflict_clicked.emit(self._balloon_conflict)
        else:
            self.open_requested.emit()

    def _on_message_clicked(self) -> None:
        if self._balloon_conflict is not None:
            self.conflict_clicked.emit(self._balloon_conflict)
        else:
            self.open_requested.emit()


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
