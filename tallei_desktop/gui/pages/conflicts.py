"""Conflicts between assistants: the open ones listed with both sides, the chosen one side by side;
keep one, keep both, or merge; and undo the outcome right after.

Nothing moves under the mouse: the status line keeps its height whether or not it has something
to say, and after a conflict is settled no other one is selected, so a second click on the same
spot does nothing until the person picks the next conflict.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFont, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.core import Conflict, ConflictResolution, InvalidInput, KnownError, Memory
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.models import short_time
from tallei_desktop.gui.ops import Ops

__all__ = ["ConflictsPage"]

EMPTY_TEXT = "No conflicts wait for you. When two assistants disagree, they show up here."
PICK_TEXT = "Pick a conflict on the left to settle it."
MERGE_PLACEHOLDER = "Write the one version to keep…"
#: How many lines of the merge box show without scrolling.
_MERGE_LINES = 4


class _Side(QFrame):
    """One memory of the pair: who said it and when, the text, and the button that keeps it."""

    def __init__(self, number: int, parent: QWidget) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._number = number
        self.source = QLabel(self)
        bold = QFont(self.source.font())
        bold.setBold(True)
        self.source.setFont(bold)
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.keep = QPushButton(f"Keep this one (&{number})", self)
        self.keep.setToolTip(f"Alt+{number}")
        button_row = QHBoxLayout()
        button_row.addWidget(self.keep)
        button_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.source)
        layout.addWidget(self.text)
        layout.addLayout(button_row)
        layout.addStretch(1)

    def show_memory(self, memory: Memory | None) -> None:
        self.text.setText(memory.content if memory else "")
        self.source.setText(f"{memory.platform} · {short_time(memory.created_at)}" if memory else "")
        self.keep.setEnabled(memory is not None)
        if memory is not None:
            self.keep.setAccessibleName(f"Keep the memory from {memory.platform}")


class _EntryDelegate(QStyledItemDelegate):
    """Lays each entry out at the list's width, its text wrapped, so no entry is cut off and the
    list never scrolls sideways."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        wrapped = QStyleOptionViewItem(option)
        width = max(self._view.viewport().width() - 2 * self._view.spacing(), 80)
        wrapped.rect = QRect(0, 0, width, 1)
        wrapped.features |= QStyleOptionViewItem.ViewItemFeature.WrapText
        hint = super().sizeHint(wrapped, index)
        return QSize(width, hint.height())


def _entry_text(c: Conflict) -> str:
    a, b = c.memory_a, c.memory_b
    return f"{a.platform}: {_flat(a.content)}\n{b.platform}: {_flat(b.content)}"


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
        #: The conflict to select as soon as it is listed (asked for by id, or just reopened).
        self._wanted: str | None = None
        #: The page opened before any conflict was listed: select the newest once they arrive.
        self._newest_when_listed = False
        self._undo_id: str | None = None
        self._busy = False
        #: The status line tells what was just done; until then it counts what waits.
        self._told = False
        #: Merge text per conflict, so switching, a failed merge or an undo never loses it.
        self._drafts: dict[str, str] = {}

        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setAccessibleName("What was done")
        self.undo_button = QPushButton("&Undo", self)
        self.undo_button.setAccessibleName("Undo this outcome")
        self.undo_button.clicked.connect(self.undo)
        keep_room = self.undo_button.sizePolicy()
        keep_room.setRetainSizeWhenHidden(True)
        self.undo_button.setSizePolicy(keep_room)
        self.undo_button.hide()
        self.undo_bar = QWidget(self)
        undo_row = QHBoxLayout(self.undo_bar)
        undo_row.setContentsMargins(0, 0, 0, 0)
        undo_row.addWidget(self.status, 1)
        undo_row.addWidget(self.undo_button)
        # Room for two lines of text or the button, whichever is taller, whether shown or not.
        lines = 2 * self.status.fontMetrics().lineSpacing() + 4
        self.undo_bar.setFixedHeight(max(lines, self.undo_button.sizeHint().height()))

        self.list = QListWidget(self)
        self.list.setAccessibleName("Open conflicts")
        self.list.setWordWrap(True)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.list.setSpacing(3)
        self.list.setAlternatingRowColors(True)
        self.list.setItemDelegate(_EntryDelegate(self.list))
        self.list.currentRowChanged.connect(self._show_current)
        self.list.itemSelectionChanged.connect(self._selection_changed)

        self.empty = QLabel(EMPTY_TEXT, self)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.pick = QLabel(PICK_TEXT, self)
        self.pick.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pick.setWordWrap(True)

        self.first = _Side(1, self)
        self.second = _Side(2, self)
        self.first.keep.clicked.connect(lambda: self._resolve(ConflictResolution.KEEP_FIRST))
        self.second.keep.clicked.connect(lambda: self._resolve(ConflictResolution.KEEP_SECOND))
        self.keep_both = QPushButton("Keep &both", self)
        self.keep_both.setAccessibleName("Keep both memories")
        self.keep_both.clicked.connect(lambda: self._resolve(ConflictResolution.KEEP_BOTH))
        self.merged = QPlainTextEdit(self)
        self.merged.setAccessibleName("Merged text")
        self.merged.setPlaceholderText(MERGE_PLACEHOLDER)
        self.merged.setTabChangesFocus(True)
        line = self.merged.fontMetrics().lineSpacing()
        self.merged.setFixedHeight(_MERGE_LINES * line + 2 * int(self.merged.document().documentMargin()) + 6)
        self.merged.textChanged.connect(self._draft_changed)
        self.merge = QPushButton("&Merge into this text", self)
        self.merge.setAccessibleName("Replace both with the merged text")
        self.merge.clicked.connect(self._merge)

        self.details = QWidget(self)
        sides = QHBoxLayout()
        sides.addWidget(self.first, 1)
        sides.addWidget(self.second, 1)
        both_row = QHBoxLayout()
        both_row.addWidget(self.keep_both)
        both_row.addStretch(1)
        merge_label = QLabel("&Or merge both into one memory:", self)
        merge_label.setBuddy(self.merged)
        merge_row = QHBoxLayout()
        merge_row.addStretch(1)
        merge_row.addWidget(self.merge)
        details_layout = QVBoxLayout(self.details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addLayout(sides)
        details_layout.addLayout(both_row)
        details_layout.addSpacing(8)
        details_layout.addWidget(merge_label)
        details_layout.addWidget(self.merged)
        details_layout.addLayout(merge_row)
        details_layout.addStretch(1)

        self.right = QStackedWidget(self)
        self.right.addWidget(self.pick)
        self.right.addWidget(self.details)
        self.split = QSplitter(self)
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(self.list)
        self.split.addWidget(self.right)
        self.split.setStretchFactor(0, 2)
        self.split.setStretchFactor(1, 3)
        self.body = QStackedWidget(self)
        self.body.addWidget(self.empty)
        self.body.addWidget(self.split)
        layout = QVBoxLayout(self)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.body, 1)
        self._show_current(-1)

    # -- the list ----------------------------------------------------------------------------------

    def set_conflicts(self, conflicts: list[Conflict]) -> None:
        """Show these open conflicts (newest first), keeping the selected one if it is still open.

        Nothing else gets selected on its own, except the conflict asked for by :meth:`show_conflict`
        and, when the page was opened before any was listed, the newest.
        """
        current = self.current()
        kept = current.id if current else None
        self._conflicts = list(conflicts)
        self.list.blockSignals(True)
        self.list.clear()
        for c in self._conflicts:
            item = QListWidgetItem(_entry_text(c))
            item.setData(Qt.ItemDataRole.UserRole, c.id)
            item.setToolTip(
                f"{c.memory_a.platform} and {c.memory_b.platform} disagree, since {short_time(c.created_at)}"
            )
            self.list.addItem(item)
        ids = [c.id for c in self._conflicts]
        if self._wanted in ids:
            row = ids.index(self._wanted)
            if self.isVisible():
                self._wanted = None
        elif kept in ids:
            row = ids.index(kept)
        elif self._newest_when_listed and ids:
            row = 0
        else:
            row = -1
        if ids:
            self._newest_when_listed = False
        self.list.setCurrentRow(row)
        if row < 0:
            self.list.clearSelection()
        self.list.blockSignals(False)
        self._show_current(row)
        if not self._told:
            self.status.setText(_waiting(len(ids)))

    def show_conflict(self, conflict_id: str | None = None) -> None:
        """Select this conflict (now, or as soon as it is listed); without an id, the newest."""
        if conflict_id is None:
            self._wanted = None
            self._select_newest()
            return
        self._wanted = conflict_id
        ids = [c.id for c in self._conflicts]
        if conflict_id in ids:
            self.list.setCurrentRow(ids.index(conflict_id))
            if self.isVisible():
                self._wanted = None

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if event.spontaneous():
            return  # the window came back from being minimised: the person's selection stays
        # Opened (from the sidebar, the tray or a banner): the conflict asked for, else the newest.
        wanted, self._wanted = self._wanted, None
        ids = [c.id for c in self._conflicts]
        if wanted is None:
            self._select_newest()
        elif wanted in ids:
            self.list.setCurrentRow(ids.index(wanted))
        else:
            self._wanted = wanted  # not listed yet: selected when it arrives

    def _select_newest(self) -> None:
        if self._conflicts:
            self.list.setCurrentRow(0)
        else:
            self._newest_when_listed = True

    def current(self) -> Conflict | None:
        row = self.list.currentRow()
        selected = bool(self.list.selectedItems())
        return self._conflicts[row] if selected and 0 <= row < len(self._conflicts) else None

    def _selection_changed(self) -> None:
        self._show_current(self.list.currentRow())

    def _show_current(self, _row: int) -> None:
        c = self.current()
        self.body.setCurrentWidget(self.split if self._conflicts else self.empty)
        self.right.setCurrentWidget(self.details if c is not None else self.pick)
        self.first.show_memory(c.memory_a if c else None)
        self.second.show_memory(c.memory_b if c else None)
        self.merged.blockSignals(True)
        self.merged.setPlainText(self._drafts.get(c.id, "") if c else "")
        self.merged.blockSignals(False)
        self._enable()

    def _enable(self) -> None:
        c = self.current()
        ready = c is not None and not self._busy
        for w in (self.first.keep, self.second.keep, self.keep_both, self.merged):
            w.setEnabled(ready)
        self.merge.setEnabled(ready and bool(self.merged.toPlainText().strip()))

    def _draft_changed(self) -> None:
        c = self.current()
        if c is not None:
            self._drafts[c.id] = self.merged.toPlainText()
        self._enable()

    # -- outcomes ----------------------------------------------------------------------------------

    def _resolve(self, how: ConflictResolution, content: str | None = None) -> None:
        c = self.current()
        if c is None or self._busy:
            return
        self._busy = True
        self._enable()
        self._ops.run(
            lambda: self._backend.resolve(c.id, how, content),
            lambda done: self._after(c, how, content),
            self._failed,
        )

    def _merge(self) -> None:
        self._resolve(ConflictResolution.REPLACE, self.merged.toPlainText())

    def _failed(self, error: Exception) -> None:
        self._busy = False
        self._enable()
        if isinstance(error, KnownError):
            self._say(f"Nothing was changed: {error}")
        else:
            self._say("Nothing was changed: something went wrong inside Tallei; the log has the details.")
            self._ops.report(error)

    def _after(self, settled: Conflict, how: ConflictResolution, content: str | None) -> None:
        self._busy = False
        self._conflicts = [c for c in self._conflicts if c.id != settled.id]
        self.list.clearSelection()
        self.set_conflicts(self._conflicts)
        self._undo_id = settled.id
        self._say(_outcome(settled, how, content), undo=True)
        self.resolved.emit(settled.id, str(how))

    def undo(self) -> None:
        """Undo the outcome just chosen: the conflict is open again, as it was, and selected."""
        cid = self._undo_id
        if cid is None:
            return
        self._undo_id = None
        self.undo_button.hide()

        def done(conflict: Conflict) -> None:
            if all(c.id != conflict.id for c in self._conflicts):
                self._conflicts.insert(0, conflict)
            self._wanted = conflict.id
            self.set_conflicts(self._conflicts)
            self._wanted = None
            self._say(f"Undone: {_pair(conflict)} wait for your decision again.")
            self.reopened.emit(conflict.id)

        def failed(error: Exception) -> None:
            if isinstance(error, InvalidInput):
                # Opened again meanwhile (from a memory's history, or by an assistant).
                self._say("Nothing to undo: that conflict is already open again.")
            else:
                self._failed(error)

        self._ops.run(lambda: self._backend.reopen(cid), done, failed)

    def _say(self, text: str, *, undo: bool = False) -> None:
        self._told = True
        self.status.setText(text)
        self.status.setToolTip(text)
        self.undo_button.setVisible(undo)


def _waiting(n: int) -> str:
    if n == 0:
        return ""
    one = "1 conflict waits" if n == 1 else f"{n} conflicts wait"
    return f"{one} for your decision: keep one side, keep both, or merge them into one."


def _pair(c: Conflict) -> str:
    a, b = c.memory_a, c.memory_b
    return f"“{_preview(a.content)}” from {a.platform} and “{_preview(b.content)}” from {b.platform}"


def _outcome(c: Conflict, how: ConflictResolution, content: str | None) -> str:
    """A sentence for the status line: what the person just chose, naming the memories."""
    a, b = c.memory_a, c.memory_b
    if how is ConflictResolution.KEEP_FIRST:
        return f"Kept “{_preview(a.content)}” from {a.platform}; set aside “{_preview(b.content)}” from {b.platform}."
    if how is ConflictResolution.KEEP_SECOND:
        return f"Kept “{_preview(b.content)}” from {b.platform}; set aside “{_preview(a.content)}” from {a.platform}."
    if how is ConflictResolution.KEEP_BOTH:
        return f"Kept both {_pair(c)}."
    if how is ConflictResolution.REPLACE:
        return f"Merged {_pair(c)} into “{_preview(content or '')}”."
    return "Settled the conflict."


def _flat(text: str) -> str:
    return " ".join(text.split())


def _preview(text: str) -> str:
    flat = _flat(text)
    return flat if len(flat) <= 40 else flat[:39] + "…"
