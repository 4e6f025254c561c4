"""The Assistants page's "In your browser" box: each browser found, whether Tallei's native host is
registered with it, and a button that registers it (off the Qt thread)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QPushButton, QWidget

from tallei_desktop.app.browsers import BrowserResult, BrowserState, browser_states, connect_browser
from tallei_desktop.config import Settings
from tallei_desktop.gui.ops import Ops

__all__ = ["BrowsersBox"]


class BrowsersBox(QGroupBox):
    """``states`` says which browsers are here and connected; ``connect`` registers the host with one."""

    #: The browsers were looked at and the rows rebuilt.
    loaded = Signal()
    #: The host was registered with a browser (or found current); the result says where.
    connected = Signal(object)

    def __init__(
        self,
        ops: Ops,
        *,
        settings: Settings | None = None,
        states: Callable[[], list[BrowserState]] | None = None,
        connect: Callable[[str], BrowserResult] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("In your browser", parent)
        self._ops = ops
        self._states = states or browser_states
        self._connect = connect or (lambda browser: connect_browser(settings, browser))
        self.setAccessibleName("Tallei in your browser")
        self._grid = QGridLayout(self)
        self._grid.setColumnStretch(1, 1)
        # A tooltip rather than a wrapped line: the page must fit the window's smallest size.
        self.setToolTip(
            "Tallei's browser extension brings your memories into ChatGPT, Claude and Gemini on the web. "
            "Connect a browser so the extension can reach Tallei on this computer."
        )
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.setAccessibleName("What connecting a browser changed")
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        #: Per browser shown: its state label and its Connect button.
        self.states: dict[str, QLabel] = {}
        self.buttons: dict[str, QPushButton] = {}
        self._rows: list[QWidget] = []

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.reload()

    def reload(self) -> None:
        self._ops.run(self._states, self._show)

    def _show(self, found: list[BrowserState]) -> None:
        for widget in self._rows:
            self._grid.removeWidget(widget)
            widget.deleteLater()
        self._rows.clear()
        self.states.clear()
        self.buttons.clear()
        shown = [s for s in found if s.installed or s.connected]
        line = 1
        for state in shown:
            title = QLabel(f"<b>{state.title}</b>", self)
            label = QLabel("connected" if state.connected else "not connected", self)
            button = QPushButton(f"Connect {state.title}", self)
            button.setAccessibleName(f"Connect {state.title}")
            button.clicked.connect(lambda _checked=False, name=state.browser: self.connect_browser(name))
            for column, widget in enumerate((title, label, button)):
                self._grid.addWidget(widget, line, column)
                self._rows.append(widget)
            self.states[state.browser] = label
            self.buttons[state.browser] = button
            line += 1
        if not shown:
            none = QLabel("No Chrome, Chromium, Edge, Brave or Firefox was found on this computer.", self)
            none.setWordWrap(True)
            self._grid.addWidget(none, line, 0, 1, 3)
            self._rows.append(none)
            line += 1
        self._grid.addWidget(self.result, line, 0, 1, 3)
        self.loaded.emit()

    def connect_browser(self, name: str) -> None:
        """Register the host with ``name`` (off the Qt thread), then say what changed."""
        button = self.buttons.get(name)
        if button is not None:
            button.setEnabled(False)

        def done(result: BrowserResult) -> None:
            self.result.setText(result.message)
            self.connected.emit(result)
            self.reload()

        def failed(error: Exception) -> None:
            self._ops.report(error)
            self.reload()

        self._ops.run(lambda: self._connect(name), done, failed)
