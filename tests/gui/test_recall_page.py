"""The recall preview shows exactly what recall_memories returns for the same query."""

from __future__ import annotations

import anyio
from mcp.client import Client
from mcp.types import TextContent
from pytestqt.qtbot import QtBot

from tallei_desktop.core.recall import estimate_tokens
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops
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
    assert page.bars["preferences"].value() == estimate_tokens("I prefer concise answers")
    assert page.bars["long_term"].maximum() == service.budgets.long_term
    assert page.bars["short_term"].value() == estimate_tokens("The garden party was yesterday")
