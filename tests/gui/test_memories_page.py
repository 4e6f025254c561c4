"""A memory view: every action round-trips through the store; filters and search go to the core."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QUrl
from pytestqt.qtbot import QtBot

from tallei_desktop.core.errors import NotFound
from tallei_desktop.core.models import ConflictStatus, MemoryStatus, MemoryType
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.memories import MemoriesPage
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
    assert not page.undo_bar.isHidden()
    _act(qtbot, page, page.undo_forget)
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
        page.search.returnPressed.emit()
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
