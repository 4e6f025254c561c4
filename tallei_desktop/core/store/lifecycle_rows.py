"""The store side of a new memory's lifecycle: reading one case, and applying the decision on it.

Both run in the one write transaction that finishes a pending memory. :func:`gather_case` reads the
memory and its nearest active neighbours into plain values, so what is decided on is what is there
(a neighbour retired or merged meanwhile by another process is left out; a memory finished already
says so). The pure ruling is :func:`tallei_desktop.core.lifecycle.decide`; :func:`apply_decision`
writes it, each change with its change-feed event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from tallei_desktop.core.lifecycle import Candidate, Case, Decision, NewMemory
from tallei_desktop.core.models import Bucket, EventKind, MemoryStatus
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.conflicts import open_conflict
from tallei_desktop.core.store.database import bump_generation
from tallei_desktop.core.store.events import record_event

__all__ = ["NEIGHBOURS_K", "Outcome", "apply_decision", "gather_case", "neighbours_in_store"]

#: How many nearest memories a new one is compared with.
NEIGHBOURS_K = 12
#: Without vectors, a new preference is compared with this many of the newest ones, by words.
RECENT_PREFERENCES = 200


def neighbours_in_store(
    conn: apsw.Connection, rowid: int, bucket: Bucket, vector: np.ndarray | None
) -> list[tuple[int, float | None]]:
    """(rowid, similarity) of the memories to compare with when none were found beforehand: the
    nearest vectors in the bucket, or without a vector the newest preferences (similarity None)."""
    if vector is not None:
        return [(r, s) for r, s in q.nearest(conn, vector, NEIGHBOURS_K, bucket=bucket) if r != rowid]
    if bucket is not Bucket.PREFERENCE:
        return []
    found = conn.execute(
        "SELECT rowid FROM memories WHERE status = 'active' AND bucket = 'preference' AND rowid != ? "
        "ORDER BY created_at DESC LIMIT ?",
        (rowid, RECENT_PREFERENCES),
    )
    return [(int(r), None) for (r,) in found]


def gather_case(
    conn: apsw.Connection,
    rowid: int,
    content: str,
    vector: np.ndarray | None,
    neighbours: Sequence[tuple[int, float]] | None = None,
) -> Case | None:
    """The case of pending memory ``rowid``, embedded as ``vector`` from the text ``content``; None
    when it is gone. ``neighbours`` (rowid, similarity), nearest first, were found before the
    transaction; without them, or when the text changed since it was embedded, the store is searched.
    """
    found = q.fetch_by_rowids(conn, [rowid]).get(rowid)
    if found is None:
        return None
    m = found.memory
    current = m.content == content
    processed = bool(q.scalar(conn, "SELECT processed FROM memories WHERE rowid = ?", (rowid,)))
    new = NewMemory(rowid, m.id, m.type, m.bucket, m.content, m.platform, m.status, processed)
    if processed or m.status is not MemoryStatus.ACTIVE:
        return Case(new, (), vector_current=current)
    near: Sequence[tuple[int, float | None]] = (
        neighbours
        if neighbours is not None and vector is not None and current
        else neighbours_in_store(conn, rowid, m.bucket, vector if current else None)
    )
    rows = q.fetch_by_rowids(conn, [r for r, _ in near])
    active = [rows[r] for r, _ in near if r in rows and rows[r].memory.status is MemoryStatus.ACTIVE]
    platforms = _platforms(conn, [r.rowid for r in active])
    similarity = dict(near)
    candidates = tuple(
        Candidate(
            r.rowid,
            r.memory.id,
            r.memory.type,
            r.memory.content,
            r.memory.platform,
            platforms.get(r.rowid, frozenset({r.memory.platform})),
            r.memory.pinned,
            similarity[r.rowid],
        )
        for r in active
    )
    return Case(new, candidates, vector_current=current)


def _platforms(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, frozenset[str]]:
    """Every platform that saved or confirmed each memory."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    out: dict[int, set[str]] = {}
    for r, p in conn.execute(
        f"SELECT memory_rowid, platform FROM provenance WHERE memory_rowid IN ({marks})", tuple(rowids)
    ):
        out.setdefault(int(r), set()).add(str(p))
    return {r: frozenset(ps) for r, ps in out.items()}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What finishing one memory changed, by public id."""

    merged_into: str | None = None
    superseded: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()


def apply_decision(
    conn: apsw.Connection, case: Case, decision: Decision, vector: np.ndarray | None, now: float
) -> Outcome | None:
    """Write ``decision``; None when the memory needed no ruling (finished already, not active)."""
    new = case.new
    if decision.store_vector and vector is not None:
        q.upsert_vector(conn, new.rowid, vector, new.bucket)
        conn.execute("UPDATE memories SET embedded = 1 WHERE rowid = ?", (new.rowid,))
    conn.execute("UPDATE memories SET processed = 1 WHERE rowid = ?", (new.rowid,))
    if new.processed or new.status is not MemoryStatus.ACTIVE:
        return None
    if decision.merge_into is not None:
        _merge(conn, new, decision.merge_into, now)
        return Outcome(merged_into=decision.merge_into.id)
    for old in decision.superseded:
        _supersede(conn, old, new, now)
    conflicts = tuple(
        open_conflict(conn, old.rowid, new.rowid, now, platform=new.platform) for old in decision.conflicts
    )
    return Outcome(superseded=tuple(old.id for old in decision.superseded), conflicts=conflicts)


def _merge(conn: apsw.Connection, new: NewMemory, old: Candidate, now: float) -> None:
    """Fold the near-duplicate ``new`` into ``old``, which gains a reference and a confirmation."""
    conn.execute(
        "UPDATE memories SET status = 'merged', superseded_by = ?, updated_at = ? WHERE rowid = ?",
        (old.id, now, new.rowid),
    )
    q.drop_vector(conn, new.rowid)
    conn.execute(
        "UPDATE memories SET reference_count = reference_count + 1, last_referenced_at = ? WHERE rowid = ?",
        (now, old.rowid),
    )
    q.add_provenance(conn, old.rowid, new.platform, now, "confirmed")
    bump_generation(conn)
    record_event(
        conn, EventKind.MEMORY_MERGED, at=now, memory_id=new.id, platform=new.platform, detail=old.id
    )


def _supersede(conn: apsw.Connection, old: Candidate, new: NewMemory, now: float) -> None:
    """``new`` replaces ``old``: the old one is kept, marked superseded, and can be brought back."""
    q.set_status(conn, old.rowid, MemoryStatus.SUPERSEDED, now)
    conn.execute("UPDATE memories SET superseded_by = ? WHERE rowid = ?", (new.id, old.rowid))
    q.drop_vector(conn, old.rowid)
    bump_generation(conn)
    record_event(
        conn, EventKind.MEMORY_SUPERSEDED, at=now, memory_id=old.id, platform=new.platform, detail=new.id
    )
