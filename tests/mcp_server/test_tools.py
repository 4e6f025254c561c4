"""Every tool through the SDK's in-memory client, over a real encrypted store."""

from __future__ import annotations

import logging
import threading
from typing import Any, get_args

import pytest
from mcp.client import Client

from tallei_desktop.app.opening import OpeningService
from tallei_desktop.core.errors import KeyUnavailable
from tallei_desktop.core.models import (
    CHOSEN_RESOLUTIONS,
    Bucket,
    MemoryStatus,
    MemoryType,
)
from tallei_desktop.core.service import MemoryService
from tallei_desktop.mcp_server.schemas import BucketName, MemoryTypeName, ResolutionName, StatusName
from tallei_desktop.mcp_server.server import INSTRUCTIONS, TalleiServer, build_server
from tests.mcp_server.conftest import session, structured, text_of
from tests.mcp_server.recall_text import ids_by_section

pytestmark = pytest.mark.anyio

TOOLS = {
    # name: (read_only, destructive, idempotent)
    "save_memory": (False, False, False),
    "recall_memories": (True, False, True),
    "search_memories": (True, False, True),
    "list_memories": (True, False, True),
    "update_memory": (False, True, True),
    "forget_memory": (False, True, True),
    "pin_memory": (False, False, True),
    "unpin_memory": (False, False, True),
    "list_conflicts": (True, False, True),
    "resolve_conflict": (False, True, False),
    "memory_status": (True, False, True),
}


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, arguments))


async def error_of(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} accepted {arguments!r}"
    text = text_of(result)
    assert "\n" not in text and 0 < len(text) <= 500, text
    return text


# -- the catalogue --------------------------------------------------------------------------------


async def test_every_tool_is_listed_with_description_schemas_and_hints(server: TalleiServer) -> None:
    async with session(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(TOOLS)
    for name, (read_only, destructive, idempotent) in TOOLS.items():
        tool = tools[name]
        assert tool.description and len(tool.description) > 60, name
        assert tool.input_schema["type"] == "object"
        if name == "recall_memories":  # its context block alone (docs/adr/0005-one-answer.md)
            assert tool.output_schema is None
        else:
            assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        hints = tool.annotations
        assert hints is not None
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
            read_only,
            destructive,
            idempotent,
        ), name
        assert hints.open_world_hint is False


async def test_input_schemas_carry_the_limits(server: TalleiServer) -> None:
    async with session(server) as client:
        tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    content = tools["save_memory"]["properties"]["content"]
    assert content["minLength"] == 1 and content["maxLength"] == 32 * 1024
    assert tools["save_memory"]["required"] == ["content"]
    limit = tools["search_memories"]["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 100)
    assert tools["recall_memories"]["properties"]["query"]["maxLength"] == 2_000
    assert "enum" in str(tools["save_memory"]["properties"]["type"])


def test_wire_names_match_the_core_enums() -> None:
    assert set(get_args(MemoryTypeName)) == {t.value for t in MemoryType}
    assert set(get_args(BucketName)) == {b.value for b in Bucket}
    assert set(get_args(ResolutionName)) == {r.value for r in CHOSEN_RESOLUTIONS}
    assert set(get_args(StatusName)) == {s.value for s in MemoryStatus}


async def test_initialize_hands_the_model_its_instructions(server: TalleiServer) -> None:
    async with session(server) as client:
        assert client.session.instructions == INSTRUCTIONS
        assert client.server_info is not None and client.server_info.name == "tallei"
    assert "recall_memories" in INSTRUCTIONS and "save_memory" in INSTRUCTIONS


# -- saving ---------------------------------------------------------------------------------------


async def test_save_returns_as_soon_as_committed_and_the_next_recall_sees_it(
    server: TalleiServer, service: MemoryService
) -> None:
    async with session(server) as client:
        saved = await call(client, "save_memory", content="I prefer answers in British English")
        recall = await client.call_tool("recall_memories", {"query": "spelling and language"})
    assert saved["type"] == "preference" and saved["bucket"] == "preference"
    assert saved["confirmed_existing"] is False and saved["confidence"] == "UNCONFIRMED"
    assert "British English" in text_of(recall)
    assert ids_by_section(text_of(recall))["preferences"] == [saved["id"]]
    assert service.get(saved["id"]).content == "I prefer answers in British English"


async def test_saving_the_same_memory_again_confirms_it(server: TalleiServer) -> None:
    async with session(server) as client:
        first = await call(client, "save_memory", content="The build server is called hopper")
        again = await call(client, "save_memory", content="the build server is called  Hopper")
    assert again["id"] == first["id"]
    assert again["confirmed_existing"] is True and again["reference_count"] == 2
    assert again["confidence"] == "MED"


@pytest.mark.parametrize(
    ("client_name", "platform"),
    [
        ("claude-ai", "claude"),
        ("Claude Desktop", "claude"),
        ("openai-mcp", "chatgpt"),
        ("ChatGPT", "chatgpt"),
        ("gemini-cli-mcp-client", "gemini"),
        ("cursor-vscode", "cursor"),
        ("Visual Studio Code", "vscode"),
        ("Visual Studio Code - Insiders", "vscode"),
        ("Zed Editor", "zed-editor"),
    ],
)
async def test_save_records_the_platform_of_the_client(
    server: TalleiServer, client_name: str, platform: str
) -> None:
    async with session(server, client_name=client_name) as client:
        saved = await call(client, "save_memory", content=f"Uses {client_name} for writing code")
        listed = await call(client, "list_memories", platform=platform)
    assert saved["platform"] == platform
    assert [m["id"] for m in listed["memories"]] == [saved["id"]]
    assert listed["memories"][0]["platforms"] == [platform]


async def test_platform_is_taken_from_the_request_envelope_without_a_handshake(server: TalleiServer) -> None:
    async with session(server, client_name="gemini-cli", mode="auto") as client:
        saved = await call(client, "save_memory", content="Deploys happen on Thursdays")
    assert saved["platform"] == "gemini"


async def test_an_explicit_platform_wins_over_the_client(server: TalleiServer) -> None:
    async with session(server, client_name="claude-ai") as client:
        saved = await call(client, "save_memory", content="Likes dark mode everywhere", platform="ChatGPT")
    assert saved["platform"] == "chatgpt"


async def test_save_takes_type_pin_and_event_time(server: TalleiServer, service: MemoryService) -> None:
    async with session(server) as client:
        saved = await call(
            client,
            "save_memory",
            content="Dentist appointment with Dr Okafor",
            type="event",
            pinned=True,
            occurred_at="2026-05-03T14:00:00+02:00",
        )
    memory = service.get(saved["id"])
    assert memory.type is MemoryType.EVENT and memory.bucket is Bucket.SHORT_TERM and memory.pinned
    assert memory.occurred_at.isoformat() == "2026-05-03T12:00:00+00:00"


# -- recall, search, list -------------------------------------------------------------------------


async def test_recall_returns_the_context_block_and_the_buckets(server: TalleiServer) -> None:
    async with session(server) as client:
        pref = await call(client, "save_memory", content="I always use pytest for tests")
        fact = await call(client, "save_memory", content="We decided to use Postgres for billing")
        note = await call(client, "save_memory", content="Yesterday the deploy to staging went fine")
        result = await client.call_tool("recall_memories", {})
    text = text_of(result)
    assert ids_by_section(text) == {
        "preferences": [pref["id"]],
        "long_term": [fact["id"]],
        "short_term": [note["id"]],
        "more": [],
    }
    # Every long-term memory fits, so none is left out; semantic search is on.
    assert "Only the most relevant are shown" not in text and "Semantic search is off" not in text
    assert text.startswith("# Tallei memory")
    for words in ("pytest", "Postgres", "staging"):
        assert words in text


async def test_search_finds_by_words_and_filters(server: TalleiServer) -> None:
    async with session(server) as client:
        fact = await call(client, "save_memory", content="The billing service runs on Postgres 16")
        await call(client, "save_memory", content="I prefer Postgres over MySQL", type="preference")
        everything = await call(client, "search_memories", query="postgres")
        facts_only = await call(client, "search_memories", query="postgres", types=["fact"], limit=5)
        long_term = await call(client, "search_memories", query="postgres", buckets=["long_term"])
    assert len(everything["hits"]) == 2
    assert [h["memory"]["id"] for h in facts_only["hits"]] == [fact["id"]]
    assert [h["memory"]["id"] for h in long_term["hits"]] == [fact["id"]]
    assert all(isinstance(h["score"], float) for h in everything["hits"])


async def test_list_pages_and_filters(server: TalleiServer) -> None:
    async with session(server) as client:
        for i in range(5):
            await call(client, "save_memory", content=f"Project {i} is written in Rust", type="fact")
        await call(client, "save_memory", content="I prefer short answers")
        first = await call(client, "list_memories", type="fact", limit=3)
        second = await call(client, "list_memories", type="fact", limit=3, offset=first["next_offset"])
        prefs = await call(client, "list_memories", bucket="preference")
    assert len(first["memories"]) == 3 and first["next_offset"] == 3
    assert len(second["memories"]) == 2 and second["next_offset"] is None
    assert {m["id"] for m in first["memories"]}.isdisjoint({m["id"] for m in second["memories"]})
    assert [m["content"] for m in prefs["memories"]] == ["I prefer short answers"]


# -- editing --------------------------------------------------------------------------------------


async def test_update_pin_unpin_and_forget(server: TalleiServer, service: MemoryService) -> None:
    async with session(server, client_name="cursor-vscode") as client:
        saved = await call(client, "save_memory", content="The staging database is called tern")
        mid = saved["id"]
        updated = await call(client, "update_memory", id=mid, content="The staging database is called puffin")
        pinned = await call(client, "pin_memory", id=mid)
        unpinned = await call(client, "unpin_memory", id=mid)
        retyped = await call(client, "update_memory", id=mid, type="decision")
        forgotten = await call(client, "forget_memory", id=mid)
        again = await call(client, "forget_memory", id=mid)
        recall = await client.call_tool("recall_memories", {"query": "staging database"})
        deleted = await call(client, "list_memories", status="deleted")
    assert updated["content"] == "The staging database is called puffin"
    assert pinned["pinned"] is True and unpinned["pinned"] is False
    assert retyped["type"] == "decision" and retyped["bucket"] == "long_term"
    assert forgotten["status"] == again["status"] == "deleted"
    assert "puffin" not in text_of(recall)
    assert [m["id"] for m in deleted["memories"]] == [mid]
    edits = [p for p in service.get(mid).provenance if p.action == "edited"]
    assert [p.platform for p in edits] == ["cursor"]


async def test_conflicts_are_listed_and_resolved(server: TalleiServer, service: MemoryService) -> None:
    async with session(server, client_name="claude-ai") as claude:
        tabs = await call(claude, "save_memory", content="I prefer tabs for indentation in Python")
        assert service.wait_idle(30)
    async with session(server, client_name="openai-mcp") as chatgpt:
        spaces = await call(chatgpt, "save_memory", content="I prefer spaces for indentation in Python")
        assert service.wait_idle(30)
        listed = await call(chatgpt, "list_conflicts")
        assert len(listed["conflicts"]) == 1
        conflict = listed["conflicts"][0]
        assert {conflict["first"]["id"], conflict["second"]["id"]} == {tabs["id"], spaces["id"]}
        assert conflict["status"] == "open"
        recall = text_of(await chatgpt.call_tool("recall_memories", {"query": "indentation"}))
        assert recall.count(f"CONFLICT {conflict['id']}:") == 2
        keep = conflict["first"]["id"]
        settled = await call(chatgpt, "resolve_conflict", conflict_id=conflict["id"], resolution="keep_first")
        assert settled["status"] == "resolved" and settled["resolution"] == "keep_first"
        assert await call(chatgpt, "list_conflicts") == {"conflicts": []}
        history = await call(chatgpt, "list_conflicts", include_resolved=True)
        assert [c["id"] for c in history["conflicts"]] == [conflict["id"]]
        twice = await error_of(
            chatgpt, "resolve_conflict", conflict_id=conflict["id"], resolution="keep_both"
        )
    assert "already resolved" in twice
    remaining = [i.memory.id for i in service.recall("indentation").preferences]
    assert remaining == [keep]


async def test_status_counts_buckets_pending_work_and_semantic_search(server: TalleiServer) -> None:
    async with session(server) as client:
        await call(client, "save_memory", content="I prefer vim keybindings")
        await call(client, "save_memory", content="The office is in Leeds")
        status = await call(client, "memory_status")
    assert status["counts"] == {"preference": 1, "long_term": 1, "short_term": 0}
    assert status["semantic_search"] is True and status["open_conflicts"] == 0
    assert status["pending_background_work"] >= 0 and status["schema_version"] >= 1


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("save_memory", {}, "content: Field required"),
        ("save_memory", {"content": ""}, "at least 1 character"),
        ("save_memory", {"content": "   "}, "empty"),
        ("save_memory", {"content": "x" * 40_000}, "at most 32768 characters"),
        ("save_memory", {"content": "é" * 20_000}, "limit is 32,768"),
        ("save_memory", {"content": 42}, "valid string"),
        ("save_memory", {"content": "ok", "type": "opinion"}, "Input should be 'preference'"),
        ("save_memory", {"content": "ok", "occurred_at": "soon"}, "occurred_at"),
        ("save_memory", {"content": "ok", "occurred_at": "9999-12-31T23:00:00-05:00"}, "between the years"),
        ("save_memory", {"content": "nul \x00 inside"}, "NUL"),
        ("save_memory", {"content": "lone \ud800 surrogate"}, "content"),
        ("recall_memories", {"query": "q" * 2_001}, "at most 2000"),
        ("search_memories", {"query": ""}, "at least 1 character"),
        ("search_memories", {"query": "x", "limit": 0}, "greater than or equal to 1"),
        ("search_memories", {"query": "x", "types": ["fact", "gossip"]}, "types.1"),
        ("list_memories", {"status": "lost"}, "status"),
        ("list_memories", {"offset": -1}, "offset"),
        ("update_memory", {"id": "3f9a2c1d7b0e"}, "Nothing to change"),
        ("update_memory", {"id": "3f9a2c1d7b0e", "content": "new"}, "No memory has the id 3f9a2c1d7b0e"),
        ("forget_memory", {"id": "'; DROP TABLE memories; --"}, "is not a memory id"),
        ("pin_memory", {"id": "3f9a2c1d7b0e"}, "No memory has the id"),
        ("unpin_memory", {}, "id: Field required"),
        ("resolve_conflict", {"conflict_id": "c3f9a2c1d7b0e", "resolution": "keep_first"}, "No conflict"),
        ("resolve_conflict", {"conflict_id": "c3f9a2c1d7b0e", "resolution": "toss"}, "resolution"),
        (
            "resolve_conflict",
            {"conflict_id": "c3f9a2c1d7b0e", "resolution": "keep_both", "content": "x"},
            "replace",
        ),
    ],
)
async def test_bad_input_is_a_one_line_tool_error(
    server: TalleiServer, service: MemoryService, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    async with session(server) as client:
        message = await error_of(client, tool, **arguments)
        assert (await client.call_tool("memory_status", {})).is_error is False
    assert expected in message
    assert service.status().counts == {"preference": 0, "long_term": 0, "short_term": 0}


async def test_an_unknown_tool_is_a_tool_error_naming_the_real_ones(server: TalleiServer) -> None:
    async with session(server) as client:
        message = await error_of(client, "delete_everything\nnow")
    assert "'delete_everything\\nnow'" in message and "save_memory" in message


async def test_a_store_that_cannot_open_is_reported_by_every_tool() -> None:
    def refuse() -> MemoryService:
        raise KeyUnavailable("No OS keyring is available and no passphrase was given. Set TALLEI_PASSPHRASE.")

    server = build_server(OpeningService(refuse).start())
    async with session(server) as client:
        for tool, arguments in (("memory_status", {}), ("save_memory", {"content": "x"})):
            assert "Set TALLEI_PASSPHRASE" in await error_of(client, tool, **arguments)


async def test_tools_wait_for_a_store_that_is_still_opening(service: MemoryService) -> None:
    gate = threading.Event()

    def slow_open() -> MemoryService:
        assert gate.wait(30)
        return service

    opening = OpeningService(slow_open).start()
    server = build_server(opening)
    async with session(server) as client:
        assert not opening.ready  # the handshake did not need the store
        gate.set()
        saved = await call(client, "save_memory", content="Opened after the handshake")
    assert service.get(saved["id"]).content == "Opened after the handshake"


async def test_an_internal_error_is_logged_with_its_traceback_and_reported_plainly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> MemoryService:
        raise RuntimeError("disk gremlins")

    server = build_server(broken)
    async with session(server) as client:
        with caplog.at_level(logging.ERROR, logger="tallei_desktop.mcp_server.tools"):
            message = await error_of(client, "memory_status")
    assert "internal error" in message and "gremlins" not in message
    record = next(r for r in caplog.records if r.name == "tallei_desktop.mcp_server.tools")
    assert record.exc_info is not None and "disk gremlins" in str(record.exc_info[1])
