"""The recall preview shows exactly what recall_memories returns for the same query."""

from __future__ import annotations

import anyio
from mcp.client import Client
from mcp.types import TextContent
from pytestqt.qtbot import QtBot

from tallei_desktop.core.recall import estimate_tokens
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.memories import MemoriesPage
from tallei_desktop.gui.pages.recall import RecallPage
from tallei_desktop.mcp_server.server import build_server
from tests.gui.conftest import WAIT_MS


def _recall_memories(service: MemoryService, query: str) -> str:
    async def call() -> str:
        async with Client(build_server(service)) as client:
            result = await client.call_tool("recall_memories", {"query": query})
        return "\n".join(b.text for b in result.content if isinstance(b, TextContent))

    return anyio.run(call)


def test_the_preview_equals_recall_memories(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("I prefer concise answers", platform="claude")
    service.save("We decided to deploy on Fridays never", type="decision", platform="chatgpt")
    service.save("The garden party was yesterday", type="event", platform="gemini")
    service.drain()
    page = RecallPage(backend, ops)
    qtbot.addWidget(page)
    page.query.setText("deploy schedule")
    with qtbot.waitSignal(page.shown, timeout=WAIT_MS):
        page.go.click()
    shown = page.block.toPlainText()
    assert shown == _recall_memories(service, "deploy schedule")
    assert "I prefer concise answers" in shown
    line = service.budgets.line_tokens
    assert page.bars["preferences"].value() == estimate_tokens("I prefer concise answers") + line
    assert page.bars["long_term"].maximum() == service.budgets.long_term
    assert page.bars["short_term"].value() == estimate_tokens("The garden party was yesterday") + line
    assert page.bars["total"].maximum() == service.budgets.total
    assert page.bars["total"].value() == sum(
        estimate_tokens(m.content) + line for m in service.list(limit=10)
    )


def test_previewing_and_searching_in_the_window_count_as_no_use(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    pref = service.save("I like my coffee black, no sugar", platform="claude").id
    fact = service.save("The coffee grinder lives in the left cupboard", type="fact", platform="chatgpt").id
    service.drain()
    before = {
        mid: (service.get(mid).reference_count, service.get(mid).last_referenced_at) for mid in (pref, fact)
    }

    preview = RecallPage(backend, ops)
    qtbot.addWidget(preview)
    for _ in range(2):  # the second preview is answered from the cache
        preview.query.setText("how do I take my coffee")
        with qtbot.waitSignal(preview.shown, timeout=WAIT_MS):
            preview.go.click()
        assert "I like my coffee black" in preview.block.toPlainText()

    for view, mid in ((View.PREFERENCES, pref), (View.LONG_TERM, fact)):
        page = MemoriesPage(view, backend, ops)
        qtbot.addWidget(page)
        with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
            page.search.setText("coffee")
            page.search.returnPressed.emit()
        assert [m.id for m in page.model.memories()] == [mid]

    service.drain()  # anything queued would be written now
    after = {
        mid: (service.get(mid).reference_count, service.get(mid).last_referenced_at) for mid in (pref, fact)
    }
    assert after == before == {pref: (1, None), fact: (1, None)}


def test_the_page_says_what_it_does_before_the_first_preview(
    backend: Backend, ops: Ops, qtbot: QtBot
) -> None:
    page = RecallPage(backend, ops)
    qtbot.addWidget(page)
    assert page.mode.text() == (
        "See what an assistant would be given for a question. Previewing does not count as use."
    )


def test_the_status_line_says_in_plain_words_how_long_term_was_chosen(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("The boiler was serviced in March", type="fact", platform="claude")
    service.drain()
    page = RecallPage(backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.shown, timeout=WAIT_MS):
        page.go.click()
    status = page.mode.text()
    assert status.startswith("Everything long-term fits, so all of it is included.")
    assert "Search by meaning is on." in status
    assert "dump" not in status and "semantic" not in status
