"""A memory view: the table over one view of the store, filters, a search box, details and actions."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QUrl, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.core import (
    Memory,
    MemoryHistory,
    MemoryStatus,
    MemoryType,
    SortKey,
)
from tallei_desktop.gui.backend import Backend, ListQuery, Page, View
from tallei_desktop.gui.details import REOPEN_SCHEME, VERSION_SCHEME, render_details
from tallei_desktop.gui.models import Column, MemoryTableModel
from tallei_desktop.gui.ops import Ops

__all__ = ["MemoriesPage"]

PAGE_SIZE = 200
_WIDTHS = {
    Column.TYPE: 80,
    Column.PLATFORMS: 110,
    Column.CONFIDENCE: 95,
    Column.REFERENCES: 48,
    Column.LAST_USED: 120,
    Column.PINNED: 56,
}
_ALL = ""


class MemoriesPage(QWidget):
    """One view (Preferences, Long-term, …). Every change goes through the core, off the Qt thread."""

    #: Emitted after each load lands in the table (for tests and the benchmark).
    loaded = Signal()
    #: Emitted after an action on a memory round-tripped through the store.
    acted = Signal(str)

    def __init__(self, view: View, backend: Backend, ops: Ops, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self._backend = backend
        self._ops = ops
        self._query = ListQuery(view)
        self._ticket = 0
        self._dirty = True
        self._undo_id: str | None = None
        self._details_ticket = 0
        self.model = MemoryTableModel(self)
        self.model.sort_requested.connect(self._on_sort)
        self.model.more_wanted.connect(self._fetch_more)
        self._build()

    # -- layout ----------------------------------------------------------------------------------

    def _build(self) -> None:
        title = self.view.label
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search by words and meaning")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName(f"Search {title}")
        self.search.returnPressed.connect(self._apply_filters)
        self.search.textChanged.connect(lambda text: None if text else self._apply_filters())
        self.type_filter = QComboBox(self)
        self.type_filter.setAccessibleName("Filter by type")
        self.type_filter.addItem("All types", _ALL)
        for t in MemoryType:
            self.type_filter.addItem(str(t).capitalize(), str(t))
        self.type_filter.currentIndexChanged.connect(self._apply_filters)
        self.platform_filter = QComboBox(self)
        self.platform_filter.setAccessibleName("Filter by assistant")
        self.platform_filter.addItem("All assistants", _ALL)
        self.platform_filter.currentIndexChanged.connect(self._apply_filters)
        self.count_label = QLabel(self)
        self.count_label.setAccessibleName(f"{title} count")

        bar = QHBoxLayout()
        bar.addWidget(self.search, 3)
        bar.addWidget(self.type_filter, 1)
        bar.addWidget(self.platform_filter, 1)
        bar.addWidget(self.count_label)

        self.table = QTableView(self)
        self.table.setAccessibleName(f"{title} memories")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # No column sorts at first (most recently changed first): enabling sorting would sort by
        # the indicator's column at once.
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.DescendingOrder)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicatorShown(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(Column.CONTENT, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(48)
        for column, width in _WIDTHS.items():
            self.table.setColumnWidth(column, width)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)

        self.detail = QTextBrowser(self)
        self.detail.setAccessibleName("Memory details")
        self.detail.setOpenLinks(False)
        self.detail.anchorClicked.connect(self._on_link)
        self.pin_button = self._button("&Pin", "Pin or unpin the memory", self.toggle_pin)
        self.edit_button = self._button("&Edit text…", "Edit the memory's text", self.edit_text)
        self.type_box = QComboBox(self)
        self.type_box.setAccessibleName("Change type")
        for t in MemoryType:
            self.type_box.addItem(str(t).capitalize(), str(t))
        self.type_box.activated.connect(self._on_type_chosen)
        self.forget_button = self._button("&Forget", "Forget the memory (can be undone)", self.forget)
        self.restore_button = self._button("&Restore", "Bring the memory back", self.restore)
        self.purge_button = self._button("Erase for &good…", "Erase the memory for good", self.purge)
        actions = QHBoxLayout()
        for w in (
            self.pin_button,
            self.edit_button,
            self.type_box,
            self.forget_button,
            self.restore_button,
            self.purge_button,
        ):
            actions.addWidget(w)
        actions.addStretch(1)

        self.undo_label = QLabel(self)
        self.undo_button = self._button("&Undo", "Undo the forget", self.undo_forget)
        undo_row = QHBoxLayout()
        undo_row.addWidget(self.undo_label, 1)
        undo_row.addWidget(self.undo_button)
        self.undo_bar = QWidget(self)
        self.undo_bar.setLayout(undo_row)
        self.undo_bar.hide()

        side = QWidget(self)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.detail, 1)
        side_layout.addLayout(actions)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.undo_bar)
        layout.addWidget(split, 1)

        for keys, slot in (
            ("Ctrl+F", self.search.setFocus),
            (QKeySequence.StandardKey.Delete, self.forget),
            ("Ctrl+P", self.toggle_pin),
            ("F2", self.edit_text),
            (QKeySequence.StandardKey.Undo, self.undo_forget),
        ):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        self._show_details(None)

    def _button(self, text: str, accessible: str, slot: object) -> QPushButton:
        button = QPushButton(text, self)
        button.setAccessibleName(accessible)
        button.clicked.connect(slot)
        return button

    # -- loading ---------------------------------------------------------------------------------

    def mark_dirty(self) -> None:
        """The store changed: reload now if shown, else when next shown."""
        self._dirty = True
        if self.isVisible():
            self.reload()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self.reload()

    def reload(self) -> None:
        """Fetch the rows shown now (at least one page) again, keeping selection and scroll."""
        self._dirty = False
        self._ticket += 1
        ticket, query = self._ticket, self._query
        limit = max(PAGE_SIZE, self.model.rowCount())
        self._ops.run(
            lambda: (self._backend.page(query, limit=limit), self._backend.platforms()),
            lambda result: self._loaded(ticket, *result),
            lambda error: self._load_failed(ticket, error),
        )

    def _loaded(self, ticket: int, page: Page, platforms: list[str]) -> None:
        if ticket != self._ticket:
            return
        selected = self.selected_id()
        scroll = self.table.verticalScrollBar().value()
        self.model.replace(page.memories, page.total)
        self._update_platforms(platforms)
        self.count_label.setText(f"{page.total:,} memor{'y' if page.total == 1 else 'ies'}")
        if selected is not None and (row := self.model.row_of(selected)) >= 0:
            self.select_row(row)
        self.table.verticalScrollBar().setValue(scroll)
        if selected is not None:
            self._refresh_details()
        self.loaded.emit()

    def _load_failed(self, ticket: int, error: Exception) -> None:
        if ticket == self._ticket:
            self.model.fetch_failed()
        self._ops.report(error)

    def _fetch_more(self, offset: int) -> None:
        ticket, query = self._ticket, self._query

        def landed(page: Page) -> None:
            if ticket == self._ticket:
                self.model.append(page.offset, page.memories, page.total)
                self.loaded.emit()
            else:
                self.model.fetch_failed()

        self._ops.run(
            lambda: self._backend.page(query, offset=offset, limit=PAGE_SIZE),
            landed,
            lambda error: self._load_failed(ticket, error),
        )

    def _update_platforms(self, platforms: list[str]) -> None:
        box = self.platform_filter
        have = [box.itemData(i) for i in range(1, box.count())]
        if have == platforms:
            return
        current = box.currentData()
        box.blockSignals(True)
        while box.count() > 1:
            box.removeItem(1)
        for name in platforms:
            box.addItem(name, name)
        box.setCurrentIndex(max(0, box.findData(current)))
        box.blockSignals(False)

    def set_query(self, query: ListQuery) -> None:
        self._query = query
        self.reload()

    def _apply_filters(self) -> None:
        chosen_type = self.type_filter.currentData()
        chosen_platform = self.platform_filter.currentData()
        self.set_query(
            replace(
                self._query,
                text=self.search.text().strip(),
                types=frozenset({MemoryType(chosen_type)}) if chosen_type else frozenset(),
                platforms=frozenset({chosen_platform}) if chosen_platform else frozenset(),
            )
        )

    def _on_sort(self, key: SortKey, descending: bool) -> None:
        self.table.horizontalHeader().setSortIndicatorShown(True)
        self.set_query(replace(self._query, sort=key, descending=descending))

    # -- selection and details ---------------------------------------------------------------------

    def selected_id(self) -> str | None:
        memory = self.current_memory()
        return memory.id if memory is not None else None

    def current_memory(self) -> Memory | None:
        index = self.table.selectionModel().currentIndex()
        return self.model.memory_at(index.row()) if index.isValid() else None

    def select_row(self, row: int) -> None:
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
        )

    def select_id(self, memory_id: str) -> bool:
        row = self.model.row_of(memory_id)
        if row >= 0:
            self.select_row(row)
            self.table.scrollTo(self.model.index(row, 0))
        return row >= 0

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._refresh_details()

    def _refresh_details(self) -> None:
        memory = self.current_memory()
        self._show_details(MemoryHistory(memory, (), (), (), ()) if memory is not None else None)
        if memory is None:
            return
        self._details_ticket += 1
        ticket, mid = self._details_ticket, memory.id

        def landed(details: MemoryHistory) -> None:
            if ticket == self._details_ticket:
                self._show_details(details)

        self._ops.run(lambda: self._backend.details(mid), landed)

    def _show_details(self, details: MemoryHistory | None) -> None:
        memory = details.memory if details else None
        for w in (
            self.pin_button,
            self.edit_button,
            self.type_box,
            self.forget_button,
            self.restore_button,
            self.purge_button,
        ):
            w.setEnabled(memory is not None)
        if details is None or memory is None:
            self.detail.setHtml("<p>Select a memory to see its text, who saved it and its history.</p>")
            self.restore_button.setVisible(self.view in (View.ARCHIVED, View.FORGOTTEN))
            self.forget_button.setVisible(self.view is not View.FORGOTTEN)
            return
        editable = memory.status in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED)
        self.pin_button.setText("Un&pin" if memory.pinned else "&Pin")
        self.pin_button.setEnabled(editable)
        self.edit_button.setEnabled(editable)
        self.type_box.setEnabled(editable)
        self.type_box.setCurrentIndex(self.type_box.findData(str(memory.type)))
        self.forget_button.setVisible(memory.status is not MemoryStatus.DELETED)
        self.restore_button.setVisible(memory.status is not MemoryStatus.ACTIVE)
        self.detail.setHtml(render_details(details))

    # -- actions -------------------------------------------------------------------------------------

    def _act(self, what: str, op: object) -> None:
        def done(_result: object) -> None:
            self.acted.emit(what)
            self.reload()

        self._ops.run(op, done)  # type: ignore[arg-type]

    def toggle_pin(self) -> None:
        m = self.current_memory()
        if m is not None:
            service = self._backend.service
            self._act(
                "unpin" if m.pinned else "pin", lambda: service.unpin(m.id) if m.pinned else service.pin(m.id)
            )

    def _on_type_chosen(self, index: int) -> None:
        self.change_type(MemoryType(self.type_box.itemData(index)))

    def change_type(self, memory_type: MemoryType) -> None:
        m = self.current_memory()
        if m is not None and memory_type is not m.type:
            self._act("retype", lambda: self._backend.service.update(m.id, type=memory_type))

    def set_text(self, memory_id: str, text: str) -> None:
        self._act("edit", lambda: self._backend.service.update(memory_id, content=text))

    def edit_text(self) -> None:
        m = self.current_memory()
        if m is None or m.status not in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED):
            return
        dialog = TextDialog(
            "Edit memory", "The memory keeps its id; the new text replaces the old.", m.content, self
        )
        dialog.accepted.connect(lambda: self.set_text(m.id, dialog.text()))
        dialog.open()
        self.edit_dialog = dialog

    def forget(self) -> None:
        m = self.current_memory()
        if m is None or m.status is MemoryStatus.DELETED:
            return

        def done(_result: object) -> None:
            self._undo_id = m.id
            preview = " ".join(m.content.split())[:60]
            self.undo_label.setText(f"Forgotten: “{preview}”.")
            self.undo_bar.show()
            self.acted.emit("forget")
            self.reload()

        self._ops.run(lambda: self._backend.service.forget(m.id), done)

    def undo_forget(self) -> None:
        mid = self._undo_id
        if mid is None:
            return
        self._undo_id = None
        self.undo_bar.hide()
        self._act("undo", lambda: self._backend.service.restore(mid))

    def _on_link(self, url: QUrl) -> None:
        if url.scheme() == REOPEN_SCHEME:
            self.bring_back(url.path())
        elif url.scheme() == VERSION_SCHEME:
            self.bring_back_text(url.path())

    def bring_back(self, conflict_id: str) -> None:
        """Undo a conflict's outcome from the history: what it retired is back, the conflict open again."""
        self._act("reopen", lambda: self._backend.reopen(conflict_id))

    def bring_back_text(self, earlier_id: str) -> None:
        """Make an earlier text from the history the memory's text again (an edit by the person)."""
        self._act("bring back text", lambda: self._backend.service.bring_back_text(earlier_id))

    def restore(self) -> None:
        m = self.current_memory()
        if m is not None and m.status is not MemoryStatus.ACTIVE:
            self._act("restore", lambda: self._backend.service.restore(m.id))

    def purge(self) -> None:
        m = self.current_memory()
        if m is None:
            return
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Erase for good",
            "Erase this memory for good? It cannot be brought back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAccessibleName("Confirm erasing")
        box.accepted.connect(lambda: self._act("purge", lambda: self._backend.service.purge(m.id)))
        box.open()
        self.confirm_box = box


class TextDialog(QDialog):
    """Edit a text; opened with ``open()``, answered through ``accepted``."""

    def __init__(self, title: str, explanation: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        label = QLabel(explanation, self)
        label.setWordWrap(True)
        self.editor = QPlainTextEdit(text, self)
        self.editor.setAccessibleName("Memory text")
        label.setBuddy(self.editor)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.editor, 1)
        layout.addWidget(buttons)
        self.resize(520, 260)

    def text(self) -> str:
        return self.editor.toPlainText()
