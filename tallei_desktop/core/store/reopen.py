"""Undo a conflict's resolution: the retired sides come back, a merged replacement is erased, the
conflict is open again. One write transaction, every step in the change feed."""

from __future__ import annotations

import apsw

from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.models import (
    CHOSEN_RESOLUTIONS,
    Conflict,
    ConflictResolution,
    ConflictStatus,
    EventKind,
    Memory,
    MemoryStatus,
)
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.conflicts import resolve_conflicts_of
from tallei_desktop.core.store.database import bump_generation
from tallei_desktop.core.store.events import record_event
from tallei_desktop.core.store.memories import forget_memory, purge_memory, restore_memory

__all__ = ["reopen_conflict"]


def _load(conn: apsw.Connection, conflict_id: str) -> Conflict:
    found = conn.execute(
        f"SELECT {q.CONFLICT_COLUMNS} FROM conflicts WHERE id = ?", (conflict_id,)
    ).fetchone()
    if found is None:
        raise NotFound(f"No conflict has the id {conflict_id}.")
    return q.conflict_from(conn, found)


def _pinned_by(conn: apsw.Connection, conflict_id: str) -> set[str]:
    # keep_both used to pin both sides, with a memory_pinned event carrying the conflict's id for each
    # side it pinned; stores settled that way still undo to the pins the person had.
    return {
        str(mid)
        for (mid,) in conn.execute(
            "SELECT memory_id FROM events WHERE kind = ? AND conflict_id = ? AND memory_id IS NOT NULL",
            (str(EventKind.MEMORY_PINNED), conflict_id),
        )
    }


def _used_since(conn: apsw.Connection, rowid: int, memory_id: str) -> bool:
    """Whether the merged memory took on a life of its own: an assistant confirmed it, someone
    edited it, or another memory was folded into it or replaced by it."""
    found = conn.execute(
        "SELECT 1 FROM provenance WHERE memory_rowid = ? AND action != 'saved' "
        "UNION ALL SELECT 1 FROM memories WHERE superseded_by = ? LIMIT 1",
        (rowid, memory_id),
    ).fetchone()
    return found is not None


def reopen_conflict(conn: apsw.Connection, conflict_id: str, now: float) -> Conflict:
    """Undo the person's (or an assistant's) resolution of ``conflict_id`` and open it again.

    keep_first / keep_second: the retired side is active again. replace: both sides are active
    again and the merged memory that took their place is erased (row, vector, text index), unless
    it was confirmed, edited, or absorbed another memory since: then it is only forgotten.
    keep_both changes no memory; sides pinned by a keep_both of an earlier version are unpinned.
    A side changed since (restored, forgotten by hand) is left as it is now.
    Raises :class:`InvalidInput` for an open conflict or one closed by forgetting a side.
    """
    conflict = _load(conn, conflict_id)
    how = conflict.resolution
    if conflict.status is ConflictStatus.OPEN:
        raise InvalidInput(f"Conflict {conflict_id} is open; there is no outcome to undo.")
    if how not in CHOSEN_RESOLUTIONS:
        raise InvalidInput(
            f"Conflict {conflict_id} was closed because one of its memories was forgotten; "
            "restore that memory instead."
        )
    a, b = conflict.memory_a, conflict.memory_b
    retired: list[tuple[Memory, str | None]] = []
    if how is ConflictResolution.KEEP_FIRST:
        retired = [(b, a.id)]
    elif how is ConflictResolution.KEEP_SECOND:
        retired = [(a, b.id)]
    elif how is ConflictResolution.REPLACE:
        retired = [(a, a.superseded_by), (b, b.superseded_by)]
    replacements: set[str] = set()
    for side, replaced_by in retired:
        if side.status is MemoryStatus.SUPERSEDED and replaced_by and side.superseded_by == replaced_by:
            replacements.add(replaced_by)
            row = q.fetch_by_id(conn, side.id)
            if row is not None:
                restore_memory(conn, row, now)
    if how is ConflictResolution.REPLACE:
        for mid in replacements:
            row = q.fetch_by_id(conn, mid)
            if row is None:
                continue
            resolve_conflicts_of(conn, row.rowid, now, resolution=str(ConflictResolution.FORGOTTEN))
            if _used_since(conn, row.rowid, mid):
                # Erasing it would lose what assistants or the person added since: forgotten instead.
                forget_memory(conn, row, now)
            else:
                # The merge never happened: its text leaves no trace, not even among forgotten memories.
                purge_memory(conn, row, now)
    if how is ConflictResolution.KEEP_BOTH:
        pinned_here = _pinned_by(conn, conflict_id)
        for side in (a, b):
            if side.id in pinned_here and side.pinned:
                conn.execute("UPDATE memories SET pinned = 0, updated_at = ? WHERE id = ?", (now, side.id))
                record_event(
                    conn, EventKind.MEMORY_UNPINNED, at=now, memory_id=side.id, conflict_id=conflict_id
                )
    conn.execute(
        "UPDATE conflicts SET status = 'open', resolved_at = NULL, resolution = NULL WHERE id = ?",
        (conflict_id,),
    )
    bump_generation(conn)
    record_event(conn, EventKind.CONFLICT_REOPENED, at=now, conflict_id=conflict_id, detail=str(how))
    return _load(conn, conflict_id)
