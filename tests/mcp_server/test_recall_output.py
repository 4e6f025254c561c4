"""The lean structured output of recall_memories: what each item carries, and how big it is."""

from __future__ import annotations

import copy
import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for

from tallei_desktop.core.models import MemoryType
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tallei_desktop.mcp_server.schemas import RecallOut, recall_out, recall_structured
from tallei_desktop.mcp_server.server import TalleiServer
from tests.mcp_server.conftest import BUDGETS, KEY, session, structured, text_of
from tests.support.fake_embedder import HashEmbedder

pytestmark = pytest.mark.anyio

#: Every item's fields; ``confidence`` only appears once the memory is confirmed, ``conflict_ids``
#: only when it is part of an open conflict.
ITEM_FIELDS = {"id", "type", "bucket", "platforms", "date", "score", "content"}
OPTIONAL_FIELDS = {"confidence", "conflict_ids"}
TOP_FIELDS = {
    "query",
    "preferences",
    "long_term",
    "short_term",
    "more",
    "long_term_mode",
    "semantic_search",
    "open_conflicts",
}
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


def items(block: dict[str, Any]) -> list[dict[str, Any]]:
    return [*block["preferences"], *block["long_term"], *block["short_term"], *block["more"]]


async def test_each_item_carries_what_the_block_shows_and_nothing_more(
    server: TalleiServer, service: MemoryService
) -> None:
    fill(service)
    # Another assistant saves a few of them again: those are confirmed (MED), the rest seen once.
    # (Lessons and events: a second platform on a preference or fact is also checked for conflicts.)
    again = [c for c in corpus() if "Amara" in c[0] and c[1] in {MemoryType.LESSON, MemoryType.EVENT}]
    for content, mtype, _, occurred in again[:4]:
        service.save(content, type=mtype, platform="gemini", occurred_at=occurred)
    assert service.wait_idle(60)
    # As stored when recalled: each recall confirms what it returns, which can raise a confidence.
    stored = {m.id: m for offset in (0, 500) for m in service.list(limit=500, offset=offset)}
    async with session(server) as client:
        result = await client.call_tool("recall_memories", {"query": "Amara and the billing service"})
    block, text = structured(result), text_of(result)
    assert set(block) == TOP_FIELDS
    assert block["query"] == "Amara and the billing service" and block["open_conflicts"] == 0
    recalled = items(block)
    assert len(recalled) > 20
    for item in recalled:
        assert ITEM_FIELDS <= set(item) <= ITEM_FIELDS | {"confidence"}
        memory = stored[item["id"]]
        dated = (
            memory.occurred_at if memory.type in {MemoryType.EVENT, MemoryType.NOTE} else memory.updated_at
        )
        assert item["date"] == f"{dated:%Y-%m-%d}"
        assert (item["type"], item["bucket"], item.get("confidence", "UNCONFIRMED")) == (
            memory.type,
            memory.bucket,
            memory.confidence,
        )
        assert ("confidence" in item) is (memory.confidence != "UNCONFIRMED")
        assert item["content"] == memory.content and item["platforms"] == list(memory.platforms)
        assert f"{item['date']} · id {item['id']}]" in text
    # Both shapes are on the wire: memories seen once, and confirmed ones that say so.
    assert any("confidence" in i for i in recalled) and not all("confidence" in i for i in recalled)
    scores = [i["score"] for i in recalled if i["score"] is not None]
    assert scores and all(round(s, 4) == s for s in scores)


async def test_the_structured_result_stays_within_half_again_the_text_block(
    server: TalleiServer, service: MemoryService
) -> None:
    fill(service)
    async with session(server) as client:
        for query in ("", "Amara and the billing service", "load tests before launch", "budget questions"):
            result = await client.call_tool("recall_memories", {"query": query})
            block, text = structured(result), text_of(result)
            assert len(items(block)) > 20
            wire = json.dumps(block, ensure_ascii=False, separators=(",", ":")).encode()
            ratio = len(wire) / len(text.encode())
            assert ratio <= 1.5, f"{query!r}: structured {len(wire):,} B is {ratio:.2f}x the text"


async def test_recall_items_name_their_open_conflicts(server: TalleiServer, service: MemoryService) -> None:
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
        conflicts = structured(await chatgpt.call_tool("list_conflicts", {}))["conflicts"]
        block = structured(await chatgpt.call_tool("recall_memories", {"query": "indentation"}))
    assert len(conflicts) == 1 and block["open_conflicts"] == 1
    shown = {i["id"]: i for i in items(block)}
    assert set(shown) == {tabs["id"], spaces["id"]}
    assert all(i["conflict_ids"] == [conflicts[0]["id"]] for i in shown.values())
    assert shown[tabs["id"]]["platforms"] == ["claude"] and shown[spaces["id"]]["platforms"] == ["chatgpt"]


def conflicting_pair(service: MemoryService) -> None:
    service.save("I prefer tabs for indentation in Python", platform="claude")
    service.save("I prefer spaces for indentation in Python", platform="chatgpt")
    assert service.wait_idle(30) and service.status().open_conflicts == 1


async def test_the_structured_result_is_what_the_model_dumps(service: MemoryService) -> None:
    fill(service)
    conflicting_pair(service)
    for query in ("", "Amara and the billing service", "indentation in Python"):
        result = service.recall(query)
        assert any(i.score is not None for i in result.items) and any(i.score is None for i in result.items)
        assert recall_structured(result) == recall_out(result).model_dump(mode="json")
    assert any(i.conflict_ids for i in service.recall("indentation in Python").items)


def nodes(schema: Any) -> list[dict[str, Any]]:
    """Every object in a JSON schema, nested ones included."""
    if isinstance(schema, list):
        return [n for s in schema for n in nodes(s)]
    if not isinstance(schema, dict):
        return []
    return [schema, *(n for v in schema.values() for n in nodes(v))]


async def test_output_schemas_are_published_flat(server: TalleiServer) -> None:
    async with session(server) as client:
        tools = {t.name: t.output_schema for t in (await client.list_tools()).tools}
    for name, schema in tools.items():
        assert schema is not None
        for node in nodes(schema):
            assert "$ref" not in node and "$defs" not in node, name
    item = tools["recall_memories"]["properties"]["long_term"]["items"]
    assert set(item["properties"]) == ITEM_FIELDS | OPTIONAL_FIELDS
    assert set(item["required"]) == ITEM_FIELDS
    assert item["properties"]["confidence"]["default"] == "UNCONFIRMED"
    assert item["properties"]["type"]["enum"] == [t.value for t in MemoryType]
    # Only the score may be null (in each of the four lists), and nothing else branches.
    branching = [n for n in nodes(tools["recall_memories"]) if "anyOf" in n]
    assert branching == [item["properties"]["score"]] * 4
    assert item["properties"]["confidence"]["description"].startswith("MED from 2 confirmations")


def broken(block: dict[str, Any]) -> list[dict[str, Any]]:
    """``block`` spoilt in the ways a flat schema might fail to notice, one way each."""
    out = []
    for field, value in (
        ("type", "opinion"),
        ("bucket", "somewhere"),
        ("confidence", "LOW"),
        ("score", "high"),
        ("platforms", [1]),
        ("conflict_ids", "c1"),
        ("content", None),
    ):
        spoilt = copy.deepcopy(block)
        spoilt["long_term"][0][field] = value
        out.append(spoilt)
    missing = copy.deepcopy(block)
    del missing["long_term"][0]["date"]
    return [*out, missing, {**block, "long_term_mode": "all"}, {**block, "more": [{}]}]


async def test_the_flat_recall_schema_accepts_and_rejects_what_the_model_does(
    server: TalleiServer, service: MemoryService
) -> None:
    fill(service)
    async with session(server) as client:
        flat = next(t for t in (await client.list_tools()).tools if t.name == "recall_memories").output_schema
        block = structured(
            await client.call_tool("recall_memories", {"query": "Amara and the billing service"})
        )
    assert flat is not None and block["long_term"]
    derived = RecallOut.model_json_schema(mode="serialization")
    for schema in (flat, derived):
        validator = validator_for(schema)(schema)
        assert not list(validator.iter_errors(block))
        for spoilt in broken(block):
            assert list(validator.iter_errors(spoilt)), spoilt


async def test_a_repeated_recall_is_answered_again_only_until_the_store_changes(
    server: TalleiServer, service: MemoryService, tmp_path: Path
) -> None:
    fill(service)
    query = "the autumn offsite"
    async with session(server) as client:
        first = await client.call_tool("recall_memories", {"query": query})
        again = await client.call_tool("recall_memories", {"query": query})
        assert structured(again) == structured(first) and text_of(again) == text_of(first)
        # Another process saves to the same store.
        other = MemoryService(
            Database(tmp_path / "tallei.db", KEY, key_source="test key"), HashEmbedder(), budgets=BUDGETS
        )
        try:
            saved = other.save("Prefers the autumn offsite to be held somewhere reachable by train")
        finally:
            other.close()
        after = await client.call_tool("recall_memories", {"query": query})
    assert saved.id in {i["id"] for i in items(structured(after))}
    assert "reachable by train" in text_of(after) and "reachable by train" not in text_of(first)
