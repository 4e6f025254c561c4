"""The wire shapes of the tools: argument types with their limits, and the structured results.

These models are public API (they become each tool's input and output JSON schema), so fields are
only ever added; the deliberate exceptions are the lean recall item (docs/adr/0004) and, after it,
recall's structured result as a whole: ``recall_memories`` answers with its context block alone
(docs/adr/0005-one-answer.md). Each ``*_out`` function turns a core value into its wire model.
Output schemas are published flat (:func:`flat_schema`): the same contract, without references to
resolve.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from tallei_desktop.core import (
    MAX_CONTENT_BYTES,
    Bucket,
    Confidence,
    Conflict,
    ConflictResolution,
    ConflictStatus,
    Memory,
    MemoryStatus,
    MemoryType,
    SaveResult,
    SearchHit,
    StoreStatus,
    confidence_for,
)

__all__ = [
    "MAX_QUERY_CHARS",
    "BucketName",
    "ConflictId",
    "ConflictList",
    "ConflictOut",
    "Content",
    "MemoryId",
    "MemoryList",
    "MemoryOut",
    "MemoryTypeName",
    "OccurredAt",
    "PlatformName",
    "Query",
    "ResolutionName",
    "SaveOut",
    "SearchHitOut",
    "SearchOut",
    "StatusName",
    "StatusOut",
    "conflict_out",
    "flat_schema",
    "memory_out",
    "save_out",
    "search_out",
    "status_out",
]

#: Longest query accepted; the same limit the core applies.
MAX_QUERY_CHARS = 2_000

# Spelled out rather than taken from the core enums so that input schemas carry the choices inline
# (clients resolve "$ref" in input schemas unevenly); a test keeps them equal to the core enums.
MemoryTypeName = Literal["preference", "fact", "decision", "event", "note", "lesson", "failure"]
BucketName = Literal["preference", "long_term", "short_term"]
StatusName = Literal["active", "archived", "superseded", "merged", "deleted"]
ResolutionName = Literal["keep_first", "keep_second", "keep_both", "replace"]

Content = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_CONTENT_BYTES,
        description=(
            "The memory as one self-contained statement in the third person, e.g. "
            "'Prefers tabs over spaces in Python' or 'Decided to use Postgres for the billing service'. "
            f"At most {MAX_CONTENT_BYTES:,} bytes of UTF-8."
        ),
    ),
]
Query = Annotated[
    str,
    Field(
        max_length=MAX_QUERY_CHARS,
        description="What the conversation is about, in a few words or a sentence (names, places, products).",
    ),
]
MemoryId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="The 12-character id of a memory, as returned by save_memory, recall_memories or search_memories.",
    ),
]
ConflictId = Annotated[
    str,
    Field(min_length=1, max_length=64, description="The id of a conflict, as returned by list_conflicts."),
]
#: Earliest and latest years accepted for ``occurred_at``; the store keeps POSIX seconds.
EARLIEST_YEAR = 1900
LATEST_YEAR = 2200


def _plausible_date(value: datetime) -> datetime:
    if not EARLIEST_YEAR <= value.year <= LATEST_YEAR:
        raise ValueError(f"the date must lie between the years {EARLIEST_YEAR} and {LATEST_YEAR}")
    return value


OccurredAt = Annotated[datetime, AfterValidator(_plausible_date)]
PlatformName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="The assistant platform, such as 'claude', 'chatgpt', 'gemini', 'cursor' or 'vscode'.",
    ),
]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class MemoryOut(_Out):
    """One memory as the host model sees it."""

    id: str
    content: str
    type: MemoryType
    bucket: Bucket
    platform: str = Field(description="The platform that first saved it.")
    platforms: list[str] = Field(description="Every platform that saved or confirmed it, first one first.")
    confidence: Confidence = Field(
        description="UNCONFIRMED when seen once, MED from 2, HIGH from 5 confirmations."
    )
    reference_count: int
    pinned: bool
    status: MemoryStatus
    created_at: datetime
    updated_at: datetime
    occurred_at: datetime = Field(description="When it happened (for events), otherwise when it was saved.")
    last_referenced_at: datetime | None
    superseded_by: str | None = Field(description="The id of the memory that replaced this one, if any.")


class SaveOut(_Out):
    id: str
    type: MemoryType
    bucket: Bucket
    platform: str = Field(description="The platform the save is recorded under.")
    confirmed_existing: bool = Field(
        description="True when the same memory was already stored: it was confirmed instead of copied."
    )
    reference_count: int
    confidence: Confidence


class SearchHitOut(_Out):
    memory: MemoryOut
    score: float


class SearchOut(_Out):
    query: str
    hits: list[SearchHitOut]


class MemoryList(_Out):
    memories: list[MemoryOut]
    offset: int
    next_offset: int | None = Field(description="Pass as offset to get the next page; null on the last page.")


class ConflictOut(_Out):
    id: str
    status: ConflictStatus
    first: MemoryOut = Field(description="Kept by the resolution keep_first.")
    second: MemoryOut = Field(description="Kept by the resolution keep_second.")
    created_at: datetime
    resolved_at: datetime | None
    resolution: ConflictResolution | None


class ConflictList(_Out):
    conflicts: list[ConflictOut]


class StatusOut(_Out):
    counts: dict[str, int] = Field(description="Active memories per bucket.")
    archived: int
    forgotten: int
    pending_background_work: int = Field(
        description="Saves and edits still waiting to be embedded and checked."
    )
    open_conflicts: int
    semantic_search: bool
    model_state: str
    schema_version: int


def memory_out(m: Memory) -> MemoryOut:
    return MemoryOut(
        id=m.id,
        content=m.content,
        type=m.type,
        bucket=m.bucket,
        platform=m.platform,
        platforms=list(m.platforms),
        confidence=m.confidence,
        reference_count=m.reference_count,
        pinned=m.pinned,
        status=m.status,
        created_at=m.created_at,
        updated_at=m.updated_at,
        occurred_at=m.occurred_at,
        last_referenced_at=m.last_referenced_at,
        superseded_by=m.superseded_by,
    )


def save_out(r: SaveResult, platform: str) -> SaveOut:
    return SaveOut(
        id=r.id,
        type=r.type,
        bucket=r.bucket,
        platform=platform,
        confirmed_existing=r.confirmed_existing,
        reference_count=r.reference_count,
        confidence=confidence_for(r.reference_count),
    )


def search_out(query: str, hits: list[SearchHit]) -> SearchOut:
    return SearchOut(
        query=query, hits=[SearchHitOut(memory=memory_out(h.memory), score=h.score) for h in hits]
    )


def conflict_out(c: Conflict) -> ConflictOut:
    return ConflictOut(
        id=c.id,
        status=c.status,
        first=memory_out(c.memory_a),
        second=memory_out(c.memory_b),
        created_at=c.created_at,
        resolved_at=c.resolved_at,
        resolution=c.resolution,
    )


def status_out(s: StoreStatus) -> StatusOut:
    return StatusOut(
        counts=dict(s.counts),
        archived=s.archived,
        forgotten=s.deleted,
        pending_background_work=s.pending_embeddings,
        open_conflicts=s.open_conflicts,
        semantic_search=s.semantic_search,
        model_state=s.model_state,
        schema_version=s.schema_version,
    )


#: Keywords whose value maps names to subschemas: their keys are names, never keywords.
_NAMED_SUBSCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions"})


def flat_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``#/$defs/…`` reference replaced by its definition, and without
    the ``title`` pydantic derives from each name: it accepts exactly what ``schema`` accepts.

    Clients validate every structured result against the published schema, and a reference is
    resolved again at every place it is met, for every item of every result; inline, each item costs
    about half as much to check. The schemas have no recursive definitions, so inlining ends.
    """
    defs: dict[str, Any] = schema.get("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(n) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            # Siblings of the reference (a field's description) win over the definition's own.
            merged = {**defs[ref.removeprefix("#/$defs/")], **{k: v for k, v in node.items() if k != "$ref"}}
            return inline(merged)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$defs", "title"):
                continue
            if key in _NAMED_SUBSCHEMAS and isinstance(value, dict):
                out[key] = {name: inline(sub) for name, sub in value.items()}
            else:
                out[key] = inline(value)
        return out

    flat: dict[str, Any] = inline(schema)
    return flat
