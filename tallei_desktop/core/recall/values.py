"""The values that pass between recall's steps: budgets, gathered candidates, the plan, the result.

All frozen; rowids identify memories throughout (the store's ``memories.rowid``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tallei_desktop.core.models import Memory, RecallMode, RecallResult

__all__ = [
    "Budgets",
    "Chosen",
    "OpenConflict",
    "RecallBuild",
    "RecallCandidates",
    "RecallPlan",
    "SavedAt",
    "SearchCandidates",
]


@dataclass(frozen=True, slots=True)
class Budgets:
    """Token ceilings per bucket; their sum is the ceiling of the whole block. A memory costs its
    content's tokens plus ``line_tokens`` for the head of its line in the block: "- [fact · claude ·
    2024-05-08 · id 3f2a9c1b7d4e] " and the line's end are 51 characters, about 13 tokens (one
    platform, seen once; a confirmed memory's head or one saved by several assistants is longer), so
    the rendered block, not only its contents, stays within the total."""

    preference: int
    long_term: int
    short_term: int
    short_term_days: int
    line_tokens: int = 13

    @property
    def total(self) -> int:
        return self.preference + self.long_term + self.short_term


@dataclass(frozen=True, slots=True)
class OpenConflict:
    """An open conflict as recall shows it beside one of its memories."""

    conflict_id: str
    other_id: str
    other_platform: str


@dataclass(frozen=True, slots=True)
class SavedAt:
    """Who saved a memory and when, as the "saved alongside" rule compares neighbours."""

    platform: str
    created_at: float
    occurred_at: float

    @classmethod
    def of(cls, memory: Memory) -> SavedAt:
        return cls(memory.platform, memory.created_at.timestamp(), memory.occurred_at.timestamp())

    def next_to(self, other: SavedAt, seconds: float) -> bool:
        """Saved by the same assistant within ``seconds``, in when it was saved and in when it
        happened (callers check that the two are neighbours in saving order)."""
        return (
            self.platform == other.platform
            and abs(self.created_at - other.created_at) <= seconds
            and abs(self.occurred_at - other.occurred_at) <= seconds
        )


@dataclass(frozen=True, slots=True)
class RecallCandidates:
    """Everything recall ranks, read in one snapshot. Rowids identify memories throughout."""

    preference_order: tuple[tuple[int, int], ...]  # (rowid, tokens): pinned, references, newest
    preference_bm25: Mapping[int, float]  # raw bm25() of preference text hits
    vector: Mapping[int, float]  # cosine of the nearest non-preference vectors and of every text hit
    long_term_bm25: Mapping[int, float]  # raw bm25() over the long-term pool (extras included)
    long_term_tokens: int  # Σ tokens of active long-term memories
    extras: Mapping[int, Memory]  # matching older short-term and archived memories
    dump_order: tuple[tuple[int, int], ...] | None  # (rowid, tokens) of dump-all; None in hybrid
    pool: Mapping[int, Memory]  # hybrid candidates (empty in dump-all)
    short_term_bm25: Mapping[int, float]  # raw bm25() over the short-term window
    window: Mapping[int, tuple[int, float]]  # rowid -> (tokens, occurred_at) of short-term candidates
    open_conflicts: int
    #: rowid -> the open conflicts a memory is part of (what its warning lines cost)
    conflicts: Mapping[int, int] = field(default_factory=dict)
    #: rowid -> the share of a strong match's strength a memory saved alongside it takes (see
    #: ``rank.alongside``); used to rank, not to decide what counts as a hit
    related: Mapping[int, float] = field(default_factory=dict)
    #: rowid -> (pinned, reference count) of each active preference, and its similarity to the
    #: query: equally pinned and confirmed preferences are ordered by how well they match
    preference_rank: Mapping[int, tuple[bool, int]] = field(default_factory=dict)
    preference_similarity: Mapping[int, float] = field(default_factory=dict)
    #: the newest long-term memories, in the hybrid pool whatever they match: one not embedded yet
    #: (saved a moment ago) is taken before the ranked rest, as its meaning cannot rank it yet
    newest: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class RecallPlan:
    """Which memories each bucket returns, in order, and why."""

    mode: RecallMode
    preferences: tuple[int, ...]
    long_term: tuple[int, ...]
    short_term: tuple[int, ...]
    scores: Mapping[int, float]
    hits: tuple[int, ...]  # returned memories that matched the query: their references grow
    more: tuple[int, ...] = ()  # the best remaining matches, in the budget the buckets left unused

    @property
    def chosen(self) -> tuple[int, ...]:
        return self.preferences + self.long_term + self.short_term + self.more


@dataclass(frozen=True, slots=True)
class Chosen:
    """The full memories (with provenance) of a plan, and their open conflicts by memory id."""

    memories: Mapping[int, Memory]
    conflicts: Mapping[str, Sequence[OpenConflict]]


@dataclass(frozen=True, slots=True)
class RecallBuild:
    result: RecallResult
    hit_rowids: tuple[int, ...]  # the returned memories that matched the query: their references grow


@dataclass(frozen=True, slots=True)
class SearchCandidates:
    bm25: Mapping[int, float]  # raw bm25() of the text hits
    vector: Mapping[int, float]  # cosine similarity of the nearest vectors and of the text hits
    #: every candidate (no provenance), and the memory saved right after each that asks
    memories: Mapping[int, Memory]
