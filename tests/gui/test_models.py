"""The table model: Qt's model tester, paging through fetchMore, sorting through the core."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from tallei_desktop.core.models import SortKey
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, ListQuery, View
from tallei_desktop.gui.models import ID_ROLE, MEMORY_ROLE, Column, MemoryTableModel


def _fill(service: MemoryService, n: int) -> list[str]:
    return [
        service.save(f"Fact number {i} about the garden", type="fact", platform="claude").id for i in range(n)
    ]


def test_the_model_passes_qt_model_tester(
    qtmodeltester: ModelTester, service: MemoryService, backend: Backend
) -> None:
    _fill(service, 12)
    service.pin(service.save("I prefer short answers", platform="chatgpt").id)
    page = backend.page(ListQuery(View.LONG_TERM), limit=5)
    model = MemoryTableModel()
    model.replace(page.memories, page.total)
    qtmodeltester.check(model, force_py=True)
    more = backend.page(ListQuery(View.LONG_TERM), offset=5, limit=5)
    model.append(more.offset, more.memories, more.total)
    assert model.rowCount() == 10
    qtmodeltester.check(model, force_py=True)


def test_cells_show_each_column(service: MemoryService, backend: Backend) -> None:
    mid = service.save("I prefer tea to coffee", platform="gemini").id
    service.save("I prefer tea to coffee", platform="cursor")  # confirms: two platforms, used twice
    service.pin(mid)
    page = backend.page(ListQuery(View.PREFERENCES))
    model = MemoryTableModel()
    model.replace(page.memories, page.total)
    cell = lambda c: model.data(model.index(0, c))  # noqa: E731
    assert cell(Column.CONTENT) == "I prefer tea to coffee"
    assert cell(Column.TYPE) == "preference"
    assert cell(Column.PLATFORMS) == "gemini, cursor"
    assert cell(Column.CONFIDENCE) == "Med"
    assert cell(Column.REFERENCES) == "2"
    assert cell(Column.PINNED) == "Pinned"
    assert model.data(model.index(0, 0), ID_ROLE) == mid
    assert model.data(model.index(0, 0), MEMORY_ROLE).id == mid
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Memory"


def test_fetch_more_asks_for_the_next_page_once(
    qtbot: QtBot, service: MemoryService, backend: Backend
) -> None:
    _fill(service, 7)
    page = backend.page(ListQuery(View.LONG_TERM), limit=3)
    model = MemoryTableModel()
    model.replace(page.memories, page.total)
    assert model.canFetchMore(QModelIndex())
    with qtbot.waitSignal(model.more_wanted) as wanted:
        model.fetchMore(QModelIndex())
    assert wanted.args == [3]
    assert not model.canFetchMore(QModelIndex())  # one request at a time
    nxt = backend.page(ListQuery(View.LONG_TERM), offset=3, limit=3)
    model.append(3, nxt.memories, nxt.total)
    assert model.rowCount() == 6 and model.canFetchMore(QModelIndex())
    ids = [m.id for m in model.memories()]
    assert len(set(ids)) == 6


def test_sorting_asks_the_core(qtbot: QtBot) -> None:
    model = MemoryTableModel()
    with qtbot.waitSignal(model.sort_requested) as asked:
        model.sort(Column.CONTENT, Qt.SortOrder.AscendingOrder)
    assert asked.args == [SortKey.CONTENT, False]


def test_the_same_rows_again_update_in_place_without_a_reset(
    qtbot: QtBot, service: MemoryService, backend: Backend
) -> None:
    ids = _fill(service, 3)
    model = MemoryTableModel()
    page = backend.page(ListQuery(View.LONG_TERM))
    model.replace(page.memories, page.total)
    service.save("Fact number 1 about the garden", platform="gemini")  # confirms: same row, used twice
    again = backend.page(ListQuery(View.LONG_TERM))
    with qtbot.assertNotEmitted(model.modelReset), qtbot.waitSignal(model.dataChanged):
        model.replace(again.memories, again.total)
    row = model.row_of(ids[1])
    assert model.data(model.index(row, Column.REFERENCES)) == "2"


def test_backend_filters_and_sorts_through_the_core(service: MemoryService, backend: Backend) -> None:
    service.save("Zebras live in Africa", type="fact", platform="claude")
    service.save("Apples grow on trees", type="fact", platform="chatgpt")
    service.save("We decided to use Postgres", type="decision", platform="claude")
    by_content = backend.page(ListQuery(View.LONG_TERM, sort=SortKey.CONTENT, descending=False))
    assert [m.content[0] for m in by_content.memories] == ["A", "W", "Z"]
    decisions = backend.page(ListQuery(View.LONG_TERM, types=frozenset({"decision"})))  # type: ignore[arg-type]
    assert [m.content for m in decisions.memories] == ["We decided to use Postgres"]
    from_chatgpt = backend.page(ListQuery(View.LONG_TERM, platforms=frozenset({"chatgpt"})))
    assert from_chatgpt.total == 1 and from_chatgpt.memories[0].content.startswith("Apples")
    found = backend.page(ListQuery(View.LONG_TERM, text="zebras"))
    assert [m.content for m in found.memories] == ["Zebras live in Africa"]
