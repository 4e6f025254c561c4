"""SQL for the table view: filtered, sorted, counted and paged listings, a memory's history, and
per-platform usage. Functions take a connection from ``Database.read()``.

Paging works two ways over the same order (the sort value, then rowid as a stable tie-break):
by offset, and by keyset, where the cursor carries the last row's sort value and rowid, so the next
page starts right after it even when rows were added or removed in between.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import apsw

from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.models import (
    APP_PLATFORM,
    Conflict,
    Memory,
    MemoryFilter,
    MemoryHistory,
    MemoryStatus,
    PlatformUsage,
    SortKey,
)
from tallei_desktop.core.store import queries as q

__all__ = [
    "MAX_TEXT_WORDS",
    "Cursor",
    "count",
    "decode_cursor",
    "encode_cursor",
    "history",
    "list_page",
    "page_sql",
    "platform_usage",
    "text_match",
]

#: Most words a text filter may hold (each one narrows; more than this is not a filter a person types).
MAX_TEXT_WORDS = 64
_CURSOR_VERSION = 1

# The column (or expression) each sort key orders by. CONTENT folds ASCII case, so "apple" and
# "Banana" sort as a person expects; LAST_USED is NULL for a memory never recalled, which SQLite
# orders before every time ascending and after every time descending: never used counts as oldest.
_SORT_SQL: dict[SortKey, str] = {
    SortKey.UPDATED: "m.updated_at",
    SortKey.CREATED: "m.created_at",
    SortKey.OCCURRED: "m.occurred_at",
    SortKey.LAST_USED: "m.last_referenced_at",
    SortKey.REFERENCES: "m.reference_count",
    SortKey.CONTENT: "m.content COLLATE NOCASE",
    SortKey.TYPE: "m.type",
    SortKey.PLATFORM: "m.platform",
    SortKey.PINNED: "m.pinned",
}
_RAW_SQL: dict[SortKey, str] = {**_SORT_SQL, SortKey.CONTENT: "m.content"}
_FLOAT_KEYS = frozenset({SortKey.UPDATED, SortKey.CREATED, SortKey.OCCURRED, SortKey.LAST_USED})
_INT_KEYS = frozenset({SortKey.REFERENCES, SortKey.PINNED})
#: Orders an index serves ("listing order index" migration); the others read the matching rows and sort them.
_INDEXED_KEYS = frozenset({SortKey.UPDATED})

SortValue = float | int | str | None


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a keyset page ends: the order it belongs to, and its last row's sort value and rowid."""

    sort: SortKey
    descending: bool
    value: SortValue
    rowid: int


def encode_cursor(cursor: Cursor) -> str:
    """An opaque, URL-safe text for ``cursor``."""
    raw = json.dumps(
        [_CURSOR_VERSION, str(cursor.sort), cursor.descending, cursor.value, cursor.rowid],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


_BAD_CURSOR = "The page cursor is not one this listing gave out; start again from the first page."


def decode_cursor(text: str, sort: SortKey, descending: bool) -> Cursor:
    """The cursor in ``text``; :class:`InvalidInput` when it is malformed or from another order."""
    if not isinstance(text, str) or not text or len(text) > 64 * 1024:
        raise InvalidInput(_BAD_CURSOR)
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        version, key, desc, value, rowid = json.loads(raw.decode("utf-8"))
        parsed = Cursor(SortKey(key), desc, value, rowid)
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, RecursionError):
        raise InvalidInput(_BAD_CURSOR) from None
    if version != _CURSOR_VERSION or not _well_typed(parsed):
        raise InvalidInput(_BAD_CURSOR)
    if parsed.sort is not sort or parsed.descending != descending:
        order = "descending" if parsed.descending else "ascending"
        raise InvalidInput(
            f"The page cursor belongs to the {order} '{parsed.sort}' order, not this one; "
            "start again from the first page."
        )
    return parsed


def _well_typed(c: Cursor) -> bool:
    if not isinstance(c.descending, bool) or type(c.rowid) is not int:
        return False
    value = c.value
    if c.sort in _FLOAT_KEYS:
        if value is None:
            return c.sort is SortKey.LAST_USED
        return type(value) in (int, float) and value == value and abs(value) < 1e18  # type: ignore[arg-type]
    if c.sort in _INT_KEYS:
        return type(value) is int
    return type(value) is str


_WORD = re.compile(r"\w+", re.UNICODE)


def text_match(text: str) -> str | None:
    """An FTS5 MATCH expression requiring every word of ``text``, each also as a prefix.

    Every word is quoted, so nothing the person types is read as FTS syntax. None when ``text``
    holds no words.
    """
    words = list(dict.fromkeys(_WORD.findall(text.casefold())))
    if len(words) > MAX_TEXT_WORDS:
        raise InvalidInput(f"The text filter has {len(words)} words; use at most {MAX_TEXT_WORDS}.")
    if not words:
        return None
    return " AND ".join('"' + w.replace('"', '""') + '"*' for w in words)


def _in(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({','.join('?' * len(values))})"


def _where(f: MemoryFilter, *, ordered_by_index: bool = False) -> tuple[list[str], list[object]]:
    """SQL conditions over alias ``m`` for an already validated filter.

    ``ordered_by_index`` writes the status test as ``+m.status``: without table statistics SQLite
    takes any equality on an indexed column to be selective and would read every active memory
    through a status index and sort them, rather than walk ``memories_updated`` and stop at a page.
    """
    where: list[str] = []
    params: list[object] = []
    for column, values in (
        ("+m.status" if ordered_by_index else "m.status", f.statuses),
        ("m.bucket", f.buckets),
        ("m.type", f.types),
    ):
        if values:
            ordered = sorted(str(x) for x in values)
            where.append(_in(column, ordered))
            params.extend(ordered)
    if f.platforms:
        names = sorted(f.platforms)
        where.append(
            f"({_in('m.platform', names)} OR m.rowid IN "
            f"(SELECT p.memory_rowid FROM provenance p WHERE {_in('p.platform', names)}))"
        )
        params.extend(names)
        params.extend(names)
    if f.pinned is not None:
        where.append("m.pinned = ?")
        params.append(int(f.pinned))
    match = text_match(f.text) if f.text else None
    if match is not None:
        where.append("m.rowid IN (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?)")
        params.append(match)
    return where, params


def _after(cursor: Cursor) -> tuple[str, list[object]]:
    """The condition for rows strictly after ``cursor`` in its order."""
    col = _SORT_SQL[cursor.sort]
    op = "<" if cursor.descending else ">"
    if cursor.sort is not SortKey.LAST_USED:
        return f"({col}, m.rowid) {op} (?, ?)", [cursor.value, cursor.rowid]
    # The only nullable sort column: NULLs come first ascending and last descending.
    if cursor.value is None:
        if cursor.descending:
            return f"({col} IS NULL AND m.rowid < ?)", [cursor.rowid]
        return f"(({col} IS NULL AND m.rowid > ?) OR {col} IS NOT NULL)", [cursor.rowid]
    tail = f" OR {col} IS NULL" if cursor.descending else ""
    return f"(({col}, m.rowid) {op} (?, ?){tail})", [cursor.value, cursor.rowid]


def count(conn: apsw.Connection, f: MemoryFilter) -> int:
    """How many memories match ``f``."""
    where, params = _where(f)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    return int(q.scalar(conn, f"SELECT count(*) FROM memories m {clause}", params))


def page_sql(
    f: MemoryFilter, *, sort: SortKey, descending: bool, after: Cursor | None
) -> tuple[str, list[object]]:
    """The query for a page and its parameters, but for the last two: LIMIT and OFFSET.

    It selects :data:`queries.MEMORY_COLUMNS` and then the raw sort value.
    """
    where, params = _where(f, ordered_by_index=sort in _INDEXED_KEYS)
    if after is not None:
        condition, extra = _after(after)
        where.append(condition)
        params.extend(extra)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    direction = "DESC" if descending else "ASC"
    sql = (
        f"SELECT {q.MEMORY_COLUMNS}, {_RAW_SQL[sort]} FROM memories m {clause} "
        f"ORDER BY {_SORT_SQL[sort]} {direction}, m.rowid {direction} LIMIT ? OFFSET ?"
    )
    return sql, params


def list_page(
    conn: apsw.Connection,
    f: MemoryFilter,
    *,
    sort: SortKey,
    descending: bool,
    limit: int,
    offset: int,
    after: Cursor | None,
) -> tuple[list[Memory], Cursor | None]:
    """One page of memories matching ``f`` (with provenance), and the cursor after it (None at the end)."""
    sql, params = page_sql(f, sort=sort, descending=descending, after=after)
    fetched = list(conn.execute(sql, (*params, limit + 1, offset)))
    more = len(fetched) > limit
    fetched = fetched[:limit]
    rows = q.load_provenance(conn, (q.row_from(values[:-1]) for values in fetched))
    cursor = None
    if more and fetched:
        last = fetched[-1]
        cursor = Cursor(sort, descending, _sort_value(sort, last[-1]), int(last[0]))
    return [row.memory for row in rows], cursor


def _sort_value(sort: SortKey, value: object) -> SortValue:
    if value is None:
        return None
    if sort in _FLOAT_KEYS:
        return float(value)  # type: ignore[arg-type]
    if sort in _INT_KEYS:
        return int(value)  # type: ignore[call-overload, no-any-return]
    return str(value)


def history(conn: apsw.Connection, memory_id: str) -> MemoryHistory:
    """Everything known about how ``memory_id`` came to be and what became of it."""
    found = q.fetch_by_id(conn, memory_id)
    if found is None:
        raise NotFound(f"No memory has the id {memory_id}.")
    [row] = q.load_provenance(conn, [found])
    # What it superseded, and what those superseded in turn (UNION drops repeats, so a cycle ends).
    replaced = _memories(
        conn,
        """
        WITH RECURSIVE chain (id) AS (
            SELECT ?
            UNION
            SELECT m.id FROM memories m JOIN chain ON m.superseded_by = chain.id
            WHERE m.status = 'superseded'
        )
        SELECT m.rowid FROM memories m WHERE m.id IN (SELECT id FROM chain) AND m.id != ?
        ORDER BY m.created_at DESC, m.rowid DESC
        """,
        (row.memory.id, row.memory.id),
    )
    merged = _memories(
        conn,
        "SELECT m.rowid FROM memories m WHERE m.superseded_by = ? AND m.status = 'merged' "
        "ORDER BY m.created_at DESC, m.rowid DESC",
        (row.memory.id,),
    )
    return MemoryHistory(
        memory=row.memory,
        replaced=replaced,
        merged=merged,
        replaced_by=_successors(conn, row.memory),
        conflicts=_conflicts_of(conn, row.rowid),
    )


def _memories(conn: apsw.Connection, sql: str, params: Sequence[object]) -> tuple[Memory, ...]:
    rowids = [int(r) for (r,) in conn.execute(sql, tuple(params))]
    full = q.fetch_full(conn, rowids)
    return tuple(full[r].memory for r in rowids)


def _successors(conn: apsw.Connection, memory: Memory) -> tuple[Memory, ...]:
    """The memories that replaced ``memory``, each the successor of the one before."""
    chain: list[Memory] = []
    seen = {memory.id}
    next_id = memory.superseded_by
    while next_id is not None and next_id not in seen:
        found = q.fetch_by_id(conn, next_id)
        if found is None:  # purged since
            break
        seen.add(next_id)
        chain.append(q.load_provenance(conn, [found])[0].memory)
        next_id = found.memory.superseded_by
    return tuple(chain)


def _conflicts_of(conn: apsw.Connection, rowid: int) -> tuple[Conflict, ...]:
    found = list(
        conn.execute(
            f"SELECT {q.CONFLICT_COLUMNS} FROM conflicts WHERE a_rowid = ? OR b_rowid = ? "
            "ORDER BY created_at DESC, id",
            (rowid, rowid),
        )
    )
    return tuple(q.conflict_from(conn, values) for values in found)


def platform_usage(conn: apsw.Connection) -> list[PlatformUsage]:
    """Each platform seen in provenance (or as a memory's first platform): its active memories, as
    :class:`MemoryFilter` ``platforms`` counts them, and when it was last seen. Latest first. The
    person's own edits in Tallei are no assistant's use and are left out."""
    sql = f"""
        WITH seen (memory_rowid, platform, at) AS (
            SELECT memory_rowid, platform, at FROM provenance
            WHERE NOT (platform = '{APP_PLATFORM}' AND action = 'edited')
            UNION ALL
            SELECT rowid, platform, created_at FROM memories
        )
        SELECT s.platform,
               count(DISTINCT CASE WHEN m.status = '{MemoryStatus.ACTIVE}' THEN s.memory_rowid END),
               max(s.at)
        FROM seen s JOIN memories m ON m.rowid = s.memory_rowid
        GROUP BY s.platform
        ORDER BY max(s.at) DESC, s.platform
    """
    return [
        PlatformUsage(platform=str(name), memories=int(n), last_seen=q.to_dt(float(at)))
        for name, n, at in conn.execute(sql)
    ]
