"""Generated arguments against every tool over one real in-memory session.

Wrong types, missing and unknown arguments, huge and hostile strings, lone surrogates, and now and
then something valid. Whatever arrives, each call ends in a one-line tool error or a result that
matches the tool's output schema; the session keeps answering; and the memories already in the
store stay exactly as they were.

The service runs without its background worker, so a generated save that happens to be valid can
only add a pending memory: it can never be merged into, supersede or conflict with a stored one.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp_types import CallToolResult
from pydantic import BaseModel

from tallei_desktop.core.models import Memory
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tallei_desktop.mcp_server import schemas
from tallei_desktop.mcp_server.server import build_server
from tests.mcp_server.conftest import BUDGETS, KEY, session, text_of
from tests.support.fake_embedder import HashEmbedder

#: Examples per tool; eleven tools make 3,300 calls.
EXAMPLES_PER_TOOL = 300

#: What each tool's structured result must be; None for a tool that answers with text alone.
OUTPUT_MODELS: dict[str, type[BaseModel] | None] = {
    "save_memory": schemas.SaveOut,
    "recall_memories": None,
    "search_memories": schemas.SearchOut,
    "list_memories": schemas.MemoryList,
    "update_memory": schemas.MemoryOut,
    "forget_memory": schemas.MemoryOut,
    "pin_memory": schemas.MemoryOut,
    "unpin_memory": schemas.MemoryOut,
    "list_conflicts": schemas.ConflictList,
    "resolve_conflict": schemas.ConflictOut,
    "memory_status": schemas.StatusOut,
}

SEEDS = [
    ("I prefer tabs over spaces in Python", "claude", False),
    ("Always answer in British English", "chatgpt", True),
    ("We decided to host the billing service on Postgres 16", "cursor", False),
    ("The outage on 3 March was caused by an expired certificate", "gemini", False),
    ("Yesterday the team demoed the new onboarding flow", "vscode", False),
]

LONE_SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udc80b", "tabs \ud83d", "\udbff\udbff"])
HOSTILE = st.sampled_from(
    [
        "'; DROP TABLE memories; --",
        '" OR 1=1 --',
        'NEAR(tabs spaces) AND "x" OR * ^ -',
        "content MATCH 'x*'",
        "\x00",
        "before\x00after",
        "\u202eevil\u202c",
        "\ufeff",
        "\u0000\u0001\u001f\u007f",
        "💥" * 40,
        "../../../etc/passwd",
        "<script>alert(1)</script>",
        "{{7*7}} ${7*7} %s%n",
        "null",
        "true",
        "[]",
        "{}",
        '["fact", "note"]',
        '{"content": "x"}',
        "1e309",
        "NaN",
        "-0",
        "9" * 400,
        "2026-05-03T14:00:00Z",
        "9999-12-31T23:59:59-05:00",
        "0001-01-01T00:00:00+14:00",
        "1970-01-01",
        "preference",
        "fact",
        "event",
        "long_term",
        "short_term",
        "keep_first",
        "replace",
        "deleted",
        "active",
        "3f9a2c1d7b0e",
        "c3f9a2c1d7b0e",
        "",
        " ",
        "\n\t\r",
    ]
)
TEXT = st.text(st.characters(exclude_categories=()), max_size=120)
HUGE = st.integers(30_000, 200_000).map(lambda n: "x" * n) | st.integers(1, 3).map(lambda k: "é" * 17_000 * k)
IDS = st.from_regex(r"[a-z]?[0-9a-f]{12}", fullmatch=True)
NUMBERS = st.integers(-(2**80), 2**80) | st.floats(allow_nan=True, allow_infinity=True)
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT | LONE_SURROGATES | HOSTILE | HUGE | IDS
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)


def _plausible(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values that pass the schema, so generation also reaches the service behind it."""
    options = [choice for branch in prop.get("anyOf", [prop]) for choice in branch.get("enum", [])]
    if options:
        return st.sampled_from(options) | st.lists(st.sampled_from(options), max_size=3)
    kind = {branch.get("type") for branch in prop.get("anyOf", [prop])}
    if "integer" in kind:
        return st.integers(-5, 150)
    if "boolean" in kind:
        return st.booleans()
    return TEXT | HOSTILE | IDS


@functools.cache
def arguments_for(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    schema = _SCHEMAS[tool]
    optional = {name: VALUES | _plausible(prop) for name, prop in schema.get("properties", {}).items()}
    known = st.fixed_dictionaries({}, optional=optional)
    junk = st.dictionaries(st.text(min_size=1, max_size=12), VALUES, max_size=2)
    return st.builds(lambda a, b: {**b, **a}, known, junk)


#: Each tool's input schema, as the session listed it.
_SCHEMAS: dict[str, dict[str, Any]] = {}


def _fingerprint(m: Memory) -> tuple[object, ...]:
    return (
        m.content,
        m.type,
        m.bucket,
        m.status,
        m.pinned,
        m.platform,
        m.superseded_by,
        m.occurred_at,
        m.embedded,
    )


@dataclass
class Barrage:
    service: MemoryService
    client: Client
    portal: BlockingPortal
    seeded: dict[str, tuple[object, ...]]

    def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        result: CallToolResult = self.portal.call(self.client.call_tool, tool, arguments)
        return result

    def seeds_unchanged(self) -> bool:
        return {mid: _fingerprint(self.service.get(mid)) for mid in self.seeded} == self.seeded


@pytest.fixture(scope="module")
def barrage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Barrage]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "tallei.db"
    service = MemoryService(Database(path, KEY, key_source="test key"), HashEmbedder(), budgets=BUDGETS)
    ids = [service.save(text, platform=platform, pinned=pinned).id for text, platform, pinned in SEEDS]
    service.drain()
    seeded = {mid: _fingerprint(service.get(mid)) for mid in ids}
    try:
        with (
            start_blocking_portal(backend="asyncio") as portal,
            portal.wrap_async_context_manager(session(build_server(service))) as client,
        ):
            for tool in portal.call(client.list_tools).tools:
                _SCHEMAS[tool.name] = tool.input_schema
            yield Barrage(service, client, portal, seeded)
    finally:
        service.close()


@pytest.mark.parametrize("tool", sorted(OUTPUT_MODELS))
@settings(
    max_examples=EXAMPLES_PER_TOOL,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(data=st.data())
def test_any_arguments_give_a_tool_error_or_a_valid_result_and_change_nothing_stored(
    barrage: Barrage, tool: str, data: st.DataObject
) -> None:
    arguments = data.draw(arguments_for(tool), label="arguments")
    result = barrage.call(tool, arguments)
    event("tool error" if result.is_error else "result")
    if result.is_error:
        message = text_of(result)
        assert message and "\n" not in message and len(message) <= 500, message
        # Bad input is the caller's mistake, never a crash inside Tallei.
        assert "internal error" not in message, (arguments, message)
    else:
        model = OUTPUT_MODELS[tool]
        if model is None:
            assert result.structured_content is None and text_of(result).startswith("# Tallei memory")
        else:
            assert result.structured_content is not None
            model.model_validate(result.structured_content)
    assert barrage.seeds_unchanged()


def test_after_the_barrage_the_session_still_answers_and_seeds_are_intact(barrage: Barrage) -> None:
    status = barrage.call("memory_status", {})
    assert not status.is_error
    assert barrage.seeds_unchanged()
    saved = barrage.call("save_memory", {"content": "The quokka build server runs FreeBSD"})
    assert not saved.is_error
    recall = barrage.call("recall_memories", {"query": "quokka"})
    assert "The quokka build server runs FreeBSD" in text_of(recall)
