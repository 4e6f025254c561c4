"""The Tallei tools, one module-level function each, and what MCP clients are told about them.

Every tool is thin: typed arguments with limits, one service call on a worker thread (the service
blocks on SQLite and, for recall, on embedding the query), and error mapping. A :class:`KnownError`
reaches the host model as a tool error carrying its one-line message; anything else is logged with
its traceback here, at the handler boundary, and reported as an internal error.

Each tool takes a :class:`ServiceCalls` first and its MCP arguments after it; ``build_server`` binds
the first, so the signature the SDK reads (and the schemas it derives) is the rest. A test can
``await`` a tool directly with a ``ServiceCalls`` over a real service.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from tallei_desktop.core import APP_PLATFORM, KnownError, MemoryService, RecallResult
from tallei_desktop.mcp_server.platforms import UNKNOWN_PLATFORM, platform_for_client
from tallei_desktop.mcp_server.schemas import (
    BucketName,
    ConflictId,
    ConflictList,
    ConflictOut,
    Content,
    MemoryId,
    MemoryList,
    MemoryOut,
    MemoryTypeName,
    OccurredAt,
    PlatformName,
    Query,
    ResolutionName,
    SaveOut,
    SearchOut,
    StatusName,
    StatusOut,
    conflict_out,
    memory_out,
    save_out,
    search_out,
    status_out,
)

__all__ = [
    "TOOLS",
    "ServiceCalls",
    "ServiceSource",
    "ToolSpec",
    "check_access",
    "forget_memory",
    "list_conflicts",
    "list_memories",
    "memory_status",
    "pin_memory",
    "recall_memories",
    "resolve_conflict",
    "save_memory",
    "search_memories",
    "unpin_memory",
    "update_memory",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: A ready service, or a callable that returns it and may block (on a worker thread) while the
#: store is still opening, so that a transport can answer ``initialize`` before the store is open.
ServiceSource = MemoryService | Callable[[], MemoryService]

_MAX_MESSAGE = 400
#: Recall answers kept for reuse (see :meth:`ServiceCalls.recall_answer`); the oldest goes first.
_RECALL_ANSWERS_KEPT = 64


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_MESSAGE else flat[: _MAX_MESSAGE - 1] + "…"


class ServiceCalls:
    """Runs one service call off the event loop and maps its failures to tool errors."""

    def __init__(self, source: ServiceSource) -> None:
        self._get: Callable[[], MemoryService] = (
            (lambda: source) if isinstance(source, MemoryService) else source
        )
        self._recall_answers: dict[str, tuple[RecallResult, CallToolResult]] = {}

    def recall_answer(self, result: RecallResult) -> CallToolResult:
        """The tool result for ``result``, built once per result the service hands out.

        The service returns the very same :class:`RecallResult` for a repeated query until the store
        changes (in any process) or the entry ages out, and a new one after; so an answer kept beside
        the result it was built from is reused only while that result is still the current one, and is
        never stale. One answer is kept per query, for the queries the service still caches.

        The answer is the context block as text and nothing else: clients show the model either the
        text or the structured content, some both, so a second form of the same memories would be read
        in place of the block, or beside it (docs/adr/0005-one-answer.md).
        """
        kept = self._recall_answers.get(result.query)
        if kept is not None and kept[0] is result:
            return kept[1]
        answer = CallToolResult(content=[TextContent(type="text", text=result.text)])
        if len(self._recall_answers) >= _RECALL_ANSWERS_KEPT:
            self._recall_answers.pop(next(iter(self._recall_answers)))
        self._recall_answers[result.query] = (result, answer)
        return answer

    async def run(self, tool: str, call: Callable[[MemoryService], T]) -> T:
        try:
            return await anyio.to_thread.run_sync(lambda: call(self._get()))
        except KnownError as exc:
            raise ToolError(_one_line(str(exc))) from None
        except Exception:
            # The handler boundary: log the traceback, give the model something it can act on.
            log.exception("%s failed", tool)
            raise ToolError(
                f"{tool} failed because of an internal error in Tallei; the details are in its log file. "
                "Tell the person."
            ) from None

    async def refuse_paused(self, tool: str, platforms: Iterable[str]) -> None:
        """Raise a one-line :class:`ToolError` when any of ``platforms`` is paused; reads nothing else."""
        wanted = frozenset(platforms)
        paused = await self.run(tool, lambda s: s.paused_platforms() & wanted)
        if paused:
            raise ToolError(
                f"Access for {', '.join(sorted(paused))} is paused in Tallei, so {tool} did nothing. "
                "The person can resume it on the Assistants page of the Tallei app."
            )


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool function and what clients are told about it; the tool's name is the function's."""

    fn: Callable[..., Awaitable[Any]]
    title: str
    description: str
    annotations: ToolAnnotations

    @property
    def name(self) -> str:
        return self.fn.__name__


def _assistant(name: str | None) -> str:
    """The platform a client's name stands for; never the one that marks the person's own actions
    in Tallei, so no assistant can save or edit as the person."""
    platform = platform_for_client(name)
    return UNKNOWN_PLATFORM if platform == APP_PLATFORM else platform


def _caller_platform(ctx: Context[Any, Any]) -> str:
    try:
        params = ctx.request_context.session.client_params
    except ValueError:  # a direct call outside any request
        return UNKNOWN_PLATFORM
    info = params.client_info if params is not None else None
    return _assistant(info.name if info is not None else None)


async def check_access(
    calls: ServiceCalls, tool: str, arguments: Mapping[str, Any], ctx: Context[Any, Any]
) -> None:
    """Refuse a tool call, before it reads or writes anything, when the assistant it comes from is
    paused: the platform of the client (from its ``clientInfo``) and, for ``save_memory``, the
    platform it names explicitly, so naming another platform does not get around a pause."""
    platforms = {_caller_platform(ctx)}
    explicit = arguments.get("platform") if tool == "save_memory" else None
    if isinstance(explicit, str) and explicit:
        platforms.add(_assistant(explicit))
    await calls.refuse_paused(tool, platforms)


def _hints(
    *, read_only: bool = False, destructive: bool = False, idempotent: bool = False
) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


async def save_memory(
    calls: ServiceCalls,
    content: Content,
    ctx: Context[Any, Any],
    type: Annotated[
        MemoryTypeName | None,
        Field(description="Only when you are sure; otherwise it is detected from the text."),
    ] = None,
    platform: Annotated[
        PlatformName | None,
        Field(description="Only to record the save under another platform than the one you connect as."),
    ] = None,
    pinned: Annotated[bool, Field(description="Pin it so that it is always recalled first.")] = False,
    occurred_at: Annotated[
        OccurredAt | None,
        Field(description="For events: when it happened, in ISO 8601, e.g. '2026-05-03T14:00:00Z'."),
    ] = None,
) -> SaveOut:
    source_platform = _assistant(platform) if platform else _caller_platform(ctx)
    result = await calls.run(
        "save_memory",
        lambda s: s.save(
            content, type=type, platform=source_platform, pinned=pinned, occurred_at=occurred_at
        ),
    )
    return save_out(result, source_platform)


SAVE_MEMORY = ToolSpec(
    save_memory,
    title="Save memory",
    description=(
        "Remember something about the person for every future conversation, in every assistant they use. "
        "Call it, without asking first, whenever the person states a preference ('I prefer…', 'call me…', "
        "'always use…'), makes a decision, tells you a fact about themselves, their work or their projects, "
        "mentions a dated event, a lesson learned, or something that broke. Save one self-contained statement "
        "per call. Saving what is already stored confirms it instead of making a copy. The type is detected "
        "from the text; pass it only when you are sure. Never save passwords, keys or other secrets."
    ),
    annotations=_hints(),
)


async def recall_memories(calls: ServiceCalls, query: Query = "") -> CallToolResult:
    result = await calls.run("recall_memories", lambda s: s.recall(query, count_use=True))
    return calls.recall_answer(result)


RECALL_MEMORIES = ToolSpec(
    recall_memories,
    title="Recall memories",
    description=(
        "Get what the person has told any of their assistants that matters now: their preferences, long-term "
        "facts and decisions, and recent events, as one context block. Call it at the start of every "
        "conversation and whenever the topic changes, before answering, with a few words about the topic "
        "(an empty query recalls the general picture). Use what it returns as things you already know. "
        "Each memory's line carries its id ('id …') for update_memory, forget_memory or pin_memory. "
        "If it reports a conflict, ask the person which version is right."
    ),
    annotations=_hints(read_only=True, idempotent=True),
)


async def search_memories(
    calls: ServiceCalls,
    query: Annotated[Query, Field(min_length=1)],
    limit: Annotated[int, Field(ge=1, le=100, description="How many memories to return at most.")] = 10,
    types: Annotated[
        list[MemoryTypeName] | None, Field(max_length=7, description="Only memories of these types.")
    ] = None,
    buckets: Annotated[
        list[BucketName] | None, Field(max_length=3, description="Only memories in these buckets.")
    ] = None,
    include_archived: Annotated[
        bool, Field(description="Also search memories archived after a year without use.")
    ] = False,
) -> SearchOut:
    hits = await calls.run(
        "search_memories",
        lambda s: s.search(
            query,
            limit=limit,
            types=types,
            buckets=buckets,
            include_archived=include_archived,
            count_use=True,
        ),
    )
    return search_out(query, hits)


SEARCH_MEMORIES = ToolSpec(
    search_memories,
    title="Search memories",
    description=(
        "Find particular memories by words and meaning, across every bucket and age, best match first. Use it "
        "to look up something recall_memories did not show, or to find a memory's id before updating or "
        "forgetting it."
    ),
    annotations=_hints(read_only=True, idempotent=True),
)


async def list_memories(
    calls: ServiceCalls,
    bucket: Annotated[BucketName | None, Field(description="Only memories in this bucket.")] = None,
    type: Annotated[MemoryTypeName | None, Field(description="Only memories of this type.")] = None,
    platform: Annotated[
        PlatformName | None, Field(description="Only memories first saved from here.")
    ] = None,
    status: Annotated[
        StatusName,
        Field(description="active (the default), or archived, superseded, merged or deleted ones."),
    ] = "active",
    limit: Annotated[int, Field(ge=1, le=100, description="Memories per page.")] = 20,
    offset: Annotated[int, Field(ge=0, le=1_000_000, description="How many to skip (from next_offset).")] = 0,
) -> MemoryList:
    memories = await calls.run(
        "list_memories",
        lambda s: s.list(
            bucket=bucket, type=type, platform=platform, status=status, limit=limit, offset=offset
        ),
    )
    more = len(memories) == limit
    return MemoryList(
        memories=[memory_out(m) for m in memories],
        offset=offset,
        next_offset=offset + limit if more else None,
    )


LIST_MEMORIES = ToolSpec(
    list_memories,
    title="List memories",
    description=(
        "List stored memories, pinned first and then most recently changed, filtered by bucket, type, the "
        "platform that saved them, or status, a page at a time. Use it when the person asks what you remember "
        "about them; use search_memories to find something in particular."
    ),
    annotations=_hints(read_only=True, idempotent=True),
)


async def update_memory(
    calls: ServiceCalls,
    id: MemoryId,
    ctx: Context[Any, Any],
    content: Annotated[Content | None, Field(description="The corrected text, if it changes.")] = None,
    type: Annotated[MemoryTypeName | None, Field(description="The corrected type, if it changes.")] = None,
    pinned: Annotated[bool | None, Field(description="Pin or unpin it, if that changes.")] = None,
) -> MemoryOut:
    editor = _caller_platform(ctx)
    memory = await calls.run(
        "update_memory",
        lambda s: s.update(id, content=content, type=type, pinned=pinned, platform=editor),
    )
    return memory_out(memory)


UPDATE_MEMORY = ToolSpec(
    update_memory,
    title="Update memory",
    description=(
        "Correct a stored memory when the person says it is wrong or has changed: give its id and the new "
        "content, type or pinned flag. A new preference on the same subject does not need this: saving it "
        "replaces the old one by itself."
    ),
    annotations=_hints(destructive=True, idempotent=True),
)


async def forget_memory(calls: ServiceCalls, id: MemoryId) -> MemoryOut:
    return memory_out(await calls.run("forget_memory", lambda s: s.forget(id)))


FORGET_MEMORY = ToolSpec(
    forget_memory,
    title="Forget memory",
    description=(
        "Forget a memory that the person asks you to forget or that is wrong. It leaves recall and search at "
        "once; the person can still restore it from the Tallei app."
    ),
    annotations=_hints(destructive=True, idempotent=True),
)


async def pin_memory(calls: ServiceCalls, id: MemoryId) -> MemoryOut:
    return memory_out(await calls.run("pin_memory", lambda s: s.pin(id)))


PIN_MEMORY = ToolSpec(
    pin_memory,
    title="Pin memory",
    description=(
        "Pin a memory so that it is always recalled first, when the person says it is important or always "
        "applies."
    ),
    annotations=_hints(idempotent=True),
)


async def unpin_memory(calls: ServiceCalls, id: MemoryId) -> MemoryOut:
    return memory_out(await calls.run("unpin_memory", lambda s: s.unpin(id)))


UNPIN_MEMORY = ToolSpec(
    unpin_memory,
    title="Unpin memory",
    description="Unpin a memory when the person says it no longer needs to come first.",
    annotations=_hints(idempotent=True),
)


async def list_conflicts(
    calls: ServiceCalls,
    include_resolved: Annotated[bool, Field(description="Also list conflicts already settled.")] = False,
) -> ConflictList:
    found = await calls.run("list_conflicts", lambda s: s.conflicts(include_resolved=include_resolved))
    return ConflictList(conflicts=[conflict_out(c) for c in found])


LIST_CONFLICTS = ToolSpec(
    list_conflicts,
    title="List conflicts",
    description=(
        "List open conflicts: pairs of memories, saved from different assistants, that disagree (say 'prefers "
        "tabs' from one and 'prefers spaces' from another). Call it when recall_memories reports a conflict, "
        "ask the person which is right, then settle it with resolve_conflict."
    ),
    annotations=_hints(read_only=True, idempotent=True),
)


async def resolve_conflict(
    calls: ServiceCalls,
    conflict_id: ConflictId,
    resolution: Annotated[
        ResolutionName,
        Field(description="keep_first, keep_second, keep_both, or replace (with content)."),
    ],
    content: Annotated[
        Content | None, Field(description="With replace only: the one memory that takes both places.")
    ] = None,
) -> ConflictOut:
    settled = await calls.run(
        "resolve_conflict", lambda s: s.resolve_conflict(conflict_id, resolution, content=content)
    )
    return conflict_out(settled)


RESOLVE_CONFLICT = ToolSpec(
    resolve_conflict,
    title="Resolve conflict",
    description=(
        "Settle a conflict once the person has said which version is right. keep_first or keep_second keeps "
        "that memory and retires the other; keep_both keeps both because both are true; replace retires both "
        "and saves content in their place (give content only with replace)."
    ),
    annotations=_hints(destructive=True),
)


async def memory_status(calls: ServiceCalls) -> StatusOut:
    return status_out(await calls.run("memory_status", lambda s: s.status()))


MEMORY_STATUS = ToolSpec(
    memory_status,
    title="Memory status",
    description=(
        "How many memories are stored per bucket, how much background work is pending, how many conflicts "
        "are open, and whether semantic search is on. Use it when the person asks about Tallei itself or a "
        "result looks incomplete."
    ),
    annotations=_hints(read_only=True, idempotent=True),
)


#: Every tool, in the order clients list them.
TOOLS: tuple[ToolSpec, ...] = (
    SAVE_MEMORY,
    RECALL_MEMORIES,
    SEARCH_MEMORIES,
    LIST_MEMORIES,
    UPDATE_MEMORY,
    FORGET_MEMORY,
    PIN_MEMORY,
    UNPIN_MEMORY,
    LIST_CONFLICTS,
    RESOLVE_CONFLICT,
    MEMORY_STATUS,
)
