"""Assistants: who has used this store (with a pause switch each), a Connect button per client, and
ChatGPT's address and token."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.app.clients import ConnectResult
from tallei_desktop.app.key_agent import connect_note
from tallei_desktop.config import Settings
from tallei_desktop.core import PlatformUsage
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.models import short_time
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.browsers import BrowsersBox

__all__ = ["CLIENT_TITLES", "AssistantsPage"]

#: The clients that launch ``tallei-desktop mcp`` themselves, as ``connect`` names them.
CLIENT_TITLES = {"claude": "Claude Desktop", "cursor": "Cursor", "gemini": "Gemini CLI", "vscode": "VS Code"}
PAUSE = "Pause access"
PAUSED = "Paused — click to resume"


class AssistantsPage(QWidget):
    loaded = Signal()
    #: A client's settings were written (or found current); the result says where and what.
    connected = Signal(object)
    #: An assistant was paused (True) or resumed (False) in the store.
    access_changed = Signal(str, bool)

    def __init__(
        self,
        backend: Backend,
        ops: Ops,
        *,
        connect: Callable[[str], ConnectResult] | None = None,
        detect: Callable[[], list[str]] | None = None,
        settings: Settings | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        self._connect = connect
        self._detect = detect
        self._settings = settings  # for what a connected assistant needs to know about the key
        self._token = ""
        self.usage = QTreeWidget(self)
        self.usage.setAccessibleName("Assistants that used Tallei")
        self.usage.setHeaderLabels(["Assistant", "Memories", "Last seen", "Access"])
        self.usage.setRootIsDecorated(False)
        # The table fits its page at the window's smallest size: the name takes what is left.
        header = self.usage.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.usage.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.empty = QLabel(
            "No assistant has saved a memory yet. Connect one below; once it saves something, it is "
            "listed here with a switch to pause it.",
            self,
        )
        self.empty.setWordWrap(True)
        self.empty.setAccessibleName("No assistants yet")
        self.empty.hide()
        #: Per platform shown: its "Pause access" switch.
        self.pause_boxes: dict[str, QCheckBox] = {}
        self.access_note = QLabel(
            "A paused assistant keeps its memories, but its requests to Tallei are refused until you "
            "resume it.",
            self,
        )
        self.access_note.setWordWrap(True)

        chatgpt = QGroupBox("ChatGPT and other HTTP clients", self)
        steps = QLabel(
            "In ChatGPT, open Settings → Connectors → Create, choose “MCP server”, give it the address "
            "below and, for authentication, the bearer token. Tallei answers only on this computer.",
            chatgpt,
        )
        steps.setWordWrap(True)
        self.address = QLineEdit(chatgpt)
        self.address.setReadOnly(True)
        self.address.setAccessibleName("HTTP address")
        copy_address = QPushButton("Copy &address", chatgpt)
        copy_address.setAccessibleName("Copy the HTTP address")
        copy_address.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.address.text()))
        self.copy_token = QPushButton("Copy &token", chatgpt)
        self.copy_token.setAccessibleName("Copy the bearer token")
        self.copy_token.clicked.connect(lambda: QGuiApplication.clipboard().setText(self._token))
        self.endpoint_state = QLabel(chatgpt)
        self.endpoint_state.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.address, 1)
        row.addWidget(copy_address)
        row.addWidget(self.copy_token)
        box = QVBoxLayout(chatgpt)
        box.addWidget(steps)
        box.addLayout(row)
        box.addWidget(self.endpoint_state)

        clients = QGroupBox("Assistants that start Tallei themselves", self)
        grid = QGridLayout(clients)
        self.connect_buttons: dict[str, QPushButton] = {}
        self.installed: dict[str, QLabel] = {}
        for line, (name, title) in enumerate(CLIENT_TITLES.items()):
            grid.addWidget(QLabel(f"<b>{title}</b>", clients), line, 0)
            found = QLabel("", clients)
            self.installed[name] = found
            grid.addWidget(found, line, 1)
            button = QPushButton(f"Connect {title}", clients)
            button.setAccessibleName(f"Connect {title}")
            button.setEnabled(connect is not None)
            button.clicked.connect(lambda _checked=False, n=name: self.connect_client(n))
            self.connect_buttons[name] = button
            grid.addWidget(button, line, 2)
        grid.setColumnStretch(1, 1)
        self.connect_result = QLabel(clients)
        self.connect_result.setWordWrap(True)
        self.connect_result.setAccessibleName("What connecting changed")
        self.connect_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.connect_result, len(CLIENT_TITLES), 0, 1, 3)

        layout = QVBoxLayout(self)
        heading = QLabel("<b>Assistants that have used your memory</b>", self)
        heading.setBuddy(self.usage)
        layout.addWidget(heading)
        layout.addWidget(self.usage, 1)
        layout.addWidget(self.empty)
        layout.addWidget(self.access_note)
        layout.addWidget(clients)
        layout.addWidget(BrowsersBox(ops, settings=settings, parent=self))
        layout.addWidget(chatgpt)

    def set_endpoint(self, url: str, token: str, state: str) -> None:
        self.address.setText(url)
        self._token = token
        self.copy_token.setEnabled(bool(token))
        self.endpoint_state.setText(state)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.reload()

    def reload(self) -> None:
        self._ops.run(self._backend.assistants, self._show)
        if self._detect is not None:
            self._ops.run(self._detect, self._show_installed)

    def _show_installed(self, found: list[str]) -> None:
        for name, label in self.installed.items():
            label.setText("installed on this computer" if name in found else "")

    def connect_client(self, name: str) -> None:
        """Write Tallei into ``name``'s settings (off the Qt thread) and say what changed."""
        connect, settings = self._connect, self._settings
        if connect is None:
            return

        def work() -> tuple[ConnectResult, str | None]:
            # What the assistant will need to open a passphrase-guarded store, said at once.
            return connect(name), connect_note(settings) if settings is not None else None

        def done(answer: tuple[ConnectResult, str | None]) -> None:
            result, note = answer
            self.connect_result.setText(f"{result.message}\n{note}" if note else result.message)
            self.connected.emit(result)

        def failed(error: Exception) -> None:
            self.connect_result.setText(f"{CLIENT_TITLES[name]} was not connected: {error}")
            self._ops.report(error)

        self._ops.run(work, done, failed)

    def set_paused(self, platform: str, paused: bool) -> None:
        """Pause or resume ``platform`` in the store (off the Qt thread); every process obeys at once."""

        def done(_: None) -> None:
            self.access_changed.emit(platform, paused)
            self.reload()

        def failed(error: Exception) -> None:
            self._ops.report(error)
            self.reload()  # put the switch back where the store says it is

        self._ops.run(lambda: self._backend.set_paused(platform, paused), done, failed)

    def _show(self, found: tuple[list[PlatformUsage], frozenset[str]]) -> None:
        usage, paused = found
        self.usage.clear()
        self.pause_boxes.clear()
        rows = [(u.platform, f"{u.memories:,}", short_time(u.last_seen)) for u in usage]
        # A paused platform whose memories are all gone must still be resumable.
        rows += [(p, "0", "") for p in paused - {u.platform for u in usage}]
        # By name, so a row never moves under the pointer as assistants work.
        rows.sort(key=lambda row: row[0].casefold())
        greyed = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        for platform, memories, seen in rows:
            item = QTreeWidgetItem(self.usage, [platform, memories, seen])
            is_paused = platform in paused
            box = QCheckBox(PAUSED if is_paused else PAUSE, self.usage)
            box.setAccessibleName(f"Pause access for {platform}")
            box.setChecked(is_paused)
            box.toggled.connect(lambda on, p=platform: self.set_paused(p, on))
            self.usage.setItemWidget(item, 3, box)
            self.pause_boxes[platform] = box
            if is_paused:
                item.setToolTip(0, f"{platform} is paused: its requests to Tallei are refused.")
                for column in range(3):
                    item.setForeground(column, greyed)
        self.usage.setVisible(bool(rows))
        self.empty.setVisible(not rows)
        self.loaded.emit()
