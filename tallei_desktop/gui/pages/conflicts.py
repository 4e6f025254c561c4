"""Conflicts between assistants: both memories side by side; keep one, keep both, or merge; and undo
the outcome right after."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.core import Conflict, ConflictResolution, Memory
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.models import short_time
from tallei_desktop.gui.ops import Ops

__all__ = ["ConflictsPage"]


class _Side(QGroupBox):
    def __init__(self, title: str, parent: QWidget) -> None:
        super().__init__(title, parent)
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.source = QLabel(self)
        self.keep = QPushButton("Keep this one", self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.source)
        layout.addWidget(self.keep)

    def show_memory(self, memory: Memory | None) -> None:
        self.text.setText(memory.content if memory else "")
        self.source.setText(f"{memory.platform} · {short_time(memory.created_at)}" if memory else "")
        self.keep.setEnabled(memory is not None)
        if memory is not None:
            self.keep.setAccessibleName(f"Keep the memory from {memory.platform}")


class ConflictsPage(QWidget):
    #: (conflict id, resolution) after a resolution round-tripped through the store.
    resolved = Signal(str, str)
    #: A conflict's outcome was undone in the store; it is open (and listed) again.
    reopened = Signal(str)

    def __init__(self, backend: Backend, ops: Ops, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        self._conflicts: list[Conflict] = []
        self._wanted: str | None = None
        self._undo_id: str | None = None

        self.undo_label = QLabel(self)
        self.undo_label.setWordWrap(True)
        self.undo_button = QPushButton("&Undo", self)
        self.undo_button.setAccessibleName("Undo this outcome")
        self.undo_button.clicked.connect(self.undo)
        self.undo_bar = QWidget(self)
        undo_row = QHBoxLayout(self.undo_bar)
        undo_row.setContentsMargins(0, 0, 0, 0)
        undo_row.addWidget(self.undo_label, 1)
        undo_row.addWidget(self.undo_button)
        self.undo_bar.hide()

        self.list = QListWidget(self)
        self.list.setAccessibleName("Open conflicts")
        self.list.currentRowChanged.connect(self._show_current)
        self.empty = QLabel("No conflicts wait for you: your assistants agree.", self)
        self.first = _Side("First", self)
        self.second = _Side("Second", self)
        self.first.keep.clicked.connect(lambda: self._resolve(ConflictResolution.KEEP_FIRST))
        self.second.keep.clicked.connect(lambda: self._resolve(ConflictResolution.KEEP_SECOND))
        self.keep_both = QPushButton("Keep &both", self)
        self.keep_both.setAccessibleName("Keep both memories")
        self.keep_both.clicked.connect(lambda: self._resolve(ConflictResolution.KEEP_BOTH))
        self.merged = QPlainTextEdit(self)
        self.merged.setAccessibleName("Merged text")
        self.merged.setPlaceholderText("Write one memory that says what is true, then merge.")
        self.merge = QPushButton("&Merge into this text", self)
        self.merge.setAccessibleName("Replace both with the merged text")
        self.merge.clicked.connect(self._merge)

        sides = QHBoxLayout()
        sides.addWidget(self.first)
        sides.addWidget(self.second)
        merge_row = QHBoxLayout()
        merge_row.addWidget(self.keep_both)
        merge_row.addStretch(1)
        merge_row.addWidget(self.merge)
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.empty)
        right_layout.addLayout(sides, 2)
        merge_label = QLabel("&Or merge both into one memory:", self)
        merge_label.setBuddy(self.merged)
        right_layout.addWidget(merge_label)
        right_layout.addWidget(self.merged, 1)
        right_layout.addLayout(merge_row)
        split = QSplitter(self)
        split.addWidget(self.list)
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.addWidget(self.undo_bar)
        layout.addWidget(split, 1)
        self._show_current(-1)

    def set_conflicts(self, conflicts: list[Conflict]) -> None:
        """Show these open conflicts, keeping the one selected if it is still open."""
        current = self.current()
        wanted = self._wanted or (current.id if current else None)
        self._conflicts = list(conflicts)
        self.list.blockSignals(True)
        self.list.clear()
        for c in self._conflicts:
            item = QListWidgetItem(
                f"{c.memory_a.platform} vs {c.memory_b.platform}: {c.memory_a.content[:50]}"
            )
            item.setData(Qt.ItemDataRole.UserRole, c.id)
            self.list.addItem(item)
        self.list.blockSignals(False)
        ids = [c.id for c in self._conflicts]
        row = ids.index(wanted) if wanted in ids else (0 if ids else -1)
        if wanted in ids:
            self._wanted = None
        self.list.setCurrentRow(row)
        self._show_current(row)

    def show_conflict(self, conflict_id: str) -> None:
        """Select this conflict (now, or as soon as it is in the list)."""
        ids = [c.id for c in self._conflicts]
        if conflict_id in ids:
            self.list.setCurrentRow(ids.index(conflict_id))
        else:
            self._wanted = conflict_id

    def current(self) -> Conflict | None:
        row = self.list.currentRow()
        return self._conflicts[row] if 0 <= row < len(self._conflicts) else None

    def _show_current(self, row: int) -> None:
        c = self._conflicts[row] if 0 <= row < len(self._conflicts) else None
        self.empty.setVisible(not self._conflicts)
        self.first.show_memory(c.memory_a if c else None)
        self.second.show_memory(c.memory_b if c else None)
        for w in (self.keep_both, self.merge, self.merged):
            w.setEnabled(c is not None)
        if c is not None:
            self.merged.setPlainText(c.memory_a.content)

    def _resolve(self, how: ConflictResolution, content: str | None = None) -> None:
        c = self.current()
        if c is None:
            return
        self._ops.run(
            lambda: self._backend.resolve(c.id, how, content),
            lambda done: self._after(done.id, how),
        )

    def _merge(self) -> None:
        self._resolve(ConflictResolution.REPLACE, self.merged.toPlainText())

    def _after(self, conflict_id: str, how: ConflictResolution) -> None:
        settled = next((c for c in self._conflicts if c.id == conflict_id), None)
        self._conflicts = [c for c in self._conflicts if c.id != conflict_id]
        self.set_conflicts(self._conflicts)
        if settled is not None:
            self._undo_id = conflict_id
            self.undo_label.setText(_outcome(settled, how))
            self.undo_bar.show()
        self.resolved.emit(conflict_id, str(how))

    def undo(self) -> None:
        """Undo the outcome just chosen: the conflict is open again, as it was."""
        cid = self._undo_id
        if cid is None:
            return
        self._undo_id = None
        self.undo_bar.hide()

        def done(conflict: Conflict) -> None:
            if all(c.id != conflict.id for c in self._conflicts):
                self._conflicts.insert(0, conflict)
            self._wanted = conflict.id
            self.set_conflicts(self._conflicts)
            self.reopened.emit(conflict.id)

        self._ops.run(lambda: self._backend.reopen(cid), done)


def _outcome(c: Conflict, how: ConflictResolution) -> str:
    """A sentence for the undo bar: what the person just chose."""
    a, b = c.memory_a, c.memory_b
    said = {
        ConflictResolution.KEEP_FIRST: f"Kept “{_preview(a.content)}” from {a.platform}.",
        ConflictResolution.KEEP_SECOND: f"Kept “{_preview(b.content)}” from {b.platform}.",
        ConflictResolution.KEEP_BOTH: "Kept both memories.",
        ConflictResolution.REPLACE: "Merged both memories into one.",
    }
    return said.get(how, "Settled the conflict.")


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 60 else flat[:59] + "…"
