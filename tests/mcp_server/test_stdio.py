"""``tallei-desktop mcp`` as a real subprocess, as Claude Desktop, Cursor, Gemini CLI and VS Code run it."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.mcp_server.conftest import logs_of, open_store, stdio_session, structured, text_of
from tests.mcp_server.rawstdio import RawStdio, tool_result

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


def test_initialize_is_answered_by_fresh_processes_and_they_exit_cleanly(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    """Three cold starts (the first one also creates the store). The start-up time itself is a
    benchmark figure (bench/bench_mcp.py), not an assertion: it is printed here for the log."""
    timings = []
    with (tmp_path / "stderr.log").open("w") as errlog:
        for _ in range(3):
            started = time.monotonic()
            server = RawStdio(process_env, errlog)
            try:
                answer = server.initialize()
                timings.append(time.monotonic() - started)
                assert answer["result"]["serverInfo"]["name"] == "tallei"
                assert "recall_memories" in answer["result"]["instructions"]
            finally:
                server.close_stdin()
                assert server.wait() == 0, logs_of(process_env, tmp_path / "stderr.log")
    print(f"initialize answered after {', '.join(f'{t:.3f}' for t in timings)} s")
    assert len(timings) == 3


async def test_a_save_is_recalled_in_the_same_and_in_another_process(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with (
            stdio_session(process_env, errlog, client_name="claude-ai") as claude,
            stdio_session(process_env, errlog, client_name="cursor-vscode") as cursor,
        ):
            # Both processes have recalled once, so each holds a cached answer a save must invalidate.
            for client in (claude, cursor):
                assert "bergamot" not in text_of(await client.call_tool("recall_memories", {"query": "tea"}))
            saved = structured(
                await claude.call_tool("save_memory", {"content": "I prefer Earl Grey tea with bergamot"})
            )
            assert saved["platform"] == "claude"
            for client in (claude, cursor):
                recall = await client.call_tool("recall_memories", {"query": "tea"})
                assert "Earl Grey tea with bergamot" in text_of(recall)
        async with stdio_session(process_env, errlog, client_name="gemini-cli") as later:
            hits = structured(await later.call_tool("search_memories", {"query": "bergamot"}))["hits"]
    assert [h["memory"]["id"] for h in hits] == [saved["id"]]


async def test_every_tool_answers_over_stdio(process_env: dict[str, str], tmp_path: Path) -> None:
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_session(process_env, errlog) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            mid = structured(
                await client.call_tool("save_memory", {"content": "The deploy bot is called Marvin"})
            )["id"]
            assert "Marvin" in text_of(await client.call_tool("recall_memories", {"query": "deploy bot"}))
            assert structured(await client.call_tool("search_memories", {"query": "Marvin"}))["hits"]
            assert structured(await client.call_tool("list_memories", {}))["memories"][0]["id"] == mid
            changed = {"id": mid, "content": "The deploy bot is called Zaphod"}
            assert structured(await client.call_tool("update_memory", changed))["content"].endswith("Zaphod")
            assert structured(await client.call_tool("pin_memory", {"id": mid}))["pinned"] is True
            assert structured(await client.call_tool("unpin_memory", {"id": mid}))["pinned"] is False
            assert structured(await client.call_tool("list_conflicts", {})) == {"conflicts": []}
            assert structured(await client.call_tool("memory_status", {}))["counts"]["long_term"] == 1
            assert structured(await client.call_tool("forget_memory", {"id": mid}))["status"] == "deleted"
            unknown = await client.call_tool(
                "resolve_conflict", {"conflict_id": "c0123456789ab", "resolution": "keep_both"}
            )
            bad = await client.call_tool("save_memory", {"content": ""})
    assert len(names) == 11
    assert unknown.is_error and "No conflict has the id" in text_of(unknown)
    assert bad.is_error and "content" in text_of(bad)


def test_stdout_carries_only_protocol_and_the_log_goes_to_a_file(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    with (tmp_path / "stderr.log").open("w") as errlog:
        server = RawStdio(process_env, errlog)
        server.initialize()
        listed = server.response(server.request("tools/list"))
        server.send_line(b"this is not json")
        server.send_line(
            b'{"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "save_memory", '
            b'"arguments": {"content": "lone \\ud800 surrogate"}}}'
        )
        saved = server.response(server.call_tool("save_memory", {"content": "Still answering after garbage"}))
        server.close_stdin()
        assert server.wait() == 0, logs_of(process_env, tmp_path / "stderr.log")
    assert len(listed["result"]["tools"]) == 11
    # Answered as a fresh save: the garbage line and the bad surrogate before it changed nothing.
    assert tool_result(saved)["confirmed_existing"] is False and tool_result(saved)["reference_count"] == 1
    for line in server.raw_stdout:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
    log = (Path(process_env["TALLEI_LOG_DIR"]) / "mcp.log").read_text(encoding="utf-8")
    assert f" {server.pid} INFO tallei_desktop.mcp_server.stdio: stdin ended" in log


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no SIGTERM to send")
def test_sigterm_stops_the_server_cleanly_and_keeps_every_save(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    with (tmp_path / "stderr.log").open("w") as errlog:
        server = RawStdio(process_env, errlog)
        server.initialize()
        saved = [
            tool_result(
                server.response(server.call_tool("save_memory", {"content": f"Ticket {n} is about billing"}))
            )
            for n in range(5)
        ]
        server.proc.send_signal(signal.SIGTERM)  # stdin stays open, as a client that sends SIGTERM leaves it
        assert server.wait() == 0, logs_of(process_env, tmp_path / "stderr.log")
    log = (Path(process_env["TALLEI_LOG_DIR"]) / "mcp.log").read_text(encoding="utf-8")
    assert f" {server.pid} INFO tallei_desktop.mcp_server.stdio: Received SIGTERM; stopping" in log
    with open_store(process_env) as service:
        assert [service.get(s["id"]).content for s in saved] == [
            f"Ticket {n} is about billing" for n in range(5)
        ]


def test_global_options_after_the_mcp_command_choose_the_store(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    """What people write by hand into client settings: ``["mcp", "--data-dir", …]``."""
    chosen = tmp_path / "chosen"
    env = {k: v for k, v in process_env.items() if k != "TALLEI_DATA_DIR"}
    command = [sys.executable, "-m", "tallei_desktop", "mcp", "--data-dir", str(chosen)]
    with (tmp_path / "stderr.log").open("w") as errlog:
        server = RawStdio(env, errlog, command=command)
        try:
            server.initialize()
            saved = tool_result(
                server.response(server.call_tool("save_memory", {"content": "Kept in chosen"}))
            )
        finally:
            server.close_stdin()
            assert server.wait() == 0, logs_of(process_env, tmp_path / "stderr.log")
    with open_store({**process_env, "TALLEI_DATA_DIR": str(chosen)}) as svc:
        assert svc.get(saved["id"]).content == "Kept in chosen"
    assert not (tmp_path / "data").exists()
