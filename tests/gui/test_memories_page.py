"""A memory view: every action round-trips through the store; filters and search go to the core."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from tallei_desktop.core.errors import NotFound
from tallei_desktop.core.models import ConflictStatus, MemoryStatus, MemoryType
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.models import Column
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.memories import PAGE_SIZE, MemoriesPage
from tests.gui.conftest import WAIT_MS


def _page(qtbot: QtBot, view: View, backend: Backend, ops: Ops) -> MemoriesPage:
    page = MemoriesPage(view, backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()
    return page


def _act(qtbot: QtBot, page: MemoriesPage, action: object) -> None:
    with qtbot.waitSignal(page.acted, timeout=WAIT_MS), qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        action()  # type: ignore[operator]


def test_the_view_lists_its_bucket_only(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("I prefer dark mode", platform="claude")
    service.save("The house was built in 1932", type="fact", platform="claude")
    page = _page(qtbot, View.PREFERENCES, backend, ops)
    assert [m.content for m in page.model.memories()] == ["I prefer dark mode"]
    assert page.count_label.text() == "1 memory"


def test_pin_edit_retype_round_trip(qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops) -> None:
    mid = service.save("The boiler was serviced in March", type="fact", platform="claude").id
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    page.select_id(mid)

    _act(qtbot, page, page.toggle_pin)
    assert service.get(mid).pinned
    assert page.selected_id() == mid
    _act(qtbot, page, page.toggle_pin)
    assert not service.get(mid).pinned

    page.edit_text()
    page.edit_dialog.editor.setPlainText("The boiler was serviced in April")
    _act(qtbot, page, page.edit_dialog.accept)
    assert service.get(mid).content == "The boiler was serviced in April"

    _act(qtbot, page, lambda: page.change_type(MemoryType.DECISION))
    assert service.get(mid).type is MemoryType.DECISION
    assert page.model.memories()[0].type is MemoryType.DECISION


def test_forget_then_undo(qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops) -> None:
    mid = service.save("Parking is on level 3", type="fact", platform="claude").id
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    page.select_id(mid)
    _act(qtbot, page, page.forget)
    assert service.get(mid).status is MemoryStatus.DELETED
    assert page.model.rowCount() == 0
    assert page.undo_offered and not page.undo_button.isHidden()
    _act(qtbot, page, page.undo)
    assert service.get(mid).status is MemoryStatus.ACTIVE
    assert [m.id for m in page.model.memories()] == [mid]


def test_restore_and_purge_from_the_forgotten_view(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    keep = service.save("Keep this one", type="fact", platform="claude").id
    erase = service.save("Erase this one", type="fact", platform="claude").id
    service.forget(keep)
    service.forget(erase)
    page = _page(qtbot, View.FORGOTTEN, backend, ops)
    page.select_id(keep)
    _act(qtbot, page, page.restore)
    assert service.get(keep).status is MemoryStatus.ACTIVE

    page.select_id(erase)
    page.purge()
    assert service.get(erase).status is MemoryStatus.DELETED  # nothing happens before the answer
    _act(qtbot, page, page.confirm_box.accept)
    with pytest.raises(NotFound):
        service.get(erase)


def test_purge_cancelled_erases_nothing(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("Still here", type="fact", platform="claude").id
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    page.select_id(mid)
    page.purge()
    page.confirm_box.reject()
    qtbot.waitUntil(lambda: ops.running == 0, timeout=WAIT_MS)
    assert service.get(mid).status is MemoryStatus.ACTIVE


def test_filters_and_search(qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops) -> None:
    service.save("We decided to use Postgres for billing", type="decision", platform="claude")
    service.save("The office wifi password rotates monthly", type="fact", platform="chatgpt")
    service.save("Billing runs on the first of the month", type="fact", platform="gemini")
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    assert page.model.rowCount() == 3
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.type_filter.setCurrentIndex(page.type_filter.findData("fact"))
    assert {m.type for m in page.model.memories()} == {MemoryType.FACT}
    assert page.platform_filter.findData("gemini") > 0
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.platform_filter.setCurrentIndex(page.platform_filter.findData("gemini"))
    assert [m.content for m in page.model.memories()] == ["Billing runs on the first of the month"]
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.type_filter.setCurrentIndex(0)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.platform_filter.setCurrentIndex(0)
    assert page.model.rowCount() == 3
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.search.setText("billing")
        page.search.returnPressed.emit()  # Enter runs it at once, without waiting for the pause
    assert {m.content for m in page.model.memories()} == {
        "We decided to use Postgres for billing",
        "Billing runs on the first of the month",
    }


def test_clicking_a_header_sorts_through_the_core(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    for text in ("Bananas are yellow", "Apples are red", "Cherries are dark"):
        service.save(text, type="fact", platform="claude")
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert [m.content[0] for m in page.model.memories()] == ["A", "B", "C"]


def test_the_keyboard_forgets_and_undoes(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("Typed away", type="fact", platform="claude").id
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    with qtbot.waitActive(page, timeout=WAIT_MS):
        page.show()
        page.activateWindow()
    page.select_id(mid)
    page.table.setFocus()
    with qtbot.waitSignal(page.acted, timeout=WAIT_MS):
        qtbot.keyClick(page.table, Qt.Key.Key_Delete)
    assert service.get(mid).status is MemoryStatus.DELETED
    with qtbot.waitSignal(page.acted, timeout=WAIT_MS):
        qtbot.keyClick(page.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert service.get(mid).status is MemoryStatus.ACTIVE


def test_details_show_the_provenance_trail(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("I prefer metric units", platform="claude").id
    service.save("I prefer metric units", platform="chatgpt")
    page = _page(qtbot, View.PREFERENCES, backend, ops)
    page.select_id(mid)
    qtbot.waitUntil(lambda: "confirmed by chatgpt" in page.detail.toPlainText(), timeout=WAIT_MS)
    text = page.detail.toPlainText()
    assert "saved by claude" in text and "I prefer metric units" in text


def test_details_show_a_settled_conflict_in_the_history(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    kept = service.save("I prefer window seats on flights", platform="claude").id
    service.save("I prefer aisle seats on flights", platform="gemini")
    service.drain()
    [conflict] = service.conflicts()
    service.resolve_conflict(conflict.id, "keep_first")
    page = _page(qtbot, View.PREFERENCES, backend, ops)
    assert [m.id for m in page.model.memories()] == [kept]
    page.select_id(kept)
    expected = "conflict with “I prefer aisle seats on flights” from gemini (you kept this one)"
    qtbot.waitUntil(lambda: expected in page.detail.toPlainText(), timeout=WAIT_MS)


def test_bring_back_from_the_history_undoes_a_conflict_outcome(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    kept = service.save("I prefer window seats on flights", platform="claude").id
    retired = service.save("I prefer aisle seats on flights", platform="gemini").id
    service.drain()
    [conflict] = service.conflicts()
    service.resolve_conflict(conflict.id, "keep_first")
    page = _page(qtbot, View.PREFERENCES, backend, ops)
    page.select_id(kept)
    qtbot.waitUntil(lambda: "bring back" in page.detail.toPlainText(), timeout=WAIT_MS)
    assert f"reopen:{conflict.id}" in page.detail.toHtml()

    _act(qtbot, page, lambda: page.detail.anchorClicked.emit(QUrl(f"reopen:{conflict.id}")))

    assert service.get(retired).status is MemoryStatus.ACTIVE
    assert [c.id for c in service.conflicts()] == [conflict.id]
    assert {m.id for m in page.model.memories()} == {kept, retired}
    page.select_id(kept)
    qtbot.waitUntil(lambda: "(open)" in page.detail.toPlainText(), timeout=WAIT_MS)
    assert "bring back" not in page.detail.toPlainText()
    assert service.conflicts()[0].status is ConflictStatus.OPEN


def _shown(qtbot: QtBot, view: View, backend: Backend, ops: Ops) -> MemoriesPage:
    page = _page(qtbot, view, backend, ops)
    page.resize(1000, 640)
    with qtbot.waitActive(page, timeout=WAIT_MS):
        page.show()
        page.activateWindow()
    return page


def _reload(qtbot: QtBot, page: MemoriesPage) -> None:
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()


def test_an_undo_offer_goes_once_its_memory_is_restored_elsewhere(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("I prefer metric units", platform="claude").id
    page = _page(qtbot, View.PREFERENCES, backend, ops)
    page.select_id(mid)
    _act(qtbot, page, page.forget)
    assert page.undo_offered

    restored = service.restore(mid)  # from the Forgotten page, or another process
    _reload(qtbot, page)  # what the store's change feed sets off

    assert not page.undo_offered
    assert page.undo_button.isHidden()
    assert page.message_label.text() == ""
    page.undo()
    assert ops.running == 0
    assert service.get(mid).updated_at == restored.updated_at


def test_undo_pressed_before_the_page_noticed_a_change_does_nothing_and_says_so(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("Parking is on level 3", type="fact", platform="claude").id
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    page.select_id(mid)
    _act(qtbot, page, page.forget)
    restored = service.restore(mid)

    _act(qtbot, page, page.undo)

    assert service.get(mid).updated_at == restored.updated_at
    assert "nothing was undone" in page.message_label.text()
    assert not page.undo_offered


def test_the_edit_dialog_saves_from_the_keyboard_and_speaks_plainly(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("The boiler was serviced in March", type="fact", platform="claude").id
    page = _shown(qtbot, View.LONG_TERM, backend, ops)
    page.select_id(mid)
    page.table.setFocus()
    qtbot.keyClick(page.table, Qt.Key.Key_F2)
    dialog = page.edit_dialog
    qtbot.waitUntil(lambda: dialog.isVisible() and dialog.editor.hasFocus(), timeout=WAIT_MS)
    assert " id" not in dialog.findChild(QLabel).text()
    dialog.editor.selectAll()
    qtbot.keyClicks(dialog.editor, "The boiler was serviced in April")
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Tab)  # moves the focus, inserts nothing
    assert not dialog.editor.hasFocus()
    assert dialog.text() == "The boiler was serviced in April"
    with qtbot.waitSignal(page.acted, timeout=WAIT_MS):
        qtbot.keyClick(dialog.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert service.get(mid).content == "The boiler was serviced in April"


def test_the_erase_question_names_the_memory(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("The spare key is under the blue flower pot", type="fact", platform="claude").id
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    page.select_id(mid)
    page.purge()
    assert "“The spare key is under the blue flower pot”" in page.confirm_box.text()
    page.confirm_box.reject()


def test_search_runs_as_you_type_and_the_count_says_how_many_match(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("We decided to use Postgres for billing", type="decision", platform="claude")
    service.save("The office wifi password rotates monthly", type="fact", platform="chatgpt")
    service.save("Billing runs on the first of the month", type="fact", platform="gemini")
    page = _shown(qtbot, View.LONG_TERM, backend, ops)
    width = page.search.width()
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        qtbot.keyClicks(page.search, "billing")
    assert {m.content for m in page.model.memories()} == {
        "We decided to use Postgres for billing",
        "Billing runs on the first of the month",
    }
    assert page.count_label.text() == "2 matches"
    assert page.search.width() == width

    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.search.setText("xylophone")
    assert page.model.rowCount() == 0
    assert page.count_label.text() == "No match"
    assert page.empty_label.isVisible()
    assert page.empty_label.text() == "No memory matches “xylophone”."
    assert page.search.width() == width


def test_typing_fast_searches_once_and_only_the_newest_answer_lands(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("We decided to use Postgres for billing", type="decision", platform="claude")
    service.save("The office wifi password rotates monthly", type="fact", platform="chatgpt")
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    loads: list[int] = []
    page.loaded.connect(lambda: loads.append(page.model.rowCount()))
    # The keys come far faster than the pause that starts a search, even on a busy machine.
    page._search_timer.setInterval(1_500)
    for text in ("post", "postgres", "wifi"):
        page.search.setText(text)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        pass
    assert [m.content for m in page.model.memories()] == ["The office wifi password rotates monthly"]
    # Two searches in flight at once: the older one's answer is dropped when it lands last.
    page.search.blockSignals(True)
    page.search.setText("postgres")
    page._apply_filters()
    page.search.setText("wifi password")
    page._apply_filters()
    page.search.blockSignals(False)
    qtbot.waitUntil(lambda: ops.running == 0, timeout=WAIT_MS)
    assert [m.content for m in page.model.memories()] == ["The office wifi password rotates monthly"]
    assert len(loads) == 2


def test_a_search_ranks_by_relevance_until_a_header_is_clicked(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    target = service.save("Zebra crossings near the school item 42", type="fact", platform="claude").id
    for n in range(5):
        service.save(f"Apples project item {n}", type="fact", platform="claude")
    pinned = service.save("Pinned but old project note", type="fact", platform="claude").id
    service.pin(pinned)
    service.save("Apples project item 9", type="fact", platform="claude")
    page = _page(qtbot, View.LONG_TERM, backend, ops)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.table.sortByColumn(Column.CONTENT, Qt.SortOrder.AscendingOrder)
    assert page.model.memories()[0].content.startswith("Apples")

    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.search.setText("item 42")
    assert page.model.memories()[0].id == target
    assert not page.table.horizontalHeader().isSortIndicatorShown()

    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.table.sortByColumn(Column.CONTENT, Qt.SortOrder.AscendingOrder)
    assert page.model.memories()[-1].id == target

    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.search.clear()
    assert page.model.memories()[0].id == pinned
    assert page.model.memories()[1].content == "Apples project item 9"
    assert page.count_label.text() == "8 memories"


def test_the_default_order_puts_pinned_first(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    pinned = service.save("I prefer metric units", platform="claude").id
    service.pin(pinned)
    later = service.save("I prefer short answers", platform="claude").id
    page = _page(qtbot, View.PREFERENCES, backend, ops)
    assert [m.id for m in page.model.memories()] == [pinned, later]


def test_recent_lists_what_happened_last_first_and_shows_when(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    old = service.save(
        "The ski trip to the Alps",
        type="event",
        platform="claude",
        occurred_at=datetime(2019, 2, 10, 12, tzinfo=UTC),
    ).id
    new = service.save("The dentist appointment went fine", type="event", platform="claude").id
    page = _page(qtbot, View.RECENT, backend, ops)
    assert [m.id for m in page.model.memories()] == [new, old]
    assert not page.table.isColumnHidden(Column.HAPPENED)
    cell = page.model.index(1, Column.HAPPENED).data()
    assert cell == datetime(2019, 2, 10, 12, tzinfo=UTC).astimezone().strftime("%Y-%m-%d")
    assert page.model.index(1, Column.SAVED).data() == datetime.now().astimezone().strftime("%Y-%m-%d")
    preferences = _page(qtbot, View.PREFERENCES, backend, ops)
    assert preferences.table.isColumnHidden(Column.HAPPENED)
    assert not preferences.table.isColumnHidden(Column.SAVED)


def test_a_type_change_says_where_the_memory_went_and_can_be_undone(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("The team offsite in Lisbon", type="event", platform="claude").id
    page = _shown(qtbot, View.RECENT, backend, ops)
    page.select_id(mid)
    assert page.type_box.currentData() == "event"
    _act(qtbot, page, lambda: page.change_type(MemoryType.FACT))
    assert service.get(mid).type is MemoryType.FACT
    assert page.model.rowCount() == 0
    assert page.message_label.text() == "Moved to Long-term as a fact: “The team offsite in Lisbon”."
    assert page.undo_offered
    assert page.type_box.currentData() is None  # nothing selected: the old type is not shown
    assert not page.type_box.isEnabled()

    _act(qtbot, page, page.undo)
    assert service.get(mid).type is MemoryType.EVENT
    assert page.selected_id() == mid
    assert page.message_label.text() == "Back to an event: “The team offsite in Lisbon”."


def test_type_filters_offer_only_the_types_a_view_can_hold(qtbot: QtBot, backend: Backend, ops: Ops) -> None:
    def offered(view: View) -> list[str]:
        box = MemoriesPage(view, backend, ops).type_filter
        qtbot.addWidget(box.parentWidget())
        return [box.itemData(i) for i in range(1, box.count())]

    assert offered(View.PREFERENCES) == ["preference"]
    # Events and notes that assistants keep using graduate to Long-term and keep their type.
    assert set(offered(View.LONG_TERM)) == {"fact", "decision", "lesson", "failure", "event", "note"}
    assert "preference" not in offered(View.LONG_TERM)
    assert set(offered(View.RECENT)) == {"event", "note"}
    assert set(offered(View.FORGOTTEN)) == {str(t) for t in MemoryType}
    assert set(offered(View.ARCHIVED)) == {str(t) for t in MemoryType}


def test_an_empty_view_says_what_it_holds(qtbot: QtBot, backend: Backend, ops: Ops) -> None:
    page = _shown(qtbot, View.PREFERENCES, backend, ops)
    assert page.empty_label.isVisible()
    assert page.empty_label.text().startswith("Preferences your assistants save appear here")
    assert page.empty_label.geometry() == page.table.viewport().rect()


def test_messages_do_not_move_the_table_and_undo_keeps_the_selection(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("Parking is on level 3", type="fact", platform="claude").id
    service.save("The boiler was serviced in March", type="fact", platform="claude")
    page = _shown(qtbot, View.LONG_TERM, backend, ops)
    top = page.table.mapTo(page, page.table.rect().topLeft())
    page.select_id(mid)
    _act(qtbot, page, page.forget)
    assert not page.undo_button.isHidden()
    qtbot.waitUntil(lambda: page.undo_button.isVisible(), timeout=WAIT_MS)
    assert page.table.mapTo(page, page.table.rect().topLeft()) == top
    _act(qtbot, page, page.undo)
    assert page.table.mapTo(page, page.table.rect().topLeft()) == top
    assert page.selected_id() == mid


def test_rows_in_an_open_conflict_are_marked_and_the_details_link_opens_it(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    window = service.save("I prefer window seats on flights", platform="claude").id
    aisle = service.save("I prefer aisle seats on flights", platform="gemini").id
    calm = service.save("I prefer short answers", platform="claude").id
    service.drain()
    [conflict] = service.conflicts()
    page = _page(qtbot, View.PREFERENCES, backend, ops)
    model = page.model
    for mid in (window, aisle):
        index = model.index(model.row_of(mid), Column.CONTENT)
        assert index.data(Qt.ItemDataRole.DecorationRole) is not None
        assert "Your assistants disagree about this; see Conflicts" in index.data(Qt.ItemDataRole.ToolTipRole)
    quiet = model.index(model.row_of(calm), Column.CONTENT)
    assert quiet.data(Qt.ItemDataRole.DecorationRole) is None
    assert "disagree" not in quiet.data(Qt.ItemDataRole.ToolTipRole)

    with qtbot.waitSignal(page.open_conflict, timeout=WAIT_MS) as opened:
        page.detail.anchorClicked.emit(QUrl(f"conflict:{conflict.id}"))
    assert opened.args == [conflict.id]

    service.resolve_conflict(conflict.id, "keep_both")
    _reload(qtbot, page)
    index = model.index(model.row_of(window), Column.CONTENT)
    assert index.data(Qt.ItemDataRole.DecorationRole) is None


def test_ctrl_end_goes_to_the_last_memory_of_the_whole_listing(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    first = service.save("Fact number 0 about the garden", type="fact", platform="claude").id
    for i in range(1, PAGE_SIZE + 30):
        service.save(f"Fact number {i} about the garden", type="fact", platform="claude")
    page = _shown(qtbot, View.LONG_TERM, backend, ops)
    assert page.model.rowCount() < page.model.total
    page.select_row(0)
    page.table.setFocus()
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        qtbot.keyClick(page.table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert page.model.rowCount() == page.model.total == PAGE_SIZE + 30
    assert page.selected_id() == first


def test_a_type_change_on_archived_says_the_memory_is_active_again(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("The boiler was serviced in March", type="fact", platform="claude").id
    later = datetime.now(UTC) + timedelta(days=400)
    service.now = lambda: later  # a year and more untouched
    assert service.run_maintenance()[1] == 1
    page = _page(qtbot, View.ARCHIVED, backend, ops)
    page.select_id(mid)
    _act(qtbot, page, lambda: page.change_type(MemoryType.DECISION))
    assert service.get(mid).status is MemoryStatus.ACTIVE  # an edit brings it back
    assert page.model.rowCount() == 0
    assert (
        page.message_label.text() == "Moved to Long-term as a decision: “The boiler was serviced in March”."
    )


def test_an_unfinished_word_finds_its_memory_and_an_edit_keeps_it_selected(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("I like my coffee black", type="preference", platform="claude").id
    service.save("I prefer tabs", type="preference", platform="claude")
    page = _page(qtbot, View.PREFERENCES, backend, ops)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.search.setText("coffe")  # typed as far as this, the search runs by itself
    assert [m.id for m in page.model.memories()] == [mid]
    page.select_row(0)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.set_text(mid, "I like my coffee black, no sugar")
    assert page.selected_id() == mid
    assert page.current_memory() is not None
    assert page.current_memory().content == "I like my coffee black, no sugar"  # type: ignore[union-attr]
