"""What the windows need from the core, in one place.

Every method blocks (SQLite, the model), so the GUI calls them through :mod:`.ops`, never on the Qt
thread. Listing, history and usage are the core's paged queries; following other processes uses the
core's change feed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tallei_desktop.core import (
    Bucket,
    Conflict,
    ConflictResolution,
    EventKind,
    InvalidInput,
    Memory,
    MemoryFilter,
    MemoryHistory,
    MemoryStatus,
    MemoryType,
    NotFound,
    PlatformUsage,
    RecallResult,
    SortKey,
    bucket_for,
)

if TYPE_CHECKING:
    from tallei_desktop.core import MemoryService

__all__ = ["Backend", "Changes", "ListQuery", "Page", "View", "view_holding", "view_of", "view_types"]

#: The core's largest page; longer reads are split.
_MAX_PAGE = 1_000
#: Search results a view shows: the best matches, not every memory sharing a word.
_SEARCH_LIMIT = 100
_FEED_BATCH = 1_000


class View(enum.StrEnum):
    """The memory views of the main window."""

    PREFERENCES = "preferences"
    LONG_TERM = "long_term"
    RECENT = "recent"
    ARCHIVED = "archived"
    FORGOTTEN = "forgotten"
    REPLACED = "replaced"

    @property
    def label(self) -> str:
        return _TITLES[self]


_TITLES = {
    View.PREFERENCES: "Preferences",
    View.LONG_TERM: "Long-term",
    View.RECENT: "Recent",
    View.ARCHIVED: "Archived",
    View.FORGOTTEN: "Forgotten",
    View.REPLACED: "Replaced",
}

# (bucket, status) that each view lists.
_SCOPE: dict[View, tuple[Bucket | None, MemoryStatus]] = {
    View.PREFERENCES: (Bucket.PREFERENCE, MemoryStatus.ACTIVE),
    View.LONG_TERM: (Bucket.LONG_TERM, MemoryStatus.ACTIVE),
    View.RECENT: (Bucket.SHORT_TERM, MemoryStatus.ACTIVE),
    View.ARCHIVED: (None, MemoryStatus.ARCHIVED),
    View.FORGOTTEN: (None, MemoryStatus.DELETED),
    View.REPLACED: (None, MemoryStatus.SUPERSEDED),
}


#: Events and notes that assistants use often graduate to long-term and keep their type.
_ALSO_HELD = {Bucket.LONG_TERM: Bucket.SHORT_TERM}


def view_types(view: View) -> list[MemoryType]:
    """The types a memory on ``view`` can have: its bucket's (Long-term also holds graduated events
    and notes), or all for Archived, Forgotten and Replaced."""
    bucket, _status = _SCOPE[view]
    if bucket is None:
        return list(MemoryType)
    held = {bucket, _ALSO_HELD.get(bucket, bucket)}
    return [t for t in MemoryType if bucket_for(t) in held]


def view_of(bucket: Bucket) -> View:
    """The view that lists the active memories of ``bucket``."""
    return next(v for v, (b, s) in _SCOPE.items() if b is bucket and s is MemoryStatus.ACTIVE)


def view_holding(memory: Memory) -> View | None:
    """The view that lists ``memory`` as it is now; None for a duplicate folded into another."""
    if memory.status is MemoryStatus.ACTIVE:
        return view_of(memory.bucket)
    return next((v for v, (_b, s) in _SCOPE.items() if s is memory.status), None)


@dataclass(frozen=True, slots=True)
class ListQuery:
    view: View
    types: frozenset[MemoryType] = frozenset()
    platforms: frozenset[str] = frozenset()
    text: str = ""  # a search: best match first unless a column sort is chosen
    sort: SortKey | None = None  # None: pinned first, then the view's natural order
    descending: bool = True

    def to_filter(self) -> MemoryFilter:
        bucket, status = _SCOPE[self.view]
        return MemoryFilter(
            buckets=frozenset({bucket}) if bucket else frozenset(),
            types=self.types,
            platforms=self.platforms,
            statuses=frozenset({status}),
        )


#: Each view's natural order after the pinned memories: what changed last, and for Recent what
#: happened last, so an old event saved today sits with its own time.
_NATURAL: dict[View, SortKey] = {
    View.PREFERENCES: SortKey.UPDATED,
    View.LONG_TERM: SortKey.UPDATED,
    View.RECENT: SortKey.OCCURRED,
    View.ARCHIVED: SortKey.UPDATED,
    View.FORGOTTEN: SortKey.UPDATED,
    View.REPLACED: SortKey.UPDATED,  # when it was replaced (or last changed before that)
}


@dataclass(frozen=True, slots=True)
class Page:
    memories: tuple[Memory, ...]
    total: int
    offset: int


@dataclass(frozen=True, slots=True)
class Changes:
    """What a look at the change feed found."""

    seq: int  # pass back next time
    changed: bool  # anything committed since the last look (views reload)
    opened: tuple[str, ...]  # conflicts flagged since the last look, oldest first
    conflicts: tuple[Conflict, ...] | None  # the open conflicts now; None when nothing changed


def _search_order(m: Memory, key: SortKey) -> object:
    values: dict[SortKey, object] = {
        SortKey.UPDATED: m.updated_at,
        SortKey.CREATED: m.created_at,
        SortKey.OCCURRED: m.occurred_at,
        SortKey.LAST_USED: m.last_referenced_at.timestamp() if m.last_referenced_at else 0.0,
        SortKey.REFERENCES: m.reference_count,
        SortKey.CONTENT: m.content.casefold(),
        SortKey.TYPE: str(m.type),
        SortKey.PLATFORM: m.platform,
        SortKey.PINNED: m.pinned,
    }
    return values[key]


class Backend:
    """The GUI's door to one open :class:`MemoryService`; thread-safe, blocking."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    # -- following the store -------------------------------------------------------------------

    def follow(self, seq: int | None) -> Changes:
        """Look at the change feed after ``seq`` (``None``: start following from now)."""
        service = self.service
        if seq is None:
            service.store_changed()  # from here on, say when anything commits
            return Changes(service.last_change_seq(), False, (), tuple(service.conflicts()))
        if not service.store_changed():
            return Changes(seq, False, (), None)
        opened: list[str] = []
        while True:
            batch = service.changes_since(seq, limit=_FEED_BATCH)
            seq = batch.last_seq
            opened += [
                e.conflict_id for e in batch.events if e.kind is EventKind.CONFLICT_OPENED and e.conflict_id
            ]
            if batch.reload or len(batch.events) < _FEED_BATCH:
                break
        return Changes(seq, True, tuple(opened), tuple(service.conflicts()))

    # -- listing ---------------------------------------------------------------------------------

    def page(self, query: ListQuery, *, offset: int = 0, limit: int = 200) -> Page:
        """One page of the memories ``query`` selects, with the total across all pages."""
        if query.text.strip():
            return self._search_page(query, offset, limit)
        if query.sort is not None:
            found, total = self._read(query.to_filter(), query.sort, query.descending, offset, limit)
            return Page(tuple(found), total, offset)
        # The default order: pinned memories first, then the rest, each part in the natural order.
        sort = _NATURAL[query.view]
        base = query.to_filter()
        pinned, n_pinned = self._read(replace(base, pinned=True), sort, True, offset, limit)
        rest_filter = replace(base, pinned=False)
        if len(pinned) < limit:
            rest, n_rest = self._read(rest_filter, sort, True, max(0, offset - n_pinned), limit - len(pinned))
        else:
            rest, n_rest = [], self.service.count(rest_filter)
        return Page((*pinned, *rest), n_pinned + n_rest, offset)

    def _read(
        self, f: MemoryFilter, sort: SortKey, descending: bool, offset: int, limit: int
    ) -> tuple[list[Memory], int]:
        """Up to ``limit`` memories from ``offset`` in one order, and how many match in all."""
        found: list[Memory] = []
        total = 0
        while True:
            want = min(_MAX_PAGE, limit - len(found))
            got = self.service.list_page(
                f, sort=sort, descending=descending, limit=want, offset=offset + len(found)
            )
            found.extend(got.memories)
            total = got.total
            if len(found) >= limit or len(got.memories) < want:
                break
        return found, total

    def _search_page(self, query: ListQuery, offset: int, limit: int) -> Page:
        # The engine's hybrid search (words and meaning), narrowed to this view's filter.
        bucket, status = _SCOPE[query.view]
        hits = self.service.search(
            query.text, limit=_SEARCH_LIMIT, include_archived=status is MemoryStatus.ARCHIVED
        )
        rows = [
            h.memory
            for h in hits
            if h.memory.status is status
            and (bucket is None or h.memory.bucket is bucket)
            and (not query.types or h.memory.type in query.types)
            and (not query.platforms or query.platforms.intersection(h.memory.platforms))
        ]
        # Typed as it is searched, the last word is often unfinished ("coffe"): memories holding
        # every word, each also as a prefix, follow the ranked hits.
        seen = {m.id for m in rows}
        try:
            by_words, _ = self._read(
                replace(query.to_filter(), text=query.text), _NATURAL[query.view], True, 0, _SEARCH_LIMIT
            )
        except InvalidInput:  # more words than a text filter takes: the ranked hits say enough
            by_words = []
        rows += [m for m in by_words if m.id not in seen]
        if query.sort is not None:
            key = query.sort
            rows.sort(key=lambda m: _search_order(m, key), reverse=query.descending)  # type: ignore[arg-type,return-value]
        return Page(tuple(rows[offset : offset + limit]), len(rows), offset)

    def platforms(self) -> list[str]:
        """Every platform that saved, confirmed or edited a memory, sorted by name."""
        return sorted(u.platform for u in self.service.platform_usage())

    def platform_usage(self) -> list[PlatformUsage]:
        return self.service.platform_usage()

    def assistants(self) -> tuple[list[PlatformUsage], frozenset[str]]:
        """Every platform's usage, and which platforms are paused (some may have no usage yet)."""
        return self.service.platform_usage(), self.service.paused_platforms()

    def set_paused(self, platform: str, paused: bool) -> None:
        self.service.set_platform_paused(platform, paused)

    def details(self, memory_id: str) -> MemoryHistory:
        return self.service.history(memory_id)

    # -- conflicts and recall ----------------------------------------------------------------------

    def open_conflicts(self) -> list[Conflict]:
        return self.service.conflicts()

    def in_open_conflicts(self) -> frozenset[str]:
        """The ids of every memory that is one side of an open conflict."""
        return frozenset(m.id for c in self.service.conflicts() for m in (c.memory_a, c.memory_b))

    def memory_or_none(self, memory_id: str) -> Memory | None:
        """The memory as it is now, or None once it was erased."""
        try:
            return self.service.get(memory_id)
        except NotFound:
            return None

    def resolve(
        self, conflict_id: str, resolution: ConflictResolution, content: str | None = None
    ) -> Conflict:
        return self.service.resolve_conflict(conflict_id, resolution, content=content)

    def reopen(self, conflict_id: str) -> Conflict:
        """Undo a conflict's outcome: what it retired comes back and the conflict is open again."""
        return self.service.reopen_conflict(conflict_id)

    def recall(self, query: str) -> RecallResult:
        return self.service.recall(query)
