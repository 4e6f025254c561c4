"""Conflicts: each outcome written through the core, and one notification per conflict from any process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tallei_desktop.core.models import ConflictStatus, MemoryStatus
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
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


@pytest.mark.parametrize(
    ("button", "survivors"),
    [("first", {"a"}), ("second", {"b"}), ("both", {"a", "b"}), ("merge", set())],
)
def test_each_outcome_round_trips(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops, button: str, survivors: set[str]
) -> None:
    a, b = _conflict(service)
    page = ConflictsPage(backend, ops)
    qtbot.addWidget(page)
    [conflict] = service.conflicts()
    page.set_conflicts([conflict])
    assert page.first.text.text() == "I prefer window seats on flights"
    assert "gemini" in page.second.source.text()
    clicks = {
        "first": page.first.keep,
        "second": page.second.keep,
        "both": page.keep_both,
        "merge": page.merge,
    }
    if button == "merge":
        page.merged.setPlainText("Window seat on long flights, aisle on short ones")
    with qtbot.waitSignal(page.resolved, timeout=WAIT_MS):
        clicks[button].click()
    assert not service.conflicts()
    [done] = service.conflicts(include_resolved=True)
    assert done.status is ConflictStatus.RESOLVED
    ids = {"a": a, "b": b}
    assert {k for k, mid in ids.items() if service.get(mid).status is MemoryStatus.ACTIVE} == survivors
    if button == "merge":
        [merged] = [m for m in service.list(bucket="preference") if m.id not in (a, b)]
        assert merged.content == "Window seat on long flights, aisle on short ones"
    assert page.list.count() == 0 and not page.empty.isHidden()

    # Undo, right after: the conflict is open and listed again, the memories as they were.
    assert page.undo_bar.isVisibleTo(page) and page.undo_label.text()
    with qtbot.waitSignal(page.reopened, timeout=WAIT_MS) as reopened:
        page.undo_button.click()
    assert reopened.args == [done.id]
    assert [c.id for c in service.conflicts()] == [done.id]
    assert {service.get(m).status for m in (a, b)} == {MemoryStatus.ACTIVE}
    assert not service.get(a).pinned and not service.get(b).pinned
    assert page.current() is not None and page.current().id == done.id  # type: ignore[union-attr]
    assert not page.undo_bar.isVisibleTo(page)
    assert service.count() == 2  # a merged memory is forgotten again


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
