"""Settings: where the store lives, how it is unlocked, the model, recall budgets and the HTTP port.

Shown read-only: they come from config.toml and ``TALLEI_*`` variables.
"""

from __future__ import annotations

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from tallei_desktop.config import Settings
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops

__all__ = ["SettingsPage"]


class SettingsPage(QWidget):
    def __init__(self, settings: Settings, backend: Backend, ops: Ops, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        service = backend.service
        self.model_state = QLabel(self)
        self.model_state.setWordWrap(True)
        self.model_state.setAccessibleName("Embedding model state")
        form = QFormLayout()
        rows = [
            ("Data folder", str(settings.data_dir)),
            ("Key source", service.db.key_source),
            ("Recent memories", f"the last {settings.short_term_days} days"),
            (
                "Recall budgets",
                f"preferences {settings.preference_budget:,} · long-term {settings.long_term_budget:,} · "
                f"recent {settings.short_term_budget:,} tokens",
            ),
            ("HTTP port", str(settings.http_port)),
        ]
        for name, value in rows:
            label = QLabel(value, self)
            label.setWordWrap(True)
            label.setAccessibleName(name)
            form.addRow(f"{name}:", label)
        form.addRow("Embedding model:", self.model_state)
        note = QLabel(
            "These come from config.toml in your settings folder and TALLEI_* environment variables.", self
        )
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addStretch(1)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        embedder = self._backend.service.embedder
        self._ops.run(lambda: f"{embedder.state}: {embedder.detail}", self.model_state.setText)
