"""No assistant acts as the person: a client naming itself as Tallei is recorded as unknown, and an
assistant's edit is recorded under that assistant."""

from __future__ import annotations

import pytest

from tallei_desktop.core import APP_PLATFORM
from tallei_desktop.core.service import MemoryService
from tallei_desktop.mcp_server.server import TalleiServer
from tests.mcp_server.conftest import session, structured

pytestmark = pytest.mark.anyio


async def test_an_assistant_cannot_save_or_edit_as_the_person(
    service: MemoryService, server: TalleiServer
) -> None:
    async with session(server, client_name=APP_PLATFORM) as impostor:
        own = structured(await impostor.call_tool("save_memory", {"content": "The car is parked on level 3"}))
        named = structured(
            await impostor.call_tool(
                "save_memory", {"content": "The bike is in the shed", "platform": APP_PLATFORM}
            )
        )
    assert service.get(own["id"]).platform == "unknown"
    assert service.get(named["id"]).platform == "unknown"

    async with session(server, client_name="claude-ai") as claude:
        structured(
            await claude.call_tool("update_memory", {"id": own["id"], "content": "The car is on level 4"})
        )
    edit = service.get(own["id"]).provenance[-1]
    assert (edit.action, edit.platform, edit.previous) == ("edited", "claude", "The car is parked on level 3")
    [earlier] = service.history(own["id"]).earlier
    assert (earlier.content, earlier.replaced_by) == ("The car is parked on level 3", "claude")
