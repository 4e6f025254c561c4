"""A memory view: the table over one view of the store, filters, a search box, details and actions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QPalette, QShortcut, QShowEvent
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
    QSizePolicy,
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
from tallei_desktop.gui.backend import Backend, ListQuery, Page, View, view_of, view_types
from tallei_desktop.gui.details import (
    CONFLICT_SCHEME,
    MEMORY_SCHEME,
    REOPEN_SCHEME,
    REVIVE_SCHEME,
    VERSION_SCHEME,
    render_details,
)
from tallei_desktop.gui.dialogs import keyboard_friendly
from tallei_desktop.gui.models import Column, MemoryTableModel
from tallei_desktop.gui.ops import Ops

__all__ = ["MemoriesPage"]

PAGE_SIZE = 200
#: Typing pauses this long before the search runs.
SEARCH_DELAY_MS = 250
_WIDTHS = {
    Column.TYPE: 80,
    Column.PLATFORMS: 110,
    Column.SAVED: 90,
    Column.HAPPENED: 90,
    Column.CONFIDENCE: 85,
    Column.REFERENCES: 48,
    Column.LAST_USED: 90,
    Column.PINNED: 56,
}
_ALL = ""
#: What an empty view holds and how memories get there.
_EMPTY = {
    View.PREFERENCES: "Preferences your assistants save appear here: how you like things done, what to "
    "call you, what you like. Pin one and every assistant sees it first.",
    View.LONG_TERM: "Facts, decisions, lessons and failures your assistants save appear here, and events "
    "and notes they keep using move here from Recent.",
    View.RECENT: "Events and notes your assistants save appear here. Those they use often move on to "
    "Long-term.",
    View.ARCHIVED: "Long-term memories no assistant used for a year rest here. Search still finds them, "
    "and Restore brings one back.",
    View.FORGOTTEN: "Memories you forget appear here. Restore brings one back; Erase for good removes it "
    "from the file.",
    View.REPLACED: "When an assistant saves a newer version of a preference or fact, the older one "
    "rests here, newest first; its details say what replaced it. Bring back makes it active again "
    "next to the newer one.",
}
#: Preferences never hold an event, so when something happened is no column there.
_UNDATED_VIEWS = frozenset({View.PREFERENCES})


def _quote(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _a(memory_type: MemoryType) -> str:
    name = str(memory_type)
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


@dataclass(frozen=True, slots=True)
class _Offer:
    """An undo on offer: good only while the memory is still as the action left it."""

    left: Memory  # the memory as the action left it
    message: str
    undo: Callable[[], object]
    undone: str  # said once the undo went through

    def still_holds(self, now: Memory | None) -> bool:
        return (
            now is not None
            and now.status is self.left.status
            and now.type is self.left.type
            and now.updated_at == self.left.updated_at
        )


class MemoriesPage(QWidget):
    """One view (Preferences, Long-term, …). Every change goes through the core, off the Qt thread."""

    #: Emitted after each load lands in the table (for tests and the benchmark).
    loaded = Signal()
    #: Emitted after an action on a memory round-tripped through the store.
    acted = Signal(str)
    #: A conflict id: the person asked to see that conflict.
    open_conflict = Signal(str)
    #: A memory id: the person asked to see that memory (it may be listed on another view).
    open_memory = Signal(str)

    def __init__(self, view: View, backend: Backend, ops: Ops, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self._backend = backend
        self._ops = ops
        self._query = ListQuery(view)
        self._ticket = 0
        self._dirty = True
        self._offer: _Offer | None = None
        self._select_after: str | None = None
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
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._apply_filters)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.search.returnPressed.connect(self._search_now)
        self.type_filter = QComboBox(self)
        self.type_filter.setAccessibleName("Filter by type")
        self.type_filter.addItem("All types", _ALL)
        for t in view_types(self.view):
            self.type_filter.addItem(str(t).capitalize(), str(t))
        self.type_filter.currentIndexChanged.connect(self._apply_filters)
        self.platform_filter = QComboBox(self)
        self.platform_filter.setAccessibleName("Filter by assistant")
        self.platform_filter.addItem("All assistants", _ALL)
        self.platform_filter.currentIndexChanged.connect(self._apply_filters)
        self.count_label = QLabel(self)
        self.count_label.setAccessibleName(f"{title} count")
        # A fixed width, so the search box does not jump as the count changes.
        widest = self.count_label.fontMetrics().horizontalAdvance("1,000,000 memories")
        self.count_label.setFixedWidth(widest + 8)
        self.count_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

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
        self.table.setColumnHidden(Column.HAPPENED, self.view in _UNDATED_VIEWS)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.table.installEventFilter(self)
        self.empty_label = QLabel(self.table.viewport())
        self.empty_label.setWordWrap(True)
        self.empty_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setContentsMargins(24, 24, 24, 24)
        self.empty_label.hide()
        self.table.viewport().installEventFilter(self)

        self.detail = QTextBrowser(self)
        self.detail.setAccessibleName("Memory details")
        self.detail.setOpenLinks(False)
        self.detail.anchorClicked.connect(self._on_link)
        self.pin_button = self._button("&Pin", "Pin or unpin the memory", self.toggle_pin)
        self.edit_button = self._button("&Edit text…", "Edit the memory's text", self.edit_text)
        self.type_box = QComboBox(self)
        self.type_box.setAccessibleName("Change type")
        self.type_box.setPlaceholderText("Type")
        for t in MemoryType:
            self.type_box.addItem(str(t).capitalize(), str(t))
        self.type_box.activated.connect(self._on_type_chosen)
        type_label = QLabel("&Type:", self)
        type_label.setBuddy(self.type_box)
        self.forget_button = self._button("&Forget", "Forget the memory (can be undone)", self.forget)
        self.restore_button = self._button("&Restore", "Bring the memory back", self.restore)
        self.bring_back_button = self._button(
            "&Bring back",
            "Make the replaced memory active again, next to the one that replaced it",
            lambda: self.bring_back_replaced(),
        )
        self.purge_button = self._button("Erase for &good…", "Erase the memory for good", self.purge)
        actions = QHBoxLayout()
        for w in (
            self.pin_button,
            self.edit_button,
            type_label,
            self.type_box,
            self.forget_button,
            self.restore_button,
            self.bring_back_button,
            self.purge_button,
        ):
            actions.addWidget(w)
        actions.addStretch(1)

        # What the last action did, with Undo where it can be undone. The row is always there and
        # keeps its height, so a message never moves the table under the mouse.
        self.message_label = QLabel(self)
        self.message_label.setAccessibleName("What happened")
        self.undo_button = self._button("&Undo", "Undo the last change", self.undo)
        keep = self.undo_button.sizePolicy()
        keep.setRetainSizeWhenHidden(True)
        self.undo_button.setSizePolicy(keep)
        self.undo_button.hide()
        message_row = QHBoxLayout()
        message_row.setContentsMargins(0, 0, 0, 0)
        message_row.addWidget(self.message_label, 1)
        message_row.addWidget(self.undo_button)
        self.message_area = QWidget(self)
        self.message_area.setLayout(message_row)
        self.message_area.setFixedHeight(self.undo_button.sizeHint().height())
        self.message_area.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

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
        layout.addWidget(self.message_area)
        layout.addWidget(split, 1)

        for keys, slot in (
            ("Ctrl+F", self.search.setFocus),
            (QKeySequence.StandardKey.Delete, self.forget),
            ("Ctrl+P", self.toggle_pin),
            ("F2", self.edit_text),
            (QKeySequence.StandardKey.Undo, self.undo),
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
        ticket, query, offer = self._ticket, self._query, self._offer
        limit = max(PAGE_SIZE, self.model.rowCount())
        backend = self._backend

        def load() -> tuple[Page, list[str], frozenset[str], Memory | None]:
            now = backend.memory_or_none(offer.left.id) if offer is not None else None
            return backend.page(query, limit=limit), backend.platforms(), backend.in_open_conflicts(), now

        self._ops.run(
            load,
            lambda result: self._loaded(ticket, offer, *result),
            lambda error: self._load_failed(ticket, error),
        )

    def _loaded(
        self,
        ticket: int,
        offer: _Offer | None,
        page: Page,
        platforms: list[str],
        in_conflict: frozenset[str],
        offered_now: Memory | None,
    ) -> None:
        if ticket != self._ticket:
            return
        if offer is not None and offer is self._offer and not offer.still_holds(offered_now):
            # Restored elsewhere, edited, erased: the offer would act on a memory it no longer knows.
            self._say("")
        selected = self._select_after or self.selected_id()
        self._select_after = None
        scroll = self.table.verticalScrollBar().value()
        self.model.replace(page.memories, page.total)
        self.model.set_in_conflict(in_conflict)
        self._update_platforms(platforms)
        self._show_count(page.total)
        self._show_empty()
        row = self.model.row_of(selected) if selected is not None else -1
        if row >= 0:
            self.select_row(row)
        self.table.verticalScrollBar().setValue(scroll)
        if row >= 0:
            self._refresh_details()
        else:
            self._show_details(None)
        self.loaded.emit()

    def _show_count(self, total: int) -> None:
        if self._query.text:
            text = "No match" if total == 0 else f"{total:,} match{'' if total == 1 else 'es'}"
        else:
            text = f"{total:,} memor{'y' if total == 1 else 'ies'}"
        self.count_label.setText(text)

    def _show_empty(self) -> None:
        if self.model.rowCount():
            self.empty_label.hide()
            return
        if self._query.text:
            text = f"No memory matches “{_quote(self._query.text)}”."
        elif self._query.types or self._query.platforms:
            text = "No memory matches these filters."
        else:
            text = _EMPTY[self.view]
        self.empty_label.setText(text)
        self._place_empty()
        self.empty_label.show()

    def _place_empty(self) -> None:
        self.empty_label.setGeometry(self.table.viewport().rect())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._place_empty()
        elif (
            watched is self.table
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_End
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.go_to_end()
            return True
        return super().eventFilter(watched, event)

    def go_to_end(self) -> None:
        """Select the last memory of the whole listing, fetching the rows not read yet."""
        missing = self.model.total - self.model.rowCount()
        if missing <= 0:
            if self.model.rowCount():
                self._select_last()
            return
        ticket, query, offset = self._ticket, self._query, self.model.rowCount()

        def landed(page: Page) -> None:
            if ticket != self._ticket:
                return
            self.model.append(page.offset, page.memories, page.total)
            if self.model.rowCount() < self.model.total:
                # A page fetched by scrolling landed first, so this one did not follow on: go again.
                self.go_to_end()
                return
            self._select_last()
            self.loaded.emit()

        self._ops.run(
            lambda: self._backend.page(query, offset=offset, limit=missing),
            landed,
            lambda error: self._load_failed(ticket, error),
        )

    def _select_last(self) -> None:
        row = self.model.rowCount() - 1
        self.select_row(row)
        self.table.scrollTo(self.model.index(row, 0))

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

    def _search_now(self) -> None:
        self._search_timer.stop()
        self._apply_filters()

    def _apply_filters(self) -> None:
        self._search_timer.stop()
        chosen_type = self.type_filter.currentData()
        chosen_platform = self.platform_filter.currentData()
        text = self.search.text().strip()
        query = replace(
            self._query,
            text=text,
            types=frozenset({MemoryType(chosen_type)}) if chosen_type else frozenset(),
            platforms=frozenset({chosen_platform}) if chosen_platform else frozenset(),
        )
        if text != self._query.text:
            # A new search is ranked by relevance, and a cleared one goes back to the usual order,
            # until the person clicks a header.
            query = replace(query, sort=None, descending=True)
            self.table.horizontalHeader().setSortIndicatorShown(False)
        self.set_query(query)

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
            self.bring_back_button,
            self.purge_button,
        ):
            w.setEnabled(memory is not None)
        if details is None or memory is None:
            self.type_box.setCurrentIndex(-1)
            self.detail.setHtml("<p>Select a memory to see its text, who saved it and its history.</p>")
            self.restore_button.setVisible(self.view in (View.ARCHIVED, View.FORGOTTEN))
            self.bring_back_button.setVisible(self.view is View.REPLACED)
            self.forget_button.setVisible(self.view is not View.FORGOTTEN)
            return
        editable = memory.status in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED)
        self.pin_button.setText("Un&pin" if memory.pinned else "&Pin")
        self.pin_button.setEnabled(editable)
        self.edit_button.setEnabled(editable)
        self.type_box.setEnabled(editable)
        self.type_box.setCurrentIndex(self.type_box.findData(str(memory.type)))
        self.forget_button.setVisible(memory.status is not MemoryStatus.DELETED)
        self.restore_button.setVisible(memory.status not in (MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED))
        self.bring_back_button.setVisible(memory.status is MemoryStatus.SUPERSEDED)
        self.detail.setHtml(render_details(details))

    # -- actions -------------------------------------------------------------------------------------

    def _act(self, what: str, op: object, message: str | None = None) -> None:
        def done(_result: object) -> None:
            if message is not None:
                self._say(message)
            self.acted.emit(what)
            self.reload()

        self._ops.run(op, done)  # type: ignore[arg-type]

    def _say(self, message: str, offer: _Offer | None = None) -> None:
        """Show what the last action did, with Undo when ``offer`` is given; "" clears the row."""
        self._offer = offer
        self.message_label.setText(message)
        self.undo_button.setVisible(offer is not None)

    @property
    def undo_offered(self) -> bool:
        return self._offer is not None

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
        if m is None or memory_type is m.type:
            return
        service = self._backend.service
        old_type = m.type

        def done(changed: Memory) -> None:
            # An edit makes an archived memory active again, so it may leave Archived too.
            now_in = view_of(changed.bucket) if changed.status is MemoryStatus.ACTIVE else self.view
            if now_in is not self.view:
                said = f"Moved to {now_in.label} as {_a(memory_type)}: “{_quote(m.content)}”."
            else:
                said = f"Now {_a(memory_type)}: “{_quote(m.content)}”."
            offer = _Offer(
                changed,
                said,
                lambda: service.update(m.id, type=str(old_type)),
                f"Back to {_a(old_type)}: “{_quote(m.content)}”.",
            )
            self._say(said, offer)
            self.acted.emit("retype")
            self.reload()

        self._ops.run(lambda: service.update(m.id, type=str(memory_type)), done)

    def set_text(self, memory_id: str, text: str) -> None:
        self._act("edit", lambda: self._backend.service.update(memory_id, content=text))

    def edit_text(self) -> None:
        m = self.current_memory()
        if m is None or m.status not in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED):
            return
        dialog = TextDialog(
            "Edit memory",
            "Change the text, then save (Ctrl+Enter). Your assistants see the new text from now on.",
            m.content,
            self,
        )
        dialog.accepted.connect(lambda: self.set_text(m.id, dialog.text()))
        dialog.open()
        self.edit_dialog = dialog

    def forget(self) -> None:
        m = self.current_memory()
        if m is None or m.status is MemoryStatus.DELETED:
            return

        service = self._backend.service

        def done(forgotten: Memory) -> None:
            said = f"Forgotten: “{_quote(m.content)}”."
            offer = _Offer(
                forgotten, said, lambda: service.restore(m.id), f"Brought back: “{_quote(m.content)}”."
            )
            self._say(said, offer)
            self.acted.emit("forget")
            self.reload()

        self._ops.run(lambda: service.forget(m.id), done)

    def undo(self) -> None:
        """Undo the change on offer, unless its memory changed since (then say so and do nothing)."""
        offer = self._offer
        if offer is None:
            return
        self._say("")
        backend = self._backend

        def op() -> bool:
            if not offer.still_holds(backend.memory_or_none(offer.left.id)):
                return False
            offer.undo()
            return True

        def done(undone: bool) -> None:
            if undone:
                self._say(offer.undone)
                self._select_after = offer.left.id
            else:
                self._say("That memory changed in the meantime, so nothing was undone.")
            self.acted.emit("undo")
            self.reload()

        self._ops.run(op, done)

    def _on_link(self, url: QUrl) -> None:
        if url.scheme() == REOPEN_SCHEME:
            self.bring_back(url.path())
        elif url.scheme() == CONFLICT_SCHEME:
            self.open_conflict.emit(url.path())
        elif url.scheme() == VERSION_SCHEME:
            self.bring_back_text(url.path())
        elif url.scheme() == MEMORY_SCHEME:
            self.open_memory.emit(url.path())
        elif url.scheme() == REVIVE_SCHEME:
            self.bring_back_replaced(url.path())

    def show_memory(self, memory_id: str) -> None:
        """Select ``memory_id``, loading the view first when its row is not read yet."""
        if not self.select_id(memory_id):
            self._select_after = memory_id
            self.reload()

    def bring_back_replaced(self, memory_id: str | None = None) -> None:
        """Make a memory a newer one replaced active again (the selected one unless ``memory_id``);
        the newer one stays."""
        if memory_id is None:
            m = self.current_memory()
            if m is None or m.status is not MemoryStatus.SUPERSEDED:
                return
            memory_id = m.id
        service, mid = self._backend.service, memory_id

        def done(back: Memory) -> None:
            self._say(
                f"Brought back: “{_quote(back.content)}” is in {view_of(back.bucket).label} again, "
                "next to the memory that replaced it."
            )
            self.acted.emit("bring back replaced")
            self.reload()

        self._ops.run(lambda: service.bring_back_replaced(mid), done)

    def bring_back(self, conflict_id: str) -> None:
        """Undo a conflict's outcome from the history: what it retired is back, the conflict open again."""
        self._act("reopen", lambda: self._backend.reopen(conflict_id))

    def bring_back_text(self, earlier_id: str) -> None:
        """Make an earlier text from the history the memory's text again (an edit by the person)."""
        self._act("bring back text", lambda: self._backend.service.bring_back_text(earlier_id))

    def restore(self) -> None:
        m = self.current_memory()
        if m is not None and m.status is not MemoryStatus.ACTIVE:
            self._act(
                "restore",
                lambda: self._backend.service.restore(m.id),
                f"Restored: “{_quote(m.content)}” is back in {view_of(m.bucket).label}.",
            )

    def purge(self) -> None:
        m = self.current_memory()
        if m is None:
            return
        quoted = _quote(m.content)
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Erase for good",
            f"Erase “{quoted}” for good? It cannot be brought back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAccessibleName("Confirm erasing")
        box.accepted.connect(
            lambda: self._act(
                "purge", lambda: self._backend.service.purge(m.id), f"Erased for good: “{quoted}”."
            )
        )
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
        keyboard_friendly(self, buttons)

    def text(self) -> str:
        return self.editor.toPlainText()
