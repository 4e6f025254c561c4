"""Each tool is a function of its own: called directly, without a server or a client."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from tallei_desktop.core import MemoryService
from tallei_desktop.mcp_server import tools
from tallei_desktop.mcp_server.server import TalleiServer
from tallei_desktop.mcp_server.tools import TOOLS, ServiceCalls

pytestmark = pytest.mark.anyio


async def test_tools_called_directly_save_pin_and_list_on_a_real_store(service: MemoryService) -> None:
    calls = ServiceCalls(service)

    saved = await tools.save_memory(
        calls, "I prefer green tea in the afternoon", Context(), platform="cursor"
    )
    pinned = await tools.pin_memory(calls, saved.id)
    listed = await tools.list_memories(calls, bucket="preference")

    assert (saved.type, saved.platform) == ("preference", "cursor")
    assert pinned.pinned is True
    assert [m.id for m in listed.memories] == [saved.id]
    assert service.get(saved.id).pinned is True


async def test_a_direct_call_without_a_request_saves_under_the_unknown_platform(
    service: MemoryService,
) -> None:
    saved = await tools.save_memory(ServiceCalls(service), "The garage door code changed in May", Context())

    assert service.get(saved.id).platform == saved.platform == "unknown"


async def test_a_tool_called_directly_maps_known_errors_to_one_line(service: MemoryService) -> None:
    with pytest.raises(ToolError, match="No memory has the id"):
        await tools.forget_memory(ServiceCalls(service), "0123456789ab")


async def test_the_server_lists_exactly_the_tool_functions_in_order(server: TalleiServer) -> None:
    listed = await server.list_tools()

    assert [t.name for t in listed] == [spec.name for spec in TOOLS]
    for spec, tool in zip(TOOLS, listed, strict=True):
        assert (tool.title, tool.description, tool.annotations) == (
            spec.title,
            spec.description,
            spec.annotations,
        )
        assert "calls" not in tool.input_schema["properties"]
