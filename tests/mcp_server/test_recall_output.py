"""recall_memories answers with its context block alone, so every client's model reads the same block once.

Clients differ in the field they show the model (docs/adr/0005-one-answer.md): with the block as the
only content and no structured result, whichever field a client picks is the block, within its budget.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp_types import TextContent

from tallei_desktop.core.models import Confidence, MemoryType
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tallei_desktop.mcp_server.server import TalleiServer
from tests.mcp_server.conftest import BUDGETS, KEY, session, structured, text_of
from tests.mcp_server.recall_text import ids_by_section, line_of
from tests.support.fake_embedder import HashEmbedder

pytestmark = pytest.mark.anyio

PLATFORMS = ("claude", "chatgpt", "gemini", "cursor", "vscode")
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def corpus() -> list[tuple[str, MemoryType, str, datetime | None]]:
    """A few hundred distinct memories of every type, about 100 bytes long, as assistants tend to write them.

    Preferences, facts and decisions all come from one platform: from several, these look-alike
    sentences would be flagged as conflicts between assistants, whose warnings lengthen the text.
    """
    people = ("Amara", "Bruno", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana")
    things = (
        "the billing service",
        "the mobile app",
        "the data pipeline",
        "the design review",
        "the autumn offsite",
        "the hiring plan",
        "the search index",
        "the customer survey",
    )
    out: list[tuple[str, MemoryType, str, datetime | None]] = []
    for n, (who, what) in enumerate(itertools.product(people, things)):
        platform = PLATFORMS[n % len(PLATFORMS)]
        happened = NOW - timedelta(days=n % 50, hours=n % 7)
        out += [
            (
                f"Prefers {who}'s summaries of {what} as short bullet lists, with the open questions and owners at the top",
                MemoryType.PREFERENCE,
                "claude",
                None,
            ),
            (
                f"{who} owns {what} and reviews every change to it before release, usually on Tuesday mornings",
                MemoryType.FACT,
                "claude",
                None,
            ),
            (
                f"Decided with {who} to move {what} onto the new cluster once the migration scripts have been reviewed",
                MemoryType.DECISION,
                "claude",
                None,
            ),
            (
                f"Learned from {who} that {what} needs load tests before launch, or it falls over under the first real traffic",
                MemoryType.LESSON,
                platform,
                None,
            ),
            (
                f"Met {who} to go through open questions about {what} and agree on next steps",
                MemoryType.EVENT,
                platform,
                happened,
            ),
            (
                f"Note to ask {who} about the budget for {what} before the planning meeting at the end of the month",
                MemoryType.NOTE,
                platform,
                happened,
            ),
        ]
    return out


def fill(service: MemoryService) -> None:
    for content, mtype, platform, occurred in corpus():
        service.save(content, type=mtype, platform=platform, occurred_at=occurred)
    assert service.wait_idle(60)


QUERIES = ("", "Amara and the billing service", "load tests before launch", "budget questions")


async def test_recall_publishes_no_output_schema_while_the_other_tools_keep_flat_ones(
    server: TalleiServer,
) -> None:
    async with session(server) as client:
        tools = {t.name: t.output_schema for t in (await client.list_tools()).tools}
    assert tools.pop("recall_memories") is None
    assert {"search_memories", "list_memories", "memory_status"} <= set(tools)
    for name, schema in tools.items():
        assert schema is not None, name
        for node in nodes(schema):
            assert "$ref" not in node and "$defs" not in node, name


async def test_the_answer_is_the_block_the_person_previews_once_and_nothing_else(
    server: TalleiServer, service: MemoryService
) -> None:
    fill(service)
    async with session(server) as client:
        for query in QUERIES:
            preview = service.recall(query)  # the person's own look changes nothing
            result = await client.call_tool("recall_memories", {"query": query})
            assert not result.is_error
            assert result.structured_content is None
            assert [type(c) for c in result.content] == [TextContent]
            text = text_of(result)
            assert text == preview.text
            assert len(preview.items) > 20
            # The whole result on the wire is the block and its JSON envelope: one copy of it.
            wire = result.model_dump_json(by_alias=True, exclude_none=True).encode()
            ratio = len(wire) / len(text.encode())
            assert ratio <= 1.1, f"{query!r}: the answer is {len(wire):,} B, {ratio:.2f}x the block"


async def test_each_memory_line_carries_what_a_program_needs_to_act_on_it(
    server: TalleiServer, service: MemoryService
) -> None:
    fill(service)
    # Another assistant saves a few of them again: those are confirmed (MED), the rest seen once.
    again = [c for c in corpus() if "Amara" in c[0] and c[1] in {MemoryType.LESSON, MemoryType.EVENT}]
    for content, mtype, _, occurred in again[:4]:
        service.save(content, type=mtype, platform="gemini", occurred_at=occurred)
    assert service.wait_idle(60)
    query = "Amara and the billing service"
    recalled = service.recall(query)
    async with session(server) as client:
        text = text_of(await client.call_tool("recall_memories", {"query": query}))
    sections = ids_by_section(text)
    assert sections == {
        "preferences": [i.memory.id for i in recalled.preferences],
        "long_term": [i.memory.id for i in recalled.long_term],
        "short_term": [i.memory.id for i in recalled.short_term],
        "more": [i.memory.id for i in recalled.more],
    }
    shown = [mid for ids in sections.values() for mid in ids]
    assert len(shown) == len(set(shown)) > 20  # each memory once
    confirmed = 0
    for item in recalled.items:
        m = item.memory
        line = line_of(text, m.id)
        dated = m.occurred_at if m.type in {MemoryType.EVENT, MemoryType.NOTE} else m.updated_at
        assert line.startswith(f"- [{m.type}") and f"· {dated:%Y-%m-%d} · id {m.id}" in line
        assert line.endswith(" ".join(m.content.split()))
        assert (f" · {m.confidence} ·" in line) is (m.confidence is not Confidence.UNCONFIRMED)
        confirmed += m.confidence is not Confidence.UNCONFIRMED
    assert 0 < confirmed < len(recalled.items)


async def test_the_block_says_the_mode_and_the_state_of_semantic_search(
    server: TalleiServer, service: MemoryService
) -> None:
    fill(service)
    async with session(server) as client:
        text = text_of(await client.call_tool("recall_memories", {"query": "the hiring plan"}))
        status = structured(await client.call_tool("memory_status", {}))
    assert service.recall("the hiring plan").long_term_mode == "hybrid"
    assert "Only the most relevant are shown; use search_memories for more." in text
    assert status["semantic_search"] is True and "Semantic search is off" not in text


async def test_recall_names_open_conflicts_beside_both_memories(
    server: TalleiServer, service: MemoryService
) -> None:
    async with session(server, client_name="claude-ai") as claude:
        tabs = structured(
            await claude.call_tool("save_memory", {"content": "I prefer tabs for indentation in Python"})
        )
        assert service.wait_idle(30)
    async with session(server, client_name="openai-mcp") as chatgpt:
        spaces = structured(
            await chatgpt.call_tool("save_memory", {"content": "I prefer spaces for indentation in Python"})
        )
        assert service.wait_idle(30)
        [conflict] = structured(await chatgpt.call_tool("list_conflicts", {}))["conflicts"]
        text = text_of(await chatgpt.call_tool("recall_memories", {"query": "indentation"}))
    assert sorted(ids_by_section(text)["preferences"]) == sorted([tabs["id"], spaces["id"]])
    assert f"CONFLICT {conflict['id']}: disagrees with {spaces['id']} (saved on chatgpt)" in text
    assert f"CONFLICT {conflict['id']}: disagrees with {tabs['id']} (saved on claude)" in text
    assert "· claude ·" in line_of(text, tabs["id"]) and "· chatgpt ·" in line_of(text, spaces["id"])


def nodes(schema: Any) -> list[dict[str, Any]]:
    """Every object in a JSON schema, nested ones included."""
    if isinstance(schema, list):
        return [n for s in schema for n in nodes(s)]
    if not isinstance(schema, dict):
        return []
    return [schema, *(n for v in schema.values() for n in nodes(v))]


async def test_a_repeated_recall_is_answered_again_only_until_the_store_changes(
    server: TalleiServer, service: MemoryService, tmp_path: Path
) -> None:
    fill(service)
    query = "the autumn offsite"
    async with session(server) as client:
        first = await client.call_tool("recall_memories", {"query": query})
        again = await client.call_tool("recall_memories", {"query": query})
        assert again.content == first.content and again.structured_content is None
        # Another process saves to the same store.
        other = MemoryService(
            Database(tmp_path / "tallei.db", KEY, key_source="test key"), HashEmbedder(), budgets=BUDGETS
        )
        try:
            saved = other.save("Prefers the autumn offsite to be held somewhere reachable by train")
        finally:
            other.close()
        after = await client.call_tool("recall_memories", {"query": query})
    assert saved.id in ids_by_section(text_of(after))["preferences"]
    assert "reachable by train" in text_of(after) and "reachable by train" not in text_of(first)
