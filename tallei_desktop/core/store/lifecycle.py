"""Store operations behind the background worker: vectors, dedup merges and supersedes.

The decisions live in :mod:`tallei_desktop.core.conflicts`; these apply them inside its write
transaction, each with its change-feed event.
"""

from __future__ import annotations

import apsw
import numpy as np

from tallei_desktop.core.models import Bucket, EventKind, MemoryStatus
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.database import bump_generation
from tallei_desktop.core.store.events import record_event

__all__ = [
    "active_row",
    "is_processed",
    "mark_processed",
    "merge_into",
    "nearest_in_bucket",
    "platforms_of",
    "recent_preferences",
    "row_by_rowid",
    "store_vector",
    "supersede",
]


def row_by_rowid(conn: apsw.Connection, rowid: int) -> q.Row | None:
    rows = q.fetch_rows(conn, "WHERE m.rowid = ?", (rowid,))
    return rows[0] if rows else None


def active_row(conn: apsw.Connection, rowid: int) -> q.Row | None:
    rows = q.fetch_rows(conn, "WHERE m.rowid = ? AND m.status = 'active'", (rowid,))
    return rows[0] if rows else None


def is_processed(conn: apsw.Connection, rowid: int) -> bool:
    return bool(q.scalar(conn, "SELECT processed FROM memories WHERE rowid = ?", (rowid,)))


def store_vector(conn: apsw.Connection, rowid: int, vector: np.ndarray, bucket: Bucket) -> None:
    """Keep the memory's embedding (in ``vec0`` and the vector log) and mark it embedded."""
    q.upsert_vector(conn, rowid, vector, bucket)
    conn.execute("UPDATE memories SET embedded = 1 WHERE rowid = ?", (rowid,))


def mark_processed(conn: apsw.Connection, rowid: int) -> None:
    conn.execute("UPDATE memories SET processed = 1 WHERE rowid = ?", (rowid,))


def nearest_in_bucket(
    conn: apsw.Connection, vector: np.ndarray, k: int, bucket: Bucket
) -> list[tuple[int, float]]:
    """(rowid, cosine similarity) of the ``k`` nearest vectors in ``bucket``, from ``vec0``."""
    return q.nearest(conn, vector, k, bucket=bucket)


def recent_preferences(conn: apsw.Connection, *, exclude: int, limit: int = 200) -> list[int]:
    """Rowids of the newest active preferences other than ``exclude``."""
    return [
        int(r)
        for (r,) in conn.execute(
            "SELECT rowid FROM memories WHERE status = 'active' AND bucket = 'preference' AND rowid != ? "
            "ORDER BY created_at DESC LIMIT ?",
            (exclude, limit),
        )
    ]


def platforms_of(conn: apsw.Connection, rowid: int) -> set[str]:
    """Every platform that saved or confirmed the memory."""
    return {
        str(p) for (p,) in conn.execute("SELECT platform FROM provenance WHERE memory_rowid = ?", (rowid,))
    }


def merge_into(conn: apsw.Connection, new: q.Row, old: q.Row, now: float) -> None:
    """Fold the near-duplicate ``new`` into ``old``, which gains a reference and a confirmation."""
    conn.execute(
        "UPDATE memories SET status = 'merged', superseded_by = ?, updated_at = ? WHERE rowid = ?",
        (old.memory.id, now, new.rowid),
    )
    q.drop_vector(conn, new.rowid)
    conn.execute(
        "UPDATE memories SET reference_count = reference_count + 1, last_referenced_at = ? WHERE rowid = ?",
        (now, old.rowid),
    )
    q.add_provenance(conn, old.rowid, new.memory.platform, now, "confirmed")
    bump_generation(conn)
    record_event(
        conn,
        EventKind.MEMORY_MERGED,
        at=now,
        memory_id=new.memory.id,
        platform=new.memory.platform,
        detail=old.memory.id,
    )


def supersede(conn: apsw.Connection, old: q.Row, new: q.Row, now: float) -> None:
    """``new`` replaces ``old`` on the same subject: the old one is kept, marked superseded."""
    q.set_status(conn, old.rowid, MemoryStatus.SUPERSEDED, now)
    conn.execute("UPDATE memories SET superseded_by = ? WHERE rowid = ?", (new.memory.id, old.rowid))
    q.drop_vector(conn, old.rowid)
    bump_generation(conn)
    record_event(
        conn,
        EventKind.MEMORY_SUPERSEDED,
        at=now,
        memory_id=old.memory.id,
        platform=new.memory.platform,
        detail=new.memory.id,
    )
