"""The change feed across processes: what a stdio server's worker decides reaches another process."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from tallei_desktop.core.models import ChangeEvent, EventKind
from tests.mcp_server.conftest import eventually, logs_of, open_store, stdio_session, structured

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

#: How soon after its commit another process must see a change.
SEEN_WITHIN_S = 2.0


async def test_a_conflict_flagged_by_a_stdio_server_is_seen_by_another_process(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_session(process_env, errlog, client_name="claude-ai") as claude:
            tabs = structured(
                await claude.call_tool("save_memory", {"content": "I prefer tabs for indentation"})
            )["id"]
            with open_store(process_env) as watcher:
                seq = watcher.last_change_seq()
                assert watcher.store_changed() is False
                seen: list[tuple[ChangeEvent, float]] = []

                async def conflict_seen() -> bool:
                    nonlocal seq
                    if await anyio.to_thread.run_sync(watcher.store_changed):
                        batch = await anyio.to_thread.run_sync(watcher.changes_since, seq)
                        assert not batch.reload
                        seq = batch.last_seq
                        now = time.time()
                        seen.extend((event, now) for event in batch.events)
                    return any(e.kind is EventKind.CONFLICT_OPENED for e, _ in seen)

                spaces = structured(
                    await claude.call_tool(
                        "save_memory",
                        {"content": "I prefer spaces for indentation", "platform": "chatgpt"},
                    )
                )["id"]
                # The server's background worker embeds the save and flags the pair.
                await eventually(
                    conflict_seen, what="the conflict in the change feed\n" + logs_of(process_env)
                )
                [(opened, seen_at)] = [(e, t) for e, t in seen if e.kind is EventKind.CONFLICT_OPENED]
                assert (opened.memory_id, opened.detail, opened.platform) == (spaces, tabs, "chatgpt")
                assert seen_at - opened.at.timestamp() < SEEN_WITHIN_S
                saved = [e.memory_id for e, _ in seen if e.kind is EventKind.MEMORY_SAVED]
                assert saved == [spaces]
                [conflict] = watcher.conflicts()
                assert conflict.id == opened.conflict_id
                assert watcher.store_changed() is False  # nothing new since the last look
