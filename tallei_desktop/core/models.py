"""Immutable values that cross the core's boundary.

Everything here is a frozen dataclass or a string enum, so the GUI and the MCP server can hold and
pass these values around without ever touching the store.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

__all__ = [
    "APP_PLATFORM",
    "CHOSEN_RESOLUTIONS",
    "MAX_CONTENT_BYTES",
    "Bucket",
    "ChangeBatch",
    "ChangeEvent",
    "Confidence",
    "Conflict",
    "ConflictResolution",
    "ConflictStatus",
    "EarlierText",
    "EventKind",
    "Memory",
    "MemoryFilter",
    "MemoryHistory",
    "MemoryPage",
    "MemoryStatus",
    "MemoryType",
    "PlatformUsage",
    "Provenance",
    "RecallItem",
    "RecallMode",
    "RecallResult",
    "SaveResult",
    "SearchHit",
    "SortKey",
    "StoreStatus",
    "bucket_for",
    "confidence_for",
]

#: Largest memory accepted, in UTF-8 bytes.
MAX_CONTENT_BYTES = 32 * 1024
#: The platform of what the person does in Tallei itself (an edit in the window, a merged conflict),
#: as opposed to what an assistant saved or changed.
APP_PLATFORM = "tallei"


class MemoryType(enum.StrEnum):
    PREFERENCE = "preference"
    FACT = "fact"
    DECISION = "decision"
    EVENT = "event"
    NOTE = "note"
    LESSON = "lesson"
    FAILURE = "failure"


class Bucket(enum.StrEnum):
    PREFERENCE = "preference"
    LONG_TERM = "long_term"
    SHORT_TERM = "short_term"


_BUCKET_OF: dict[MemoryType, Bucket] = {
    MemoryType.PREFERENCE: Bucket.PREFERENCE,
    MemoryType.FACT: Bucket.LONG_TERM,
    MemoryType.DECISION: Bucket.LONG_TERM,
    MemoryType.LESSON: Bucket.LONG_TERM,
    MemoryType.FAILURE: Bucket.LONG_TERM,
    MemoryType.EVENT: Bucket.SHORT_TERM,
    MemoryType.NOTE: Bucket.SHORT_TERM,
}


def bucket_for(memory_type: MemoryType) -> Bucket:
    """The bucket a freshly saved memory of this type lands in."""
    return _BUCKET_OF[memory_type]


class Confidence(enum.StrEnum):
    UNCONFIRMED = "UNCONFIRMED"
    MED = "MED"
    HIGH = "HIGH"


def confidence_for(reference_count: int) -> Confidence:
    """UNCONFIRMED at 1, MED at 2+, HIGH at 5+."""
    if reference_count >= 5:
        return Confidence.HIGH
    if reference_count >= 2:
        return Confidence.MED
    return Confidence.UNCONFIRMED


class MemoryStatus(enum.StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"  # untouched for a year: searchable, left out of dump-all
    SUPERSEDED = "superseded"  # replaced by a newer memory on the same subject
    MERGED = "merged"  # a near-duplicate folded into an existing memory
    DELETED = "deleted"  # forgotten by the person or an assistant (soft delete)


@dataclass(frozen=True, slots=True)
class Provenance:
    """One save (or confirmation) of a memory by one platform."""

    platform: str
    at: datetime
    action: str  # "saved" | "confirmed" | "edited"
    #: For an edit, the text the memory had before it (None for saves, confirmations, and edits
    #: recorded before the store kept the old text).
    previous: str | None = None


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    content: str
    type: MemoryType
    bucket: Bucket
    platform: str
    created_at: datetime
    updated_at: datetime
    occurred_at: datetime
    reference_count: int
    last_referenced_at: datetime | None
    pinned: bool
    status: MemoryStatus
    superseded_by: str | None
    embedded: bool
    provenance: tuple[Provenance, ...] = ()

    @property
    def confidence(self) -> Confidence:
        return confidence_for(self.reference_count)

    @property
    def platforms(self) -> tuple[str, ...]:
        """Every platform that saved, confirmed or edited this memory, first one first; the person's
        own edits in Tallei are not an assistant's and leave it out."""
        seen: dict[str, None] = {self.platform: None}
        for p in self.provenance:
            if p.platform != APP_PLATFORM or p.action != "edited":
                seen.setdefault(p.platform, None)
        return tuple(seen)


@dataclass(frozen=True, slots=True)
class SaveResult:
    id: str
    type: MemoryType
    bucket: Bucket
    confirmed_existing: bool  # True when the text was already known and got confirmed instead
    reference_count: int


class RecallMode(enum.StrEnum):
    DUMP_ALL = "dump_all"
    HYBRID = "hybrid"


@dataclass(frozen=True, slots=True)
class RecallItem:
    memory: Memory
    score: float | None  # None where the bucket is not ranked by score (dump-all, preferences)
    conflict_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RecallResult:
    query: str
    preferences: tuple[RecallItem, ...]
    long_term: tuple[RecallItem, ...]
    short_term: tuple[RecallItem, ...]
    long_term_mode: RecallMode
    semantic_search: bool
    text: str  # the context block for the host model
    open_conflicts: int = 0
    #: The best remaining matches from any bucket, in the budget the three buckets left unused.
    more: tuple[RecallItem, ...] = ()

    @property
    def items(self) -> tuple[RecallItem, ...]:
        return self.preferences + self.long_term + self.short_term + self.more


@dataclass(frozen=True, slots=True)
class SearchHit:
    memory: Memory
    score: float


class ConflictStatus(enum.StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"


class ConflictResolution(enum.StrEnum):
    KEEP_FIRST = "keep_first"  # keep memory_a, soft-delete memory_b
    KEEP_SECOND = "keep_second"  # keep memory_b, soft-delete memory_a
    KEEP_BOTH = "keep_both"
    REPLACE = "replace"  # both replaced by one edited memory
    # Not a choice: the store settles a conflict this way when one of its memories is forgotten.
    FORGOTTEN = "forgotten"


#: The resolutions a person (or an assistant) can choose.
CHOSEN_RESOLUTIONS: tuple[ConflictResolution, ...] = (
    ConflictResolution.KEEP_FIRST,
    ConflictResolution.KEEP_SECOND,
    ConflictResolution.KEEP_BOTH,
    ConflictResolution.REPLACE,
)


@dataclass(frozen=True, slots=True)
class Conflict:
    id: str
    memory_a: Memory
    memory_b: Memory
    status: ConflictStatus
    created_at: datetime
    resolved_at: datetime | None = None
    resolution: ConflictResolution | None = None


@dataclass(frozen=True, slots=True)
class StoreStatus:
    path: str
    key_source: str
    counts: dict[str, int] = field(default_factory=dict)  # per bucket, active memories
    archived: int = 0
    deleted: int = 0
    pending_embeddings: int = 0
    open_conflicts: int = 0
    semantic_search: bool = False
    model_state: str = "not loaded"
    schema_version: int = 0


class EventKind(enum.StrEnum):
    """What one entry of the change feed records (see docs/adr/0003-change-feed.md)."""

    MEMORY_SAVED = "memory_saved"
    MEMORY_CONFIRMED = "memory_confirmed"
    MEMORY_EDITED = "memory_edited"
    MEMORY_RETYPED = "memory_retyped"
    MEMORY_PINNED = "memory_pinned"
    MEMORY_UNPINNED = "memory_unpinned"
    MEMORY_FORGOTTEN = "memory_forgotten"
    MEMORY_RESTORED = "memory_restored"  # by the person, or an archived memory brought back by a recall hit
    MEMORY_PURGED = "memory_purged"
    MEMORY_SUPERSEDED = "memory_superseded"
    MEMORY_MERGED = "memory_merged"
    MEMORY_ARCHIVED = "memory_archived"
    MEMORY_PROMOTED = "memory_promoted"
    MEMORY_IMPORTED = "memory_imported"
    CONFLICT_OPENED = "conflict_opened"
    CONFLICT_RESOLVED = "conflict_resolved"
    CONFLICT_REOPENED = "conflict_reopened"  # a resolution undone: the conflict is open again
    PLATFORM_PAUSED = "platform_paused"  # the assistant named in ``platform`` may no longer use the store
    PLATFORM_RESUMED = "platform_resumed"


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """One committed change to the store, in commit order (``seq`` grows, never reused)."""

    seq: int
    kind: EventKind
    at: datetime
    memory_id: str | None
    conflict_id: str | None
    platform: str | None
    detail: str  # short, e.g. the other memory's id, the resolution, the new type


@dataclass(frozen=True, slots=True)
class ChangeBatch:
    events: tuple[ChangeEvent, ...]
    last_seq: int  # pass this back to changes_since next time
    reload: bool  # the caller fell behind pruning: reload whatever it shows


class SortKey(enum.StrEnum):
    """What a listing is ordered by; ties are broken by insertion order (rowid)."""

    UPDATED = "updated"
    CREATED = "created"
    OCCURRED = "occurred"
    LAST_USED = "last_used"  # never-recalled memories sort as the oldest
    REFERENCES = "references"
    CONTENT = "content"  # ASCII letters case-folded, the rest by code point
    TYPE = "type"
    PLATFORM = "platform"
    PINNED = "pinned"


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories a listing shows. Every field narrows; an empty set means any value.

    ``platforms`` matches any platform in :attr:`Memory.platforms` (the one that first saved it or
    any that confirmed or edited it since). ``text`` keeps memories holding every word of it, each
    word also matching as a prefix ("lisb" finds "Lisbon"); text with no words filters nothing.
    """

    buckets: frozenset[Bucket] = frozenset()
    types: frozenset[MemoryType] = frozenset()
    platforms: frozenset[str] = frozenset()
    statuses: frozenset[MemoryStatus] = frozenset({MemoryStatus.ACTIVE})
    pinned: bool | None = None
    text: str = ""


@dataclass(frozen=True, slots=True)
class MemoryPage:
    memories: tuple[Memory, ...]
    total: int  # rows matching the filter, all pages
    next_cursor: str | None  # opaque keyset cursor for the page after this one; None at the end


@dataclass(frozen=True, slots=True)
class MemoryHistory:
    memory: Memory  # with provenance
    replaced: tuple[Memory, ...]  # what it superseded, transitively, newest first
    merged: tuple[Memory, ...]  # near-duplicates folded into it
    replaced_by: tuple[Memory, ...]  # if it was superseded/merged: the newer ones, in order
    conflicts: tuple[Conflict, ...]  # open and resolved conflicts it took part in
    earlier: tuple[EarlierText, ...] = ()  # the texts edits replaced, newest first


@dataclass(frozen=True, slots=True)
class EarlierText:
    """A text a memory had until an edit replaced it; ``MemoryService.bring_back_text`` takes the id."""

    id: str
    content: str
    replaced_at: datetime
    replaced_by: str  # the platform of the edit that replaced it (APP_PLATFORM: the person in Tallei)


@dataclass(frozen=True, slots=True)
class PlatformUsage:
    platform: str
    memories: int  # active memories saved or confirmed by it
    last_seen: datetime  # its latest provenance entry
