"""Domain operations on memories: save, confirm, edit, forget, restore, purge, bumps, maintenance.

Each write operation is a complete change: the rows, the vector bookkeeping, the content generation
and the change-feed event, all inside the caller's write transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import apsw

from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.models import (
    APP_PLATFORM,
    Bucket,
    EarlierText,
    EventKind,
    Memory,
    MemoryStatus,
    MemoryType,
    bucket_for,
)
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.database import bump_generation
from tallei_desktop.core.store.events import record_event

__all__ = [
    "Inserted",
    "Pending",
    "archive_stale",
    "confirm_memory",
    "earlier_text",
    "earlier_texts",
    "edit_memory",
    "existing",
    "find_active_by_hash",
    "flush_bumps",
    "forget_memory",
    "generation",
    "insert_memory",
    "list_memories",
    "pending_count",
    "pending_work",
    "promote_busy",
    "purge_memory",
    "refine_type",
    "restore_memory",
]


@dataclass(frozen=True, slots=True)
class Inserted:
    rowid: int
    id: str


@dataclass(frozen=True, slots=True)
class Pending:
    """A memory the background worker still has to embed or check."""

    rowid: int
    content: str
    bucket: Bucket
    type: MemoryType
    #: The type was inferred from the text at save time, so the worker may refine it.
    type_inferred: bool


def existing(conn: apsw.Connection, memory_id: str) -> q.Row:
    """The memory with public id ``memory_id``; :class:`NotFound` if there is none."""
    row = q.fetch_by_id(conn, memory_id)
    if row is None:
        raise NotFound(f"No memory has the id {memory_id}.")
    return row


def generation(conn: apsw.Connection) -> int:
    """The content generation as of this transaction's snapshot."""
    return int(q.scalar(conn, "SELECT value FROM meta WHERE key = 'generation'"))


def find_active_by_hash(conn: apsw.Connection, digest: str) -> q.Row | None:
    rows = q.fetch_rows(conn, "WHERE m.norm_hash = ? AND m.status = 'active' LIMIT 1", (digest,))
    return rows[0] if rows else None


def insert_memory(
    conn: apsw.Connection,
    *,
    content: str,
    type: MemoryType,
    platform: str,
    now: float,
    occurred_at: float,
    pinned: bool = False,
    processed: bool = False,
    reference_count: int = 1,
    event: EventKind = EventKind.MEMORY_SAVED,
    type_inferred: bool = False,
) -> Inserted:
    """Add a memory with a "saved" provenance entry; the worker embeds it unless ``processed``.

    ``type_inferred`` says the type was classified from the text rather than given, so the worker
    may refine it (:func:`refine_type`).
    """
    mid = q.new_id()
    bucket = bucket_for(type)
    conn.execute(
        "INSERT INTO memories (id, content, norm_hash, type, bucket, platform, created_at, updated_at,"
        " occurred_at, pinned, processed, reference_count, type_inferred)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            mid,
            content,
            q.norm_hash(content),
            str(type),
            str(bucket),
            platform,
            now,
            now,
            occurred_at,
            int(pinned),
            int(processed),
            reference_count,
            int(type_inferred),
        ),
    )
    rowid = int(conn.last_insert_rowid())
    q.add_provenance(conn, rowid, platform, now, "saved")
    bump_generation(conn)
    record_event(conn, event, at=now, memory_id=mid, platform=platform, detail=str(type))
    return Inserted(rowid, mid)


def confirm_memory(conn: apsw.Connection, row: q.Row, platform: str, now: float, *, pin: bool) -> None:
    """The same text was saved again: one more reference and a "confirmed" provenance entry."""
    conn.execute(
        "UPDATE memories SET reference_count = reference_count + 1, last_referenced_at = ?, "
        "pinned = max(pinned, ?) WHERE rowid = ?",
        (now, int(pin), row.rowid),
    )
    q.add_provenance(conn, row.rowid, platform, now, "confirmed")
    bump_generation(conn)
    record_event(conn, EventKind.MEMORY_CONFIRMED, at=now, memory_id=row.memory.id, platform=platform)
    if pin and not row.memory.pinned:
        record_event(conn, EventKind.MEMORY_PINNED, at=now, memory_id=row.memory.id, platform=platform)


def edit_memory(
    conn: apsw.Connection,
    row: q.Row,
    now: float,
    *,
    content: str | None = None,
    type: MemoryType | None = None,
    pinned: bool | None = None,
    platform: str | None = None,
    note: str = "",
) -> None:
    """Change a memory's text, type or pin; new text loses its vector until the worker embeds it.

    A type given here is the editor's choice: the worker never refines it afterwards. New text adds
    an "edited" provenance entry that keeps the old text, under ``platform``: the assistant that made
    the edit, or, when none is named, the person in Tallei (:data:`APP_PLATFORM`), never the
    assistant that first saved the memory.
    """
    m = row.memory
    if m.status not in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED):
        raise InvalidInput(f"Memory {m.id} is {m.status}; only active memories can be edited.")
    new_text = content if content is not None else m.content
    text_changed = new_text != m.content
    new_type = type or m.type
    new_bucket = bucket_for(new_type) if type is not None else m.bucket
    new_pinned = m.pinned if pinned is None else pinned
    conn.execute(
        "UPDATE memories SET content = ?, norm_hash = ?, type = ?, bucket = ?, pinned = ?, status = 'active', "
        "updated_at = ?, embedded = CASE WHEN ? THEN 0 ELSE embedded END, "
        "type_inferred = CASE WHEN ? THEN 0 ELSE type_inferred END WHERE rowid = ?",
        (
            new_text,
            q.norm_hash(new_text),
            str(new_type),
            str(new_bucket),
            int(new_pinned),
            now,
            int(text_changed),
            int(type is not None),
            row.rowid,
        ),
    )
    if text_changed:
        q.drop_vector(conn, row.rowid)
        q.add_provenance(conn, row.rowid, platform or APP_PLATFORM, now, "edited", previous=m.content)
    elif new_bucket is not m.bucket:
        q.set_vector_bucket(conn, row.rowid, new_bucket)
    bump_generation(conn)
    events: list[tuple[EventKind, str]] = []
    if text_changed:
        events.append((EventKind.MEMORY_EDITED, note))
    if new_type is not m.type:
        events.append((EventKind.MEMORY_RETYPED, str(new_type)))
    if new_pinned != m.pinned:
        events.append((EventKind.MEMORY_PINNED if new_pinned else EventKind.MEMORY_UNPINNED, ""))
    if m.status is MemoryStatus.ARCHIVED:
        # An edit brings an archived memory back into dump-all.
        events.append((EventKind.MEMORY_RESTORED, "edited"))
    for kind, detail in events:
        record_event(conn, kind, at=now, memory_id=m.id, platform=platform, detail=detail)


# An earlier text is named by the rowid of the edit's provenance entry. That table has no INTEGER
# PRIMARY KEY, so only a VACUUM could renumber its rows, and the store never runs one.
_EARLIER_PREFIX = "e"


def _earlier_id(provenance_rowid: int) -> str:
    return f"{_EARLIER_PREFIX}{provenance_rowid:012x}"


def earlier_texts(conn: apsw.Connection, rowid: int) -> tuple[EarlierText, ...]:
    """The texts edits replaced in memory ``rowid``, newest first (edits recorded before the store
    kept the old text have none and are left out)."""
    found = _rows(
        conn,
        "SELECT rowid, previous, at, platform FROM provenance "
        "WHERE memory_rowid = ? AND action = 'edited' AND previous IS NOT NULL ORDER BY at DESC, rowid DESC",
        (rowid,),
    )
    return tuple(
        EarlierText(_earlier_id(int(pid)), str(text), q.to_dt(float(at)), str(platform))
        for pid, text, at, platform in found
    )


def earlier_text(conn: apsw.Connection, earlier_id: str) -> tuple[q.Row, str]:
    """The memory an earlier text belongs to, and that text; :class:`NotFound` if there is none."""
    missing = NotFound(f"No earlier text has the id {earlier_id}; the memory may have been erased.")
    if not earlier_id.startswith(_EARLIER_PREFIX):
        raise missing
    found = conn.execute(
        "SELECT m.id, p.previous FROM provenance p JOIN memories m ON m.rowid = p.memory_rowid "
        "WHERE p.rowid = ? AND p.action = 'edited' AND p.previous IS NOT NULL",
        (int(earlier_id[len(_EARLIER_PREFIX) :], 16),),
    ).fetchall()
    if not found:
        raise missing
    ((memory_id, text),) = found
    return existing(conn, str(memory_id)), str(text)


def refine_type(conn: apsw.Connection, pending: Pending, new_type: MemoryType, now: float) -> bool:
    """Give a still-pending memory whose type was inferred the type ``new_type`` (and its bucket),
    with a ``memory_retyped`` event (no platform: the worker did it). Returns False, changing
    nothing, when the memory was given its type, was edited or finished since ``pending`` was read,
    or already has ``new_type``."""
    changed = conn.execute(
        "UPDATE memories SET type = ?, bucket = ?, updated_at = ? WHERE rowid = ? AND type_inferred = 1 "
        "AND processed = 0 AND status = 'active' AND type = ? AND type != ? AND content = ? RETURNING id, embedded",
        (
            str(new_type),
            str(bucket_for(new_type)),
            now,
            pending.rowid,
            str(pending.type),
            str(new_type),
            pending.content,
        ),
    ).fetchall()
    if not changed:
        return False
    mid, embedded = changed[0]
    if embedded:
        q.set_vector_bucket(conn, pending.rowid, bucket_for(new_type))
    bump_generation(conn)
    record_event(conn, EventKind.MEMORY_RETYPED, at=now, memory_id=str(mid), detail=str(new_type))
    return True


def forget_memory(conn: apsw.Connection, row: q.Row, now: float) -> None:
    """Soft-delete (its open conflicts are closed by ``conflicts.resolve_conflicts_of``). A no-op if
    already forgotten."""
    if row.memory.status is MemoryStatus.DELETED:
        return
    q.set_status(conn, row.rowid, MemoryStatus.DELETED, now)
    q.drop_vector(conn, row.rowid)
    bump_generation(conn)
    record_event(conn, EventKind.MEMORY_FORGOTTEN, at=now, memory_id=row.memory.id)


def restore_memory(conn: apsw.Connection, row: q.Row, now: float) -> None:
    """Active again (from forgotten, archived, superseded or merged), to be embedded again."""
    conn.execute(
        "UPDATE memories SET status = 'active', superseded_by = NULL, updated_at = ?, embedded = 0 "
        "WHERE rowid = ?",
        (now, row.rowid),
    )
    bump_generation(conn)
    record_event(
        conn, EventKind.MEMORY_RESTORED, at=now, memory_id=row.memory.id, detail=str(row.memory.status)
    )


def purge_memory(conn: apsw.Connection, row: q.Row, now: float) -> None:
    """Erase for good: row, provenance, vector, text index and conflicts (by cascade)."""
    q.drop_vector(conn, row.rowid)
    conn.execute("DELETE FROM memories WHERE rowid = ?", (row.rowid,))
    bump_generation(conn)
    record_event(conn, EventKind.MEMORY_PURGED, at=now, memory_id=row.memory.id)


def list_memories(
    conn: apsw.Connection,
    *,
    status: MemoryStatus,
    bucket: Bucket | None,
    type: MemoryType | None,
    platform: str | None,
    limit: int,
    offset: int,
) -> list[Memory]:
    """Memories with provenance, pinned first, then newest first."""
    where = ["m.status = ?"]
    params: list[object] = [str(status)]
    if bucket is not None:
        where.append("m.bucket = ?")
        params.append(str(bucket))
    if type is not None:
        where.append("m.type = ?")
        params.append(str(type))
    if platform is not None:
        where.append("m.platform = ?")
        params.append(platform)
    sql = (
        "WHERE "
        + " AND ".join(where)
        + " ORDER BY m.pinned DESC, m.updated_at DESC, m.rowid DESC LIMIT ? OFFSET ?"
    )
    rows = q.fetch_rows(conn, sql, (*params, limit, offset))
    return [row.memory for row in q.load_provenance(conn, rows)]


def promote_busy(conn: apsw.Connection, now: float, *, at_refs: int) -> int:
    """Move active short-term memories referenced ``at_refs`` times or more to long-term."""
    promoted = _rows(
        conn,
        "UPDATE memories SET bucket = 'long_term', updated_at = ? WHERE status = 'active' "
        "AND bucket = 'short_term' AND reference_count >= ? RETURNING rowid, id",
        (now, at_refs),
    )
    for rowid, mid in promoted:
        q.set_vector_bucket(conn, int(rowid), Bucket.LONG_TERM)
        record_event(
            conn, EventKind.MEMORY_PROMOTED, at=now, memory_id=str(mid), detail=str(Bucket.LONG_TERM)
        )
    if promoted:
        bump_generation(conn)
    return len(promoted)


def archive_stale(conn: apsw.Connection, now: float, *, untouched_since: float) -> int:
    """Archive unpinned active long-term memories untouched since ``untouched_since``."""
    archived = conn.execute(
        "UPDATE memories SET status = 'archived' WHERE status = 'active' AND bucket = 'long_term' "
        "AND pinned = 0 AND max(updated_at, COALESCE(last_referenced_at, 0)) < ? RETURNING id",
        (untouched_since,),
    ).fetchall()
    for (mid,) in archived:
        record_event(conn, EventKind.MEMORY_ARCHIVED, at=now, memory_id=str(mid))
    if archived:
        bump_generation(conn)
    return len(archived)


def flush_bumps(conn: apsw.Connection, bumps: Mapping[int, int], now: float, *, promote_at: int) -> None:
    """Write queued recall hits: references grow; an archived hit is active again (MEMORY_RESTORED,
    detail "recalled"); busy short-term memories graduate."""
    if not bumps:
        return
    conn.executemany(
        "UPDATE memories SET reference_count = reference_count + ?, last_referenced_at = ? WHERE rowid = ?",
        [(n, now, rowid) for rowid, n in bumps.items()],
    )
    marks = ",".join("?" * len(bumps))
    revived = conn.execute(
        f"UPDATE memories SET status = 'active' WHERE status = 'archived' AND rowid IN ({marks}) RETURNING id",
        tuple(bumps),
    ).fetchall()
    for (mid,) in revived:
        record_event(conn, EventKind.MEMORY_RESTORED, at=now, memory_id=str(mid), detail="recalled")
    if revived:
        bump_generation(conn)
    promote_busy(conn, now, at_refs=promote_at)


def pending_work(conn: apsw.Connection, limit: int, *, embed_too: bool) -> list[Pending]:
    """Memories not yet checked by the worker (and, with ``embed_too``, live ones lacking a vector)."""
    where = "processed = 0"
    if embed_too:
        where += " OR (embedded = 0 AND status IN ('active', 'archived'))"
    return [
        Pending(int(rowid), str(content), Bucket(str(bucket)), MemoryType(str(type_)), bool(inferred))
        for rowid, content, bucket, type_, inferred in _rows(
            conn,
            f"SELECT rowid, content, bucket, type, type_inferred FROM memories WHERE {where} ORDER BY rowid LIMIT ?",
            (limit,),
        )
    ]


def _rows(conn: apsw.Connection, sql: str, params: tuple[object, ...]) -> list[Any]:
    rows: list[Any] = conn.execute(sql, params).fetchall()
    return rows


def pending_count(conn: apsw.Connection) -> int:
    return int(
        q.scalar(
            conn,
            "SELECT count(*) FROM memories WHERE processed = 0 "
            "OR (embedded = 0 AND status IN ('active', 'archived'))",
        )
    )
