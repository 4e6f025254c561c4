"""A paused assistant's tool calls answer with one line saying so, and read or write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tallei_desktop.core import MemoryFilter, MemoryStatus
from tallei_desktop.core.service import MemoryService
from tallei_desktop.mcp_server.server import TalleiServer
from tests.mcp_server.conftest import (
    http_session,
    logs_of,
    open_store,
    run_token,
    serve_process,
    session,
    stdio_session,
    structured,
    text_of,
)

pytestmark = pytest.mark.anyio

EVERY_STATUS = MemoryFilter(statuses=frozenset(MemoryStatus))


async def test_a_paused_client_is_refused_every_tool_and_others_carry_on(
    service: MemoryService, server: TalleiServer
) -> None:
    kept = service.save("The staging database is called tern", platform="cursor")
    service.set_platform_paused("claude", True)
    start = service.last_change_seq()
    refs = service.get(kept.id).reference_count

    async with (
        session(server, client_name="claude-ai") as claude,
        session(server, client_name="cursor") as cursor,
    ):
        calls = {
            "save_memory": {"content": "I prefer dark roast coffee"},
            "recall_memories": {"query": "database"},
            "search_memories": {"query": "tern"},
            "list_memories": {},
            "pin_memory": {"id": kept.id},
            "forget_memory": {"id": kept.id},
            "memory_status": {},
        }
        for tool, arguments in calls.items():
            refused = await claude.call_tool(tool, arguments)
            assert refused.is_error, tool
            message = text_of(refused)
            assert message == (
                f"Access for claude is paused in Tallei, so {tool} did nothing. "
                "The person can resume it on the Assistants page of the Tallei app."
            )
        # Naming another platform does not get a paused client's save through, nor the reverse.
        named = await cursor.call_tool("save_memory", {"content": "I like oat milk", "platform": "claude"})
        assert named.is_error and "Access for claude is paused" in text_of(named)
        assert "tern" in text_of(await cursor.call_tool("recall_memories", {"query": "staging database"}))

    service.wait_idle()
    assert service.count(EVERY_STATUS) == 1
    assert service.get(kept.id).status is MemoryStatus.ACTIVE and not service.get(kept.id).pinned
    assert service.get(kept.id).reference_count == refs + 1  # the cursor recall only
    assert not [e for e in service.changes_since(start).events if e.kind != "memory_confirmed"]


async def test_a_real_stdio_server_answers_paused_and_works_again_after_resume(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    with open_store(process_env) as tray:
        tray.set_platform_paused("claude", True)
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with stdio_session(process_env, errlog, client_name="claude-ai") as claude:
                refused = await claude.call_tool(
                    "save_memory", {"content": "I prefer window seats on trains"}
                )
                assert refused.is_error, logs_of(process_env)
                assert text_of(refused).startswith("Access for claude is paused in Tallei")
                assert tray.count(EVERY_STATUS) == 0

                # Resumed from another process: the very next call goes through.
                tray.set_platform_paused("claude", False)
                saved = structured(
                    await claude.call_tool("save_memory", {"content": "I prefer window seats on trains"})
                )
                assert "window seats" in text_of(
                    await claude.call_tool("recall_memories", {"query": "trains"})
                )

                # And paused again while the process runs: refused at once.
                tray.set_platform_paused("claude", True)
                again = await claude.call_tool("recall_memories", {"query": "trains"})
                assert again.is_error and "paused" in text_of(again)
        assert tray.get(saved["id"]).platform == "claude"


@pytest.mark.slow
async def test_a_real_http_endpoint_refuses_a_paused_chatgpt_and_serves_it_after_resume(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    token = run_token(process_env)
    with (
        open_store(process_env) as tray,
        (tmp_path / "stderr.log").open("w") as errlog,
        serve_process(process_env, errlog) as (_, url),
    ):
        tray.set_platform_paused("chatgpt", True)
        async with http_session(url, token, client_name="openai-mcp") as chatgpt:
            refused = await chatgpt.call_tool("save_memory", {"content": "We ship on Tuesdays"})
            assert refused.is_error, logs_of(process_env, tmp_path / "stderr.log")
            assert text_of(refused).startswith("Access for chatgpt is paused in Tallei")
            assert tray.count(EVERY_STATUS) == 0
            tray.set_platform_paused("chatgpt", False)
            saved = structured(await chatgpt.call_tool("save_memory", {"content": "We ship on Tuesdays"}))
        assert tray.get(saved["id"]).platform == "chatgpt"
