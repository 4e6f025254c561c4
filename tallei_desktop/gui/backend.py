"""What the windows need from the core, in one place.

Every method blocks (SQLite, the model), so the GUI calls them through :mod:`.ops`, never on the Qt
thread. The listing, change-detection and usage queries go through the service's public methods;
where the core does not yet offer a paged, sorted listing this module builds one from
``MemoryService.list``/``search`` so that switching to the core's own is a change here only.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from tallei_desktop.core.models import (
    Bucket,
    Conflict,
    ConflictResolution,
    Memory,
    MemoryStatus,
    MemoryType,
    RecallResult,
)

if TYPE_CHECKING:
    from tallei_desktop.core.service import MemoryService

__all__ = ["Backend", "Details", "ListQuery", "Page", "PlatformUsage", "SortKey", "View"]

_CHUNK = 500
_SEARCH_LIMIT = 100


class View(enum.StrEnum):
    """The memory views of the main window."""

    PREFERENCES = "preferences"
    LONG_TERM = "long_term"
    RECENT = "recent"
    ARCHIVED = "archived"
    FORGOTTEN = "forgotten"

    @property
    def label(self) -> str:
        return _TITLES[self]


_TITLES = {
    View.PREFERENCES: "Preferences",
    View.LONG_TERM: "Long-term",
    View.RECENT: "Recent",
    View.ARCHIVED: "Archived",
    View.FORGOTTEN: "Forgotten",
}

# (bucket, status) that each view lists.
_SCOPE: dict[View, tuple[Bucket | None, MemoryStatus]] = {
    View.PREFERENCES: (Bucket.PREFERENCE, MemoryStatus.ACTIVE),
    View.LONG_TERM: (Bucket.LONG_TERM, MemoryStatus.ACTIVE),
    View.RECENT: (Bucket.SHORT_TERM, MemoryStatus.ACTIVE),
    View.ARCHIVED: (None, MemoryStatus.ARCHIVED),
    View.FORGOTTEN: (None, MemoryStatus.DELETED),
}


class SortKey(enum.StrEnum):
    UPDATED = "updated"
    CREATED = "created"
    LAST_USED = "last_used"
    REFERENCES = "references"
    CONTENT = "content"
    TYPE = "type"
    PLATFORM = "platform"
    PINNED = "pinned"


@dataclass(frozen=True, slots=True)
class ListQuery:
    view: View
    types: frozenset[MemoryType] = frozenset()
    platforms: frozenset[str] = frozenset()
    text: str = ""  # a search: results come best match first unless a column sort is chosen
    sort: SortKey | None = None  # None: the view's natural order (pinned, then newest)
    descending: bool = True


@dataclass(frozen=True, slots=True)
class Page:
    memories: tuple[Memory, ...]
    total: int
    offset: int


@dataclass(frozen=True, slots=True)
class PlatformUsage:
    platform: str
    memories: int
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class Details:
    memory: Memory
    replaced_by: tuple[Memory, ...] = ()
    conflicts: tuple[Conflict, ...] = field(default_factory=tuple)


def _sort_value(key: SortKey) -> Callable[[Memory], object]:
    epoch = datetime.min.replace(tzinfo=None)

    def last_used(m: Memory) -> object:
        return m.last_referenced_at.replace(tzinfo=None) if m.last_referenced_at else epoch

    return {
        SortKey.UPDATED: lambda m: m.updated_at,
        SortKey.CREATED: lambda m: m.created_at,
        SortKey.LAST_USED: last_used,
        SortKey.REFERENCES: lambda m: m.reference_count,
        SortKey.CONTENT: lambda m: m.content.casefold(),
        SortKey.TYPE: lambda m: str(m.type),
        SortKey.PLATFORM: lambda m: m.platform,
        SortKey.PINNED: lambda m: m.pinned,
    }[key]


class Backend:
    """The GUI's door to one open :class:`MemoryService`; thread-safe, blocking."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._scoped: dict[View, tuple[int, list[Memory]]] = {}

    # -- change detection ----------------------------------------------------------------------

    def change_token(self) -> int:
        """A number that changes whenever any process changes the store's content."""
        return self.service.db.generation()

    # -- listing ---------------------------------------------------------------------------------

    def _all_in(self, view: View) -> list[Memory]:
        token = self.change_token()
        with self._lock:
            cached = self._scoped.get(view)
            if cached is not None and cached[0] == token:
                return cached[1]
        bucket, status = _SCOPE[view]
        found: list[Memory] = []
        while True:
            chunk = self.service.list(
                bucket=str(bucket) if bucket else None, status=str(status), limit=_CHUNK, offset=len(found)
            )
            found.extend(chunk)
            if len(chunk) < _CHUNK:
                break
        with self._lock:
            self._scoped[view] = (token, found)
        return found

    def _matching(self, query: ListQuery) -> list[Memory]:
        bucket, status = _SCOPE[query.view]
        if query.text.strip():
            hits = self.service.search(
                query.text, limit=_SEARCH_LIMIT, include_archived=status is MemoryStatus.ARCHIVED
            )
            candidates: Iterable[Memory] = (
                h.memory
                for h in hits
                if h.memory.status is status and (bucket is None or h.memory.bucket is bucket)
            )
        else:
            candidates = self._all_in(query.view)
        return [
            m
            for m in candidates
            if (not query.types or m.type in query.types)
            and (not query.platforms or query.platforms.intersection(m.platforms))
        ]

    def page(self, query: ListQuery, *, offset: int = 0, limit: int = 200) -> Page:
        """One page of the memories ``query`` selects, with the total across all pages."""
        rows = self._matching(query)
        if query.sort is not None:
            rows = sorted(rows, key=_sort_value(query.sort), reverse=query.descending)  # type: ignore[arg-type]
        return Page(tuple(rows[offset : offset + limit]), len(rows), offset)

    def platforms(self) -> list[str]:
        """Every platform that saved or confirmed an active memory, sorted."""
        return sorted({p.platform for p in self.platform_usage()})

    def platform_usage(self) -> list[PlatformUsage]:
        """Each platform that used the store: its active memories and when it was last seen."""
        counts: dict[str, int] = {}
        seen: dict[str, datetime] = {}
        for view in (View.PREFERENCES, View.LONG_TERM, View.RECENT):
            for m in self._all_in(view):
                for name in m.platforms:
                    counts[name] = counts.get(name, 0) + 1
                for p in m.provenance:
                    if p.platform not in seen or p.at > seen[p.platform]:
                        seen[p.platform] = p.at
        return sorted(
            (PlatformUsage(name, counts[name], seen.get(name, datetime.min)) for name in counts),
            key=lambda u: u.last_seen,
            reverse=True,
        )

    def details(self, memory_id: str) -> Details:
        memory = self.service.get(memory_id)
        chain: list[Memory] = []
        nxt = memory.superseded_by
        while nxt is not None and len(chain) < 20 and nxt not in {m.id for m in chain}:
            newer = self.service.get(nxt)
            chain.append(newer)
            nxt = newer.superseded_by
        involved = tuple(
            c
            for c in self.service.conflicts(include_resolved=True)
            if memory.id in (c.memory_a.id, c.memory_b.id)
        )
        return Details(memory, tuple(chain), involved)

    # -- conflicts and recall ----------------------------------------------------------------------

    def open_conflicts(self) -> list[Conflict]:
        return self.service.conflicts()

    def resolve(
        self, conflict_id: str, resolution: ConflictResolution, content: str | None = None
    ) -> Conflict:
        return self.service.resolve_conflict(conflict_id, resolution, content=content)

    def recall(self, query: str) -> RecallResult:
        return self.service.recall(query)
