"""Recall preview: exactly the block an assistant receives for a query, and each bucket's budget."""

from __future__ import annotations

import math

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.core import RecallItem, RecallResult
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops

__all__ = ["RecallPage", "bucket_tokens"]


def estimate_tokens(text: str) -> int:
    """Recall's token estimate (one token per four characters, rounded up), as the budgets count."""
    return math.ceil(len(text) / 4)


def bucket_tokens(items: tuple[RecallItem, ...]) -> int:
    """Tokens a bucket's memories take, by the same estimate recall budgets with."""
    return sum(estimate_tokens(i.memory.content) for i in items)


class RecallPage(QWidget):
    #: Emitted with each result shown.
    shown = Signal(object)

    def __init__(self, backend: Backend, ops: Ops, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        self._ticket = 0
        self.query = QLineEdit(self)
        self.query.setPlaceholderText(
            "What is the conversation about? (empty: what every conversation starts with)"
        )
        self.query.setAccessibleName("Recall query")
        self.query.returnPressed.connect(self.preview)
        self.go = QPushButton("&Preview", self)
        self.go.setAccessibleName("Preview recall")
        self.go.clicked.connect(self.preview)
        row = QHBoxLayout()
        label = QLabel("&Query:", self)
        label.setBuddy(self.query)
        row.addWidget(label)
        row.addWidget(self.query, 1)
        row.addWidget(self.go)
        budgets = backend.service.budgets
        self.bars: dict[str, QProgressBar] = {}
        form = QFormLayout()
        for key, title, budget in (
            ("preferences", "Preferences", budgets.preference),
            ("long_term", "Long-term", budgets.long_term),
            ("short_term", "Recent", budgets.short_term),
        ):
            bar = QProgressBar(self)
            bar.setRange(0, budget)
            bar.setValue(0)
            bar.setFormat(f"%v of {budget:,} tokens")
            bar.setAccessibleName(f"{title} tokens used")
            self.bars[key] = bar
            form.addRow(f"{title}:", bar)
        self.mode = QLabel(self)
        self.block = QPlainTextEdit(self)
        self.block.setReadOnly(True)
        self.block.setAccessibleName("Recall block")
        self.block.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addLayout(form)
        layout.addWidget(self.mode)
        layout.addWidget(self.block, 1)

    def preview(self) -> None:
        self._ticket += 1
        ticket, text = self._ticket, self.query.text()
        self.go.setEnabled(False)

        def landed(result: RecallResult) -> None:
            self.go.setEnabled(True)
            if ticket == self._ticket:
                self.show_result(result)

        def failed(error: Exception) -> None:
            self.go.setEnabled(True)
            self._ops.report(error)

        self._ops.run(lambda: self._backend.recall(text), landed, failed)

    def show_result(self, result: RecallResult) -> None:
        self.block.setPlainText(result.text)
        for key, items in (
            ("preferences", result.preferences),
            ("long_term", result.long_term),
            ("short_term", result.short_term),
        ):
            bar = self.bars[key]
            bar.setValue(min(bar.maximum(), bucket_tokens(items)))
        semantic = "on" if result.semantic_search else "off (words and recency only)"
        self.mode.setText(
            f"Long-term: {str(result.long_term_mode).replace('_', '-')}; semantic search {semantic}."
        )
        self.shown.emit(result)
