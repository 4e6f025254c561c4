"""A window that reloads for days must not wear down Python's shared objects.

PySide6 6.12.0 drops a reference to ``True`` on every reload of a memory page (and to ``None`` on
``QModelIndex.data`` from Python), so a tray app following live changes aborts with "deallocating
True or False" after a few hundred reloads. These tests reload as live updates do and fail when
the count of ``True``, ``False`` or ``None`` falls; pyproject.toml keeps that release out.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.memories import MemoriesPage
from tests.gui.conftest import WAIT_MS

RELOADS = 40


def _counts() -> dict[str, int]:
    return {"True": sys.getrefcount(True), "False": sys.getrefcount(False), "None": sys.getrefcount(None)}


def test_reloading_a_page_keeps_the_shared_objects_alive(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    for i in range(30):
        service.save(f"Fact number {i} about the garden", type="fact", platform="claude")
    service.save("I prefer tabs", type="preference", platform="claude")
    page = MemoriesPage(View.LONG_TERM, backend, ops)
    qtbot.addWidget(page)
    page.show()
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()
    page.select_row(0)
    before = _counts()
    for _ in range(RELOADS):
        with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
            page.reload()
    after = _counts()
    lost = {name: before[name] - after[name] for name in before if after[name] < before[name] - 5}
    assert not lost, f"references lost over {RELOADS} reloads: {lost}"


def test_reading_the_table_from_python_keeps_none_alive(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("My sister lives in Lisbon", type="fact", platform="claude")
    page = MemoriesPage(View.LONG_TERM, backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()
    index = page.model.index(0, 0)
    before = sys.getrefcount(None)
    for _ in range(200):
        index.data(Qt.ItemDataRole.CheckStateRole)  # a role the model answers with None
    assert sys.getrefcount(None) >= before - 5
