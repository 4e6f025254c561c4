"""Assistants: who has used this store, and how to connect ChatGPT to the HTTP endpoint."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.gui.backend import Backend, PlatformUsage
from tallei_desktop.gui.models import short_time
from tallei_desktop.gui.ops import Ops

__all__ = ["AssistantsPage"]


class AssistantsPage(QWidget):
    loaded = Signal()

    def __init__(self, backend: Backend, ops: Ops, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        self._token = ""
        self.usage = QTreeWidget(self)
        self.usage.setAccessibleName("Assistants that used Tallei")
        self.usage.setHeaderLabels(["Assistant", "Memories", "Last seen"])
        self.usage.setRootIsDecorated(False)
        self.usage.setColumnWidth(0, 200)

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

        layout = QVBoxLayout(self)
        heading = QLabel("<b>Assistants that have used your memory</b>", self)
        heading.setBuddy(self.usage)
        layout.addWidget(heading)
        layout.addWidget(self.usage, 1)
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
        self._ops.run(self._backend.platform_usage, self._show)

    def _show(self, usage: list[PlatformUsage]) -> None:
        self.usage.clear()
        for u in usage:
            QTreeWidgetItem(self.usage, [u.platform, f"{u.memories:,}", short_time(u.last_seen)])
        if not usage:
            QTreeWidgetItem(self.usage, ["No assistant has saved a memory yet.", "", ""])
        self.loaded.emit()
