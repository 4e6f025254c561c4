"""The table model: Qt's model tester, paging through fetchMore, sorting through the core."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6 import QtGui
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel
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
    assert cell(Column.REFERENCES) == "1"  # confirmed once since it was saved
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
    assert model.data(model.index(row, Column.REFERENCES)) == "1"  # confirmed once since it was saved


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


def test_the_used_columns_say_exactly_what_they_count(service: MemoryService, backend: Backend) -> None:
    service.save("I prefer tea to coffee", platform="gemini")
    service.save("I prefer tea to coffee", platform="cursor")
    page = backend.page(ListQuery(View.PREFERENCES))
    model = MemoryTableModel()
    model.replace(page.memories, page.total)
    tip = model.headerData(Column.REFERENCES, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "used or confirmed it since it was saved" in tip
    assert "your own looks do not count" in tip
    # Saved once, confirmed once: used or confirmed once since the save, as the details pane says.
    assert model.index(0, Column.REFERENCES).data() == "1"
    cell = model.index(0, Column.REFERENCES).data(Qt.ItemDataRole.ToolTipRole)
    assert cell == "Used or confirmed by assistants 1 time since it was saved"
    last = model.index(0, Column.LAST_USED).data(Qt.ItemDataRole.ToolTipRole)
    assert last.startswith("Last used or confirmed by an assistant 20")
    service.save("I like my coffee black", platform="gemini")
    fresh = backend.page(ListQuery(View.PREFERENCES, text="coffee black"))
    model.replace(fresh.memories, fresh.total)
    # Saved a moment ago and never used: 0 beside "never", not 1 beside "never".
    assert model.index(0, Column.REFERENCES).data() == "0"
    assert model.index(0, Column.LAST_USED).data() == "never"
    for column in Column:
        assert model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)


def test_a_long_memory_has_a_wrapped_tooltip(qtbot: QtBot, service: MemoryService, backend: Backend) -> None:
    long_text = " ".join(f"word{i} & <tag>" for i in range(150))
    service.save(long_text, type="fact", platform="claude")
    page = backend.page(ListQuery(View.LONG_TERM))
    model = MemoryTableModel()
    model.replace(page.memories, page.total)
    tip = model.index(0, Column.CONTENT).data(Qt.ItemDataRole.ToolTipRole)
    assert QtGui.Qt.mightBeRichText(tip)  # Qt wraps rich-text tooltips; plain ones run on in one line
    # The tooltip is a label that wraps words the way QToolTip does with rich text.
    label = QLabel(tip)
    qtbot.addWidget(label)
    label.setWordWrap(True)
    assert label.sizeHint().width() < 800
    document = QTextDocument()
    document.setHtml(tip)
    assert document.toPlainText() == long_text


def test_saved_and_happened_show_their_dates(service: MemoryService, backend: Backend) -> None:
    when = datetime(2019, 2, 10, 12, tzinfo=UTC)
    service.save("The ski trip to the Alps", type="event", platform="claude", occurred_at=when)
    service.save("Bought a new kettle", type="note", platform="claude")
    service.save("The dentist appointment went fine", type="event", platform="claude")
    page = backend.page(ListQuery(View.RECENT))
    model = MemoryTableModel()
    model.replace(page.memories, page.total)
    today = datetime.now().astimezone().strftime("%Y-%m-%d")
    rows = {m.content: model.row_of(m.id) for m in model.memories()}
    trip, kettle = rows["The ski trip to the Alps"], rows["Bought a new kettle"]
    dentist = rows["The dentist appointment went fine"]
    assert model.index(trip, Column.SAVED).data() == today
    assert model.index(trip, Column.HAPPENED).data() == when.astimezone().strftime("%Y-%m-%d")
    assert model.index(kettle, Column.SAVED).data() == today
    assert model.index(kettle, Column.HAPPENED).data() == ""  # a note saved as it happened
    assert model.index(dentist, Column.HAPPENED).data() == ""  # told as it happened: Saved says it
    assert model.headerData(Column.SAVED, Qt.Orientation.Horizontal) == "Saved"
    assert model.headerData(Column.HAPPENED, Qt.Orientation.Horizontal) == "Happened"


def test_a_reload_repaints_only_the_rows_that_changed(
    qtbot: QtBot, service: MemoryService, backend: Backend
) -> None:
    ids = _fill(service, 5)
    model = MemoryTableModel()
    page = backend.page(ListQuery(View.LONG_TERM, sort=SortKey.CONTENT))
    model.replace(page.memories, page.total)
    row = model.row_of(ids[2])
    changes: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda first, last, _roles=(): changes.append((first.row(), last.row())))
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))

    same = backend.page(ListQuery(View.LONG_TERM, sort=SortKey.CONTENT))
    model.replace(same.memories, same.total)
    assert changes == [] and resets == []  # nothing new: nothing to repaint

    service.pin(ids[2])
    after = backend.page(ListQuery(View.LONG_TERM, sort=SortKey.CONTENT))
    model.replace(after.memories, after.total)
    assert model.row_of(ids[2]) == row  # sorted by text, the pin does not move it
    assert changes == [(row, row)] and resets == []
    assert model.data(model.index(row, Column.PINNED)) == "Pinned"  # the cached text was dropped
