"""An assistant's recall and search count as use of what they return; the person looking does not."""

from __future__ import annotations

import pytest

from tallei_desktop.core.service import MemoryService
from tallei_desktop.mcp_server.server import TalleiServer
from tests.mcp_server.conftest import TIMEOUT_S, session, structured, text_of

pytestmark = pytest.mark.anyio


async def test_recall_memories_and_search_memories_count_each_hit_once(
    service: MemoryService, server: TalleiServer
) -> None:
    mid = service.save("I like my coffee black, no sugar", platform="chatgpt").id
    assert service.wait_idle(TIMEOUT_S)
    async with session(server, client_name="claude-ai") as claude:
        recalled = text_of(await claude.call_tool("recall_memories", {"query": "how do I take my coffee"}))
        assert f"id {mid}" in recalled
        assert service.wait_idle(TIMEOUT_S)
        after_recall = service.get(mid)
        assert after_recall.reference_count == 2 and after_recall.last_referenced_at is not None
        found = structured(await claude.call_tool("search_memories", {"query": "coffee black"}))
        assert mid in str(found)
        assert service.wait_idle(TIMEOUT_S)
    assert service.get(mid).reference_count == 3
    # The person previewing the same recall in the window, through the same service, adds nothing.
    service.recall("how do I take my coffee")
    service.search("coffee black")
    assert service.wait_idle(TIMEOUT_S)
    assert service.get(mid).reference_count == 3
