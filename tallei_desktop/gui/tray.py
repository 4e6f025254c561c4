"""The tray icon and its menu: the main action first, Quit last."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from tallei_desktop.core import Conflict
from tallei_desktop.gui.icons import TrayState, tray_icon
from tallei_desktop.gui.main_window import PageName

__all__ = ["Tray"]

_NOTIFY_MS = 10_000


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

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(self)
        self.menu = QMenu()
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
        self._problem: str | None = None
        self._last_conflict: str | None = None
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
            self.icon.showMessage("Tallei", problem, QSystemTrayIcon.MessageIcon.Warning, _NOTIFY_MS)
        self._problem = problem
        self._refresh()

    def notify_conflict(self, conflict: Conflict) -> None:
        a, b = conflict.memory_a, conflict.memory_b
        self._last_conflict = conflict.id
        self.icon.showMessage(
            "Your assistants disagree",
            f"{a.platform}: “{a.content[:80]}”\n{b.platform}: “{b.content[:80]}”\nClick to settle it.",
            QSystemTrayIcon.MessageIcon.Information,
            _NOTIFY_MS,
        )
        self.notified.emit(conflict.id)

    def _refresh(self) -> None:
        n = self._conflicts
        self.conflicts_action.setText(f"&Conflicts ({n})")
        self.conflicts_action.setVisible(n > 0)
        self.pause_action.setText("&Resume HTTP endpoint" if self._paused else "&Pause HTTP endpoint")
        state = TrayState.CONFLICTS if n else TrayState.PAUSED if self._paused else TrayState.NORMAL
        self.icon.setIcon(tray_icon(state))
        lines = ["Tallei"]
        if n:
            lines.append(f"{n} conflict{'s' if n != 1 else ''} waiting")
        if self._paused:
            lines.append("HTTP endpoint paused")
        if self._problem:
            lines.append(self._problem)
        self.icon.setToolTip("\n".join(lines))

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.open_requested.emit()

    def _on_message_clicked(self) -> None:
        if self._last_conflict is not None:
            self.conflict_clicked.emit(self._last_conflict)
        else:
            self.open_requested.emit()
