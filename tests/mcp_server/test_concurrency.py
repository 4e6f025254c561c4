"""Several servers on one store at once, and a server killed in the middle of a burst of saves."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client import Client

from tallei_desktop.core.models import MemoryStatus
from tests.mcp_server.conftest import (
    eventually,
    http_session,
    open_store,
    run_token,
    serve_process,
    stdio_session,
    structured,
    text_of,
)
from tests.mcp_server.rawstdio import RawStdio, tool_result

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

OPS_PER_CLIENT = 500
LANES_PER_CLIENT = 4
#: One operation in this many is a recall; the rest are saves.
RECALL_EVERY = 5
#: Saves sent to the server that is killed; it dies after answering the first 100.
BURST = 1_000
TOPICS = [
    "billing",
    "onboarding",
    "search",
    "payments",
    "mobile app",
    "data warehouse",
    "design system",
    "hiring",
]


async def test_three_stdio_servers_and_one_http_server_at_once_lose_nothing(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    """Four processes write to one store through their own writers and background workers.

    Semantic search is off here: four copies of the model embedding on two cores would make this
    a test of the CPU, and the workers still finish every save (dedup and conflict checks, in write
    transactions of their own). The tests around it run the real model.
    """
    process_env = {**process_env, "TALLEI_MODEL_DIR": str(tmp_path / "no-model")}
    token = run_token(process_env)
    acknowledged: dict[str, str] = {}
    failures: list[str] = []
    recalls = 0

    async def lane(name: str, client: Client, start: int) -> None:
        nonlocal recalls
        for n in range(start, OPS_PER_CLIENT, LANES_PER_CLIENT):
            topic = TOPICS[n % len(TOPICS)]
            if n % RECALL_EVERY == RECALL_EVERY - 1:
                result = await client.call_tool("recall_memories", {"query": topic})
                recalls += 1
            else:
                content = f"Ticket {name}-{n} asks the {topic} team for item {n * 7919 % 10007}"
                result = await client.call_tool("save_memory", {"content": content})
                if not result.is_error:
                    acknowledged[structured(result)["id"]] = content
            if result.is_error:
                failures.append(text_of(result))

    with (tmp_path / "stderr.log").open("w") as errlog, serve_process(process_env, errlog) as (_, url):
        async with (
            stdio_session(process_env, errlog, client_name="claude-ai") as claude,
            stdio_session(process_env, errlog, client_name="cursor-vscode") as cursor,
            stdio_session(process_env, errlog, client_name="gemini-cli") as gemini,
            http_session(url, token, client_name="openai-mcp") as chatgpt,
            anyio.create_task_group() as tg,
        ):
            for name, client in (
                ("claude", claude),
                ("cursor", cursor),
                ("gemini", gemini),
                ("chatgpt", chatgpt),
            ):
                for start in range(LANES_PER_CLIENT):
                    tg.start_soon(lane, name, client, start)

    assert not [f for f in failures if "locked" in f.lower()]
    assert failures == []
    assert len(acknowledged) + recalls == 4 * OPS_PER_CLIENT >= 2_000
    with open_store(process_env) as service:
        for mid, content in acknowledged.items():
            memory = service.get(mid)
            assert memory.content == content
            assert memory.status in (MemoryStatus.ACTIVE, MemoryStatus.MERGED)


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9 is a POSIX signal")
async def test_kill_9_mid_burst_keeps_every_acknowledged_save_and_the_next_process_embeds_them(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    with (tmp_path / "stderr.log").open("w") as errlog:
        server = RawStdio(process_env, errlog)
        server.initialize()
        # Every request is written before any answer is read, so saves are in flight when the kill lands.
        requests = [
            server.call_tool(
                "save_memory", {"content": f"Burst {n}: the {TOPICS[n % len(TOPICS)]} job ran {n} times"}
            )
            for n in range(BURST)
        ]
        acknowledged: set[str] = set()
        for rid in requests:
            acknowledged.add(tool_result(server.response(rid))["id"])
            if len(acknowledged) == 100:
                server.proc.send_signal(signal.SIGKILL)
                break
        server.kill()
        assert server.proc.returncode == -signal.SIGKILL
        # Answers that made it out before the kill were acknowledged too.
        acknowledged |= {tool_result(answer)["id"] for answer in server.arrived()}
    assert 100 <= len(acknowledged) < BURST

    with open_store(process_env) as service:
        assert all(service.get(mid).status is MemoryStatus.ACTIVE for mid in acknowledged)
        assert service.status().pending_embeddings > 0, "the kill came too late to leave work behind"

    with (tmp_path / "stderr.log").open("a") as errlog:
        async with stdio_session(process_env, errlog) as client:

            async def nothing_pending() -> bool:
                status = structured(await client.call_tool("memory_status", {}))
                return bool(status["pending_background_work"] == 0)

            await eventually(nothing_pending, what="the next process to finish the pending embeddings")

    with open_store(process_env) as service:
        for mid in acknowledged:
            memory = service.get(mid)
            assert memory.embedded and memory.status is MemoryStatus.ACTIVE, memory
