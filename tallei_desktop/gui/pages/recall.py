"""Recall preview: exactly the block an assistant receives for a query, and each bucket's budget."""

from __future__ import annotations

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

from tallei_desktop.core import RecallMode, RecallResult, items_cost
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops

__all__ = ["HINT", "RecallPage"]

#: Shown until the first preview lands.
HINT = "See what an assistant would be given for a question. Previewing does not count as use."


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
            # What the buckets leave unused carries the best remaining matches ("More matches").
            ("total", "Whole block", budgets.total),
        ):
            bar = QProgressBar(self)
            bar.setRange(0, budget)
            bar.setValue(0)
            bar.setFormat(f"%v of {budget:,} tokens")
            bar.setAccessibleName(f"{title} tokens used")
            self.bars[key] = bar
            form.addRow(f"{title}:", bar)
        self.mode = QLabel(HINT, self)
        self.mode.setWordWrap(True)
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
        budgets = self._backend.service.budgets
        for key, items in (
            ("preferences", result.preferences),
            ("long_term", result.long_term),
            ("short_term", result.short_term),
            ("total", result.items),
        ):
            bar = self.bars[key]
            bar.setValue(min(bar.maximum(), items_cost(items, budgets)))
        self.mode.setText(status_line(result))
        self.shown.emit(result)


def status_line(result: RecallResult) -> str:
    """How the block was put together, in plain words."""
    if result.long_term_mode is RecallMode.DUMP_ALL:
        chosen = "Everything long-term fits, so all of it is included."
    else:
        chosen = "Too much long-term to include all: the best matches were picked."
    meaning = (
        "Search by meaning is on."
        if result.semantic_search
        else "Search by meaning is off: memories are found by their words and how recent they are."
    )
    more = len(result.more)
    extra = f" The room left over holds {more} more {'match' if more == 1 else 'matches'}." if more else ""
    return f"{chosen} {meaning}{extra}"
