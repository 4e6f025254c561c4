"""Conflicts: each outcome written through the core, and one notification per conflict from any process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QStackedWidget, QWidget
from pytestqt.qtbot import QtBot

from tallei_desktop.config import load_settings
from tallei_desktop.core.models import Conflict, ConflictStatus, MemoryStatus
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.main_window import MainWindow, PageName
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.conflicts import ConflictsPage
from tallei_desktop.gui.pages.memories import MemoriesPage
from tallei_desktop.gui.tray import Tray
from tallei_desktop.gui.watcher import StoreWatcher
from tests.gui.conftest import TIMEOUT_S, WAIT_MS

REPO = Path(__file__).resolve().parents[2]

#: Another process on the same store: saves two disagreeing preferences and finishes them, which flags
#: the conflict there, not here.
OTHER_PROCESS = """
import sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests.gui.conftest import open_service
service = open_service(Path({path!r}))
for text, platform, *kind in {saves!r}:
    service.save(text, platform=platform, type=kind[0] if kind else None)
service.drain()
service.close()
"""


def run_other_process(db_path: Path, *saves: tuple[str, ...]) -> None:
    """Save (text, platform[, type]) from another process on the same store, then finish its work."""
    code = OTHER_PROCESS.format(repo=str(REPO), path=str(db_path), saves=list(saves))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr


def _conflict(service: MemoryService) -> tuple[str, str]:
    a = service.save("I prefer window seats on flights", platform="claude").id
    b = service.save("I prefer aisle seats on flights", platform="gemini").id
    service.drain()
    return a, b


#: Pairs of preferences two assistants disagree on, each flagged as one conflict.
PAIRS = [
    (("I prefer window seats on flights", "claude"), ("I prefer aisle seats on flights", "gemini")),
    (("I prefer tabs for indentation", "claude"), ("I prefer spaces for indentation", "chatgpt")),
    (("I prefer dark mode in my code editor", "cursor"), ("I prefer light mode in my code editor", "claude")),
]


def _conflicts(service: MemoryService, n: int) -> list[Conflict]:
    """``n`` open conflicts, listed newest first as the page gets them."""
    for first, second in PAIRS[:n]:
        service.save(first[0], platform=first[1])
        service.save(second[0], platform=second[1])
        service.drain()
    found = service.conflicts()
    assert len(found) == n
    return found


def _page(qtbot: QtBot, backend: Backend, ops: Ops, conflicts: list[Conflict]) -> ConflictsPage:
    page = ConflictsPage(backend, ops)
    qtbot.addWidget(page)
    page.resize(900, 520)
    page.set_conflicts(conflicts)
    page.show()
    qtbot.waitExposed(page)
    return page


@pytest.mark.parametrize(
    ("button", "survivors", "said"),
    [
        (
            "first",
            {"a"},
            "Kept “I prefer window seats on flights” from claude; "
            "set aside “I prefer aisle seats on flights” from gemini.",
        ),
        (
            "second",
            {"b"},
            "Kept “I prefer aisle seats on flights” from gemini; "
            "set aside “I prefer window seats on flights” from claude.",
        ),
        (
            "both",
            {"a", "b"},
            "Kept both “I prefer window seats on flights” from claude and "
            "“I prefer aisle seats on flights” from gemini.",
        ),
        (
            "merge",
            set(),
            "Merged “I prefer window seats on flights” from claude and “I prefer aisle seats on flights” "
            "from gemini into “Window seat on long flights, aisle on s…”.",
        ),
    ],
)
def test_each_outcome_round_trips(
    qtbot: QtBot,
    service: MemoryService,
    backend: Backend,
    ops: Ops,
    button: str,
    survivors: set[str],
    said: str,
) -> None:
    a, b = _conflict(service)
    [conflict] = service.conflicts()
    page = _page(qtbot, backend, ops, [conflict])
    assert page.current() == conflict  # opening the page selects the newest
    assert page.first.text.text() == "I prefer window seats on flights"
    assert "gemini" in page.second.source.text()
    clicks = {
        "first": page.first.keep,
        "second": page.second.keep,
        "both": page.keep_both,
        "merge": page.merge,
    }
    merged_text = "Window seat on long flights, aisle on short ones"
    if button == "merge":
        qtbot.keyClicks(page.merged, merged_text)
    with qtbot.waitSignal(page.resolved, timeout=WAIT_MS):
        clicks[button].click()
    assert not service.conflicts()
    [done] = service.conflicts(include_resolved=True)
    assert done.status is ConflictStatus.RESOLVED
    ids = {"a": a, "b": b}
    assert {k for k, mid in ids.items() if service.get(mid).status is MemoryStatus.ACTIVE} == survivors
    assert not service.get(a).pinned and not service.get(b).pinned
    if button == "merge":
        [merged] = [m for m in service.list(bucket="preference") if m.id not in (a, b)]
        assert merged.content == merged_text
    assert page.list.count() == 0 and page.empty.isVisible() and not page.details.isVisible()
    assert page.status.text() == said and page.undo_button.isVisible()

    # Undo, right after: the conflict is open and listed again, the memories as they were.
    with qtbot.waitSignal(page.reopened, timeout=WAIT_MS) as reopened:
        page.undo_button.click()
    assert reopened.args == [done.id]
    assert [c.id for c in service.conflicts()] == [done.id]
    assert {service.get(m).status for m in (a, b)} == {MemoryStatus.ACTIVE}
    assert not service.get(a).pinned and not service.get(b).pinned
    assert page.current() is not None and page.current().id == done.id  # type: ignore[union-attr]
    assert not page.undo_button.isVisible()
    assert page.status.text() == (
        "Undone: “I prefer window seats on flights” from claude and “I prefer aisle seats on flights” "
        "from gemini wait for your decision again."
    )
    assert service.count() == 2  # a merged memory is gone again
    assert page.merged.toPlainText() == (merged_text if button == "merge" else "")


def test_the_merge_box_starts_empty_and_a_failed_merge_keeps_the_text(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    first, second = _conflicts(service, 2)
    page = _page(qtbot, backend, ops, [first, second])
    assert (
        page.merged.toPlainText() == "" and page.merged.placeholderText() == "Write the one version to keep…"
    )
    assert not page.merge.isEnabled()  # nothing to merge into yet
    qtbot.keyClicks(page.merged, "Tabs in Go, spaces elsewhere")
    assert page.merge.isEnabled()
    # A draft belongs to its conflict: switching away and back keeps it, the other starts empty.
    page.list.setCurrentRow(1)
    assert page.merged.toPlainText() == ""
    page.list.setCurrentRow(0)
    assert page.merged.toPlainText() == "Tabs in Go, spaces elsewhere"

    service.resolve_conflict(first.id, "keep_first")  # settled elsewhere meanwhile: the merge fails
    with qtbot.waitSignal(ops.idle, timeout=WAIT_MS):
        page.merge.click()
    qtbot.waitUntil(lambda: page.merge.isEnabled(), timeout=WAIT_MS)
    assert page.status.text().startswith("Nothing was changed: ")
    assert "already resolved" in page.status.text() and not page.undo_button.isVisible()
    assert page.merged.toPlainText() == "Tabs in Go, spaces elsewhere"
    assert page.current() == first


def test_list_entries_show_both_sides_wrapped_without_sideways_scrolling(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    long_a = (
        "I prefer window seats on flights, so I can lean on the wall and sleep on the long night "
        "flights to my sister in Lisbon, and watch the clouds and the coast on the way back"
    )
    long_b = long_a.replace("window", "aisle")
    service.save(long_a, platform="claude", type="preference")
    service.save(long_b, platform="chatgpt", type="preference")
    service.drain()
    [conflict] = service.conflicts()
    page = _page(qtbot, backend, ops, [conflict])
    page.split.setSizes([260, 640])
    qtbot.waitUntil(lambda: page.list.width() < 300, timeout=WAIT_MS)
    item = page.list.item(0)
    assert item.text() == f"claude: {long_a}\nchatgpt: {long_b}"
    viewport = page.list.viewport()
    qtbot.waitUntil(lambda: page.list.visualItemRect(item).width() <= viewport.width(), timeout=WAIT_MS)
    rect = page.list.visualItemRect(item)
    line = page.list.fontMetrics().lineSpacing()
    assert rect.height() >= 6 * line  # both texts, each wrapped over several lines
    assert page.list.horizontalScrollBar().maximum() == 0
    assert not page.list.horizontalScrollBar().isVisible()


def test_after_settling_nothing_is_selected_and_nothing_moves(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    newest, older, oldest = _conflicts(service, 3)
    page = _page(qtbot, backend, ops, [newest, older, oldest])
    assert page.current() == newest
    assert page.status.text() == (
        "3 conflicts wait for your decision: keep one side, keep both, or merge them into one."
    )
    keep_at = page.first.keep.mapTo(page, QPoint(0, 0))
    list_at = page.list.mapTo(page, QPoint(0, 0))
    with qtbot.waitSignal(page.resolved, timeout=WAIT_MS):
        page.first.keep.click()
    # The next conflict is not put under the mouse: a second click there settles nothing.
    assert page.current() is None and not page.first.keep.isVisible() and page.pick.isVisible()
    page.first.keep.click()
    assert [c.id for c in service.conflicts()] == [older.id, oldest.id]
    # The status line took no room from the page: the list and the cards stay where they were.
    assert page.list.mapTo(page, QPoint(0, 0)) == list_at
    page.list.setCurrentRow(0)
    assert page.current() == older
    assert page.first.keep.mapTo(page, QPoint(0, 0)) == keep_at
    assert page.status.text().startswith("Kept “I prefer dark mode in my code editor” from cursor; ")


def test_an_empty_page_shows_one_calm_line_and_no_cards(qtbot: QtBot, backend: Backend, ops: Ops) -> None:
    page = _page(qtbot, backend, ops, [])
    assert page.empty.isVisible()
    assert page.empty.text() == "No conflicts wait for you. When two assistants disagree, they show up here."
    for hidden in (page.list, page.first, page.second, page.merged, page.keep_both, page.pick):
        assert not hidden.isVisible()


def test_the_keep_buttons_answer_alt_1_and_alt_2(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    newest, older = _conflicts(service, 2)
    page = _page(qtbot, backend, ops, [newest, older])
    with qtbot.waitActive(page, timeout=WAIT_MS):
        page.activateWindow()
    with qtbot.waitSignal(page.resolved, timeout=WAIT_MS) as first:
        qtbot.keyClick(page, Qt.Key.Key_1, Qt.KeyboardModifier.AltModifier)
    assert first.args == [newest.id, "keep_first"]
    page.list.setFocus()
    qtbot.keyClick(page.list, Qt.Key.Key_Down)  # the keyboard picks the next one
    assert page.current() == older
    with qtbot.waitSignal(page.resolved, timeout=WAIT_MS) as second:
        qtbot.keyClick(page, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    assert second.args == [older.id, "keep_second"]


def test_opening_the_page_selects_the_newest_or_exactly_the_one_asked_for(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    newest, older, oldest = _conflicts(service, 3)
    window = QStackedWidget()
    qtbot.addWidget(window)
    elsewhere = QWidget()
    page = ConflictsPage(backend, ops)
    window.addWidget(elsewhere)
    window.addWidget(page)
    window.show()
    qtbot.waitExposed(window)
    # Seen once with two conflicts; a third arrives while the person is on another page.
    page.set_conflicts([older, oldest])
    window.setCurrentWidget(page)
    assert page.current() == older
    window.setCurrentWidget(elsewhere)
    page.set_conflicts([newest, older, oldest])
    window.setCurrentWidget(page)  # "Open them…": the newest, not the one selected before
    assert page.current() == newest
    # Asked for by id (a notification): exactly that one, listed already or not yet.
    window.setCurrentWidget(elsewhere)
    page.show_conflict(oldest.id)
    window.setCurrentWidget(page)
    assert page.current() == oldest
    window.setCurrentWidget(elsewhere)
    page.set_conflicts([older])
    page.show_conflict(newest.id)
    window.setCurrentWidget(page)
    assert page.current() is None
    page.set_conflicts([newest, older])
    assert page.current() == newest
    # Asked for before it is listed: the selection stays put until it arrives.
    page.show_conflict(oldest.id)
    page.set_conflicts([newest, older])
    assert page.current() == newest
    page.set_conflicts([newest, older, oldest])
    assert page.current() == oldest


def test_the_window_opens_conflicts_on_the_newest_or_on_the_one_a_notification_named(
    qtbot: QtBot, tmp_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    newest, older, oldest = _conflicts(service, 3)
    settings = load_settings(
        environ={"TALLEI_DATA_DIR": str(tmp_path / "data"), "TALLEI_MODEL_DIR": str(tmp_path / "no-model")},
        config_path=tmp_path / "absent.toml",
    )
    window = MainWindow(settings, backend, ops, has_tray=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    page = window.conflicts_page
    window.set_conflicts([older, oldest])
    window.show_page(PageName.CONFLICTS)
    assert page.current() == older
    window.show_page(PageName.PREFERENCES)
    window.set_conflicts([newest, older, oldest])  # a new one while the person is elsewhere
    window.conflict_banner.click()  # "Open them…"
    assert page.isVisible() and page.current() == newest
    window.show_page(PageName.PREFERENCES)
    window.show_conflict(oldest.id)  # a click on its notification
    assert page.current() == oldest


def test_a_conflict_flagged_by_another_process_raises_exactly_one_notification(
    qtbot: QtBot, db_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    tray = Tray()
    watcher = StoreWatcher(backend, ops, poll_ms=100)
    watcher.conflict_opened.connect(tray.notify_conflict)
    notified: list[str] = []
    tray.notified.connect(notified.append)
    clicked: list[str] = []
    tray.conflict_clicked.connect(clicked.append)
    with qtbot.waitSignal(watcher.conflicts, timeout=WAIT_MS):
        watcher.start()
    with qtbot.waitSignal(tray.notified, timeout=2_000 + WAIT_MS):
        run_other_process(
            db_path,
            ("I prefer tabs for indentation", "claude"),
            ("I prefer spaces for indentation", "chatgpt"),
        )
    [conflict] = service.conflicts()
    assert notified == [conflict.id]
    # More changes, seen by later polls, announce nothing again.
    with qtbot.waitSignal(watcher.changed, timeout=WAIT_MS):
        service.save("The cat is called Miso", type="fact", platform="claude")
    with qtbot.waitSignal(watcher.changed, timeout=WAIT_MS):
        service.save("The dog is called Pepper", type="fact", platform="claude")
    assert notified == [conflict.id]
    tray.icon.messageClicked.emit()
    assert clicked == [conflict.id]
    watcher.stop()


def test_views_follow_another_process_keeping_the_selection(
    qtbot: QtBot, db_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    for i in range(30):
        service.save(f"Fact {i:02d} about the allotment", type="fact", platform="claude")
    page = MemoriesPage(View.LONG_TERM, backend, ops)
    qtbot.addWidget(page)
    watcher = StoreWatcher(backend, ops, poll_ms=100)
    watcher.changed.connect(page.mark_dirty)
    page.resize(600, 300)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.show()
    chosen = page.model.memories()[20].id
    page.select_id(chosen)
    scroll = page.table.verticalScrollBar().value()
    assert scroll > 0
    with qtbot.waitSignal(watcher.conflicts, timeout=WAIT_MS):
        watcher.start()
    run_other_process(db_path, ("Fact from the other process about the shed", "cursor", "fact"))
    qtbot.waitUntil(lambda: page.model.rowCount() == 31, timeout=2_000 + WAIT_MS)
    assert page.selected_id() == chosen
    assert page.table.verticalScrollBar().value() == scroll
    watcher.stop()
