"""Domain operations on cross-platform conflicts: open, list, resolve."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw

from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.models import Conflict, ConflictResolution, EventKind, MemoryStatus
from tallei_desktop.core.recall import OpenConflict
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.database import bump_generation
from tallei_desktop.core.store.events import record_event
from tallei_desktop.core.store.memories import insert_memory

__all__ = [
    "list_conflicts",
    "open_conflict",
    "open_conflict_count",
    "open_conflicts_of",
    "open_conflicts_per_memory",
    "resolve_conflict",
    "resolve_conflicts_of",
]


def open_conflict(
    conn: apsw.Connection, a_rowid: int, b_rowid: int, now: float, *, platform: str | None = None
) -> str:
    """Flag the older memory ``a_rowid`` and the newer ``b_rowid`` as disagreeing; returns the conflict
    id (the existing one if this pair was flagged before, without a new event)."""
    found = conn.execute(
        "SELECT id FROM conflicts WHERE a_rowid = ? AND b_rowid = ?", (a_rowid, b_rowid)
    ).fetchone()
    if found:
        return str(found[0])
    cid = q.new_id("c")
    conn.execute(
        "INSERT INTO conflicts (id, a_rowid, b_rowid, status, created_at) VALUES (?, ?, ?, 'open', ?)",
        (cid, a_rowid, b_rowid, now),
    )
    found_ids: list[Any] = conn.execute(
        "SELECT rowid, id FROM memories WHERE rowid IN (?, ?)", (a_rowid, b_rowid)
    ).fetchall()
    ids = {int(r): str(i) for r, i in found_ids}
    bump_generation(conn)
    record_event(
        conn,
        EventKind.CONFLICT_OPENED,
        at=now,
        memory_id=ids[b_rowid],
        conflict_id=cid,
        platform=platform,
        detail=ids[a_rowid],
    )
    return cid


def list_conflicts(conn: apsw.Connection, *, include_resolved: bool) -> list[Conflict]:
    """Conflicts, newest first; open ones only unless ``include_resolved``."""
    where = "" if include_resolved else "WHERE status = 'open'"
    rows = list(conn.execute(f"SELECT {q.CONFLICT_COLUMNS} FROM conflicts {where} ORDER BY created_at DESC"))
    return [q.conflict_from(conn, values) for values in rows]


def open_conflict_count(conn: apsw.Connection) -> int:
    return int(q.scalar(conn, "SELECT count(*) FROM conflicts WHERE status = 'open'"))


def open_conflicts_per_memory(conn: apsw.Connection) -> dict[int, int]:
    """rowid -> how many open conflicts the memory takes part in (memories in none are left out)."""
    # Counted here rather than by GROUP BY over a UNION: one pass over the open pairs, about half the
    # time (measured: 0.19 ms against 0.33 ms with 297 open conflicts).
    counts: dict[int, int] = {}
    for a, b in conn.execute("SELECT a_rowid, b_rowid FROM conflicts WHERE status = 'open'"):
        counts[a] = counts.get(a, 0) + 1
        counts[b] = counts.get(b, 0) + 1
    return counts


def _get(conn: apsw.Connection, conflict_id: str) -> tuple[Conflict, int, int]:
    found = conn.execute(
        f"SELECT {q.CONFLICT_COLUMNS} FROM conflicts WHERE id = ?", (conflict_id,)
    ).fetchone()
    if found is None:
        raise NotFound(f"No conflict has the id {conflict_id}.")
    return q.conflict_from(conn, found), int(found[1]), int(found[2])


def resolve_conflict(
    conn: apsw.Connection, conflict_id: str, how: ConflictResolution, now: float, *, content: str | None
) -> Conflict:
    """Settle an open conflict: keep one side, keep both as they are (neither is pinned: the person
    said both stay, not that both lead every recall), or replace both with ``content`` (required
    for, and only for, REPLACE)."""
    conflict, a_rowid, b_rowid = _get(conn, conflict_id)
    if conflict.status != "open":
        raise InvalidInput(f"Conflict {conflict_id} is already resolved.")
    a, b = conflict.memory_a, conflict.memory_b
    drop: list[tuple[int, str]] = []
    replaced_by = ""
    if how is ConflictResolution.KEEP_FIRST:
        drop = [(b_rowid, b.id)]
        replaced_by = a.id
    elif how is ConflictResolution.KEEP_SECOND:
        drop = [(a_rowid, a.id)]
        replaced_by = b.id
    elif how is ConflictResolution.REPLACE:
        if content is None:
            raise InvalidInput("The 'replace' resolution needs the new content.")
        new = insert_memory(
            conn,
            content=content,
            type=a.type,
            platform="tallei",
            now=now,
            occurred_at=now,
            pinned=True,
            processed=True,
            reference_count=max(a.reference_count, b.reference_count),
        )
        drop = [(a_rowid, a.id), (b_rowid, b.id)]
        replaced_by = new.id
    for rowid, mid in drop:
        q.set_status(conn, rowid, MemoryStatus.SUPERSEDED, now)
        # The retired side points at what replaced it, so its history leads there (and back).
        conn.execute("UPDATE memories SET superseded_by = ? WHERE rowid = ?", (replaced_by, rowid))
        q.drop_vector(conn, rowid)
        record_event(
            conn,
            EventKind.MEMORY_SUPERSEDED,
            at=now,
            memory_id=mid,
            conflict_id=conflict_id,
            detail=replaced_by,
        )
    conn.execute(
        "UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = ? WHERE id = ?",
        (now, str(how), conflict_id),
    )
    bump_generation(conn)
    record_event(conn, EventKind.CONFLICT_RESOLVED, at=now, conflict_id=conflict_id, detail=str(how))
    return _get(conn, conflict_id)[0]


def resolve_conflicts_of(conn: apsw.Connection, rowid: int, now: float, *, resolution: str) -> list[str]:
    """Close every open conflict the memory ``rowid`` takes part in; returns their ids."""
    closed = [
        str(cid)
        for (cid,) in conn.execute(
            "UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = ? "
            "WHERE status = 'open' AND (a_rowid = ? OR b_rowid = ?) RETURNING id",
            (now, resolution, rowid, rowid),
        ).fetchall()
    ]
    for cid in closed:
        record_event(conn, EventKind.CONFLICT_RESOLVED, at=now, conflict_id=cid, detail=resolution)
    if closed:
        bump_generation(conn)
    return closed


def open_conflicts_of(conn: apsw.Connection, rowids: Sequence[int]) -> dict[str, list[OpenConflict]]:
    """memory id -> the open conflicts it takes part in, newest first, with the other side's id and
    platform."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    sql = (
        "SELECT c.id, a.id, a.platform, b.id, b.platform FROM conflicts c "
        "JOIN memories a ON a.rowid = c.a_rowid JOIN memories b ON b.rowid = c.b_rowid "
        f"WHERE c.status = 'open' AND (c.a_rowid IN ({marks}) OR c.b_rowid IN ({marks})) "
        "ORDER BY c.created_at DESC, c.rowid DESC"
    )
    out: dict[str, list[OpenConflict]] = {}
    for cid, a_id, a_pf, b_id, b_pf in conn.execute(sql, (*rowids, *rowids)):
        out.setdefault(str(a_id), []).append(OpenConflict(str(cid), str(b_id), str(b_pf)))
        out.setdefault(str(b_id), []).append(OpenConflict(str(cid), str(a_id), str(a_pf)))
    return out
