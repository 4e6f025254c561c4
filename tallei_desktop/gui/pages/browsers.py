"""The Assistants page's "In your browser" box: each browser found, whether Tallei's native host is
registered with it, and a button that registers it (off the Qt thread)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

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
        # A tooltip rather than a wrapped line: the page must fit the window's smallest size.
        self.setToolTip(
            "Tallei's browser extension brings your memories into ChatGPT, Claude and Gemini on the web. "
            "Connect a browser so the extension can reach Tallei on this computer."
        )
        # One row of browsers, present from the start, so the box never grows under the rest of the page.
        self._row = QHBoxLayout()
        self.looking = QLabel("Looking for browsers…", self)
        self.looking.setMinimumHeight(QPushButton("Connect").sizeHint().height())
        self._row.addWidget(self.looking)
        self._row.addStretch(1)
        self.result = QLabel(self)
        self.result.setAccessibleName("What connecting a browser changed")
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box = QVBoxLayout(self)
        box.addLayout(self._row)
        box.addWidget(self.result)
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
            self._row.removeWidget(widget)
            widget.deleteLater()
        self._rows.clear()
        self.states.clear()
        self.buttons.clear()
        shown = [s for s in found if s.installed or s.connected]
        self.looking.setText(
            "" if shown else "No Chrome, Chromium, Edge, Brave or Firefox was found on this computer."
        )
        self.looking.setVisible(not shown)
        for place, state in enumerate(shown):
            label = QLabel(
                f"<b>{state.title}</b>: {'connected' if state.connected else 'not connected'}", self
            )
            button = QPushButton("Connect", self)
            button.setAccessibleName(f"Connect {state.title}")
            button.clicked.connect(lambda _checked=False, name=state.browser: self.connect_browser(name))
            self._row.insertWidget(2 * place, label)
            self._row.insertWidget(2 * place + 1, button)
            self._rows += [label, button]
            self.states[state.browser] = label
            self.buttons[state.browser] = button
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
