"""The details pane lists each text an edit replaced, and brings one back as the person's edit."""

from __future__ import annotations

import re

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QTextBrowser
from pytestqt.qtbot import QtBot

from tallei_desktop.core import APP_PLATFORM, MemoryHistory
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.details import VERSION_SCHEME, render_details
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.memories import MemoriesPage
from tests.gui.conftest import WAIT_MS


def _links(page: MemoriesPage) -> list[str]:
    return re.findall(rf'href="({VERSION_SCHEME}:[^"]+)"', page.detail.toHtml())


def test_bring_back_in_the_details_pane_makes_an_earlier_text_current_again(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("The boiler was serviced in March", type="fact", platform="claude").id
    service.update(mid, content="The boiler was serviced in April", platform="chatgpt")
    page = MemoriesPage(View.LONG_TERM, backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()
    page.select_id(mid)
    qtbot.waitUntil(lambda: len(_links(page)) == 1, timeout=WAIT_MS)
    assert "edited by chatgpt" in page.detail.toPlainText()
    assert "before: “The boiler was serviced in March” bring back" in page.detail.toPlainText()

    [link] = _links(page)
    with qtbot.waitSignal(page.acted, timeout=WAIT_MS), qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.detail.anchorClicked.emit(QUrl(link))

    memory = service.get(mid)
    assert memory.content == "The boiler was serviced in March"
    assert (memory.provenance[-1].platform, memory.provenance[-1].previous) == (
        APP_PLATFORM,
        "The boiler was serviced in April",
    )
    expected = "edited by you in Tallei"
    qtbot.waitUntil(lambda: expected in page.detail.toPlainText(), timeout=WAIT_MS)
    # April can be brought back now; March is the text already, so its entry offers nothing.
    qtbot.waitUntil(lambda: len(_links(page)) == 1, timeout=WAIT_MS)
    april = next(t for t in service.history(mid).earlier if t.content.endswith("April"))
    assert _links(page) == [f"{VERSION_SCHEME}:{april.id}"]


def test_a_long_memory_wraps_in_the_details_pane(qtbot: QtBot, service: MemoryService) -> None:
    long_word = "supercalifragilistic" * 30
    text = ("A very long memory about the garden shed and its many shelves. " * 20) + long_word
    mid = service.save(text, type="fact", platform="claude").id
    service.update(mid, content=text + " Updated.")
    details: MemoryHistory = service.history(mid)
    pane = QTextBrowser()
    qtbot.addWidget(pane)
    pane.resize(360, 600)
    pane.setHtml(render_details(details))
    pane.show()
    qtbot.waitExposed(pane)
    assert pane.horizontalScrollBar().maximum() == 0
    assert pane.document().size().width() <= pane.viewport().width() + 1
