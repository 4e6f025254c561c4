"""Assistants: who has used this store (with a pause switch each), a Connect button per client and
one for every client found here, how ChatGPT can reach Tallei, and the HTTP endpoint for other
programs on this computer."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.app import clients
from tallei_desktop.app.clients import ConnectResult
from tallei_desktop.app.key_agent import connect_note
from tallei_desktop.config import Settings
from tallei_desktop.core import KnownError, PlatformUsage
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.models import short_time
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.browsers import BrowsersBox

__all__ = ["CLIENT_TITLES", "AssistantsPage"]

#: The clients that launch ``tallei-desktop mcp`` themselves, as ``connect`` names them.
CLIENT_TITLES = clients.CLIENT_TITLES
#: What a row adds to a client's name, where one file serves more than one program.
_ALSO = {"codex": "Codex (and the ChatGPT desktop app)", "gemini": "Gemini CLI (API key)"}
#: Clients shown side by side in each row of the Connect box.
_PER_ROW = 2
PAUSE = "Pause access"
PAUSED = "Paused — click to resume"


class AssistantsPage(QWidget):
    loaded = Signal()
    #: A client's settings were written (or found current); the result says where and what.
    connected = Signal(object)
    #: "Connect all found" finished: the clients connected, by name.
    connected_all = Signal(list)
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

        clients_box = QGroupBox("Assistants that start Tallei themselves", self)
        grid = QGridLayout(clients_box)
        self.connect_buttons: dict[str, QPushButton] = {}
        self.installed: dict[str, QLabel] = {}
        for index, (name, title) in enumerate(CLIENT_TITLES.items()):
            line, column = divmod(index, _PER_ROW)
            column *= 3
            grid.addWidget(QLabel(f"<b>{_ALSO.get(name, title)}</b>", clients_box), line, column)
            found = QLabel("", clients_box)
            self.installed[name] = found
            grid.addWidget(found, line, column + 1)
            button = QPushButton("Connect", clients_box)
            button.setAccessibleName(f"Connect {title}")
            button.setEnabled(connect is not None)
            button.clicked.connect(lambda _checked=False, n=name: self.connect_client(n))
            self.connect_buttons[name] = button
            grid.addWidget(button, line, column + 2)
        rows = -(-len(CLIENT_TITLES) // _PER_ROW)
        for column in range(_PER_ROW):
            grid.setColumnStretch(column * 3 + 1, 1)
        self.connect_all_button = QPushButton("Connect &all found here", clients_box)
        self.connect_all_button.setAccessibleName("Connect every assistant found on this computer")
        self.connect_all_button.setEnabled(False)  # until something is found
        self.connect_all_button.clicked.connect(self.connect_all)
        grid.addWidget(self.connect_all_button, rows, 0, 1, 3 * _PER_ROW, Qt.AlignmentFlag.AlignLeft)
        self.connect_result = QLabel(clients_box)
        self.connect_result.setWordWrap(True)
        self.connect_result.setAccessibleName("What connecting changed")
        self.connect_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.connect_result, rows + 1, 0, 1, 3 * _PER_ROW)
        self._found: list[str] = []

        chatgpt = QGroupBox("ChatGPT", self)
        self.chatgpt_steps = QLabel(
            "<p><b>ChatGPT desktop app</b> (macOS, Windows), local threads: it reads Codex's settings, so "
            "<i>Connect</i> Codex above and restart the app.</p>"
            "<p><b>ChatGPT on the web</b>: its apps run on OpenAI's servers and cannot start a program or "
            "reach this computer. The one way that keeps Tallei here is OpenAI's Secure MCP Tunnel: the "
            "tunnel-client program connects out to OpenAI (nothing listens on this computer) and starts "
            "Tallei for ChatGPT. You need an OpenAI Platform tunnel id and a restricted runtime key (Tunnels: "
            "Read and Use) in CONTROL_PLANE_API_KEY. Keep this command running, with your tunnel id in it; "
            "then in ChatGPT, under Settings → Apps → Advanced → Developer mode, create an app with "
            "Connection: Tunnel and the same tunnel id.</p>",
            chatgpt,
        )
        self.chatgpt_steps.setWordWrap(True)
        self.tunnel_command = QLineEdit(clients.tunnel_command(), chatgpt)
        self.tunnel_command.setReadOnly(True)
        self.tunnel_command.setAccessibleName("The tunnel-client command line")
        self.tunnel_command.setCursorPosition(0)
        copy_command = QPushButton("Copy &command", chatgpt)
        copy_command.setAccessibleName("Copy the tunnel-client command line")
        copy_command.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.tunnel_command.text()))
        self.chatgpt_caution = QLabel(
            "Do not publish Tallei's endpoint through a public tunnel: ChatGPT offers only OAuth or no "
            "authentication, so anyone who found the address could read and change your memories. For "
            "everyone else, Tallei's browser extension works inside chatgpt.com.",
            chatgpt,
        )
        self.chatgpt_caution.setWordWrap(True)
        command_row = QHBoxLayout()
        command_row.addWidget(self.tunnel_command, 1)
        command_row.addWidget(copy_command)
        chatgpt_layout = QVBoxLayout(chatgpt)
        chatgpt_layout.addWidget(self.chatgpt_steps)
        chatgpt_layout.addLayout(command_row)
        chatgpt_layout.addWidget(self.chatgpt_caution)

        http = QGroupBox("Other programs on this computer (HTTP)", self)
        steps = QLabel(
            "Programs on this computer that speak MCP over HTTP can use this address with the bearer token. "
            "Tallei answers only on this computer.",
            http,
        )
        steps.setWordWrap(True)
        self.address = QLineEdit(http)
        self.address.setReadOnly(True)
        self.address.setAccessibleName("HTTP address")
        copy_address = QPushButton("Copy a&ddress", http)
        copy_address.setAccessibleName("Copy the HTTP address")
        copy_address.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.address.text()))
        self.copy_token = QPushButton("Copy &token", http)
        self.copy_token.setAccessibleName("Copy the bearer token")
        self.copy_token.clicked.connect(lambda: QGuiApplication.clipboard().setText(self._token))
        self.endpoint_state = QLabel(http)
        self.endpoint_state.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.address, 1)
        row.addWidget(copy_address)
        row.addWidget(self.copy_token)
        box = QVBoxLayout(http)
        box.addWidget(steps)
        box.addLayout(row)
        box.addWidget(self.endpoint_state)

        page = QVBoxLayout(self)
        heading = QLabel("<b>Assistants that have used your memory</b>", self)
        heading.setBuddy(self.usage)
        page.addWidget(heading)
        page.addWidget(self.usage, 1)
        page.addWidget(self.empty)
        page.addWidget(self.access_note)
        # The ways to connect scroll below the table, so the table keeps its room at small sizes.
        lower = QWidget(self)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(lower)
        page.addWidget(scroll, 1)
        layout = QVBoxLayout(lower)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(clients_box)
        layout.addWidget(chatgpt)
        layout.addWidget(BrowsersBox(ops, settings=settings, parent=self))
        layout.addWidget(http)

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
        self._found = list(found)
        for name, label in self.installed.items():
            label.setText("found here" if name in found else "")
        self.connect_all_button.setEnabled(self._connect is not None and bool(found))

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

    def connect_all(self) -> None:
        """Connect every client found here (off the Qt thread), each one's failure apart, and say
        what changed for each."""
        connect, detect, settings = self._connect, self._detect, self._settings
        if connect is None or detect is None:
            return

        def work() -> tuple[list[tuple[str, ConnectResult | KnownError]], str | None]:
            done: list[tuple[str, ConnectResult | KnownError]] = []
            for name in detect():
                try:
                    done.append((name, connect(name)))
                except KnownError as exc:
                    done.append((name, exc))
            return done, connect_note(settings) if settings is not None else None

        def done(answer: tuple[list[tuple[str, ConnectResult | KnownError]], str | None]) -> None:
            outcomes, note = answer
            lines = []
            for name, outcome in outcomes:
                title = CLIENT_TITLES[name]
                if isinstance(outcome, KnownError):
                    lines.append(f"{title} was not connected: {outcome}")
                else:
                    lines.append(f"{title}: {outcome.message}")
            if not outcomes:
                lines.append("No assistant that can start Tallei was found on this computer.")
            elif note:
                lines.append(note)
            self.connect_result.setText("\n".join(lines))
            self.connected_all.emit([n for n, o in outcomes if isinstance(o, ConnectResult)])

        self._ops.run(work, done, lambda error: self._ops.report(error))

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
