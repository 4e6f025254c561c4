"""The change feed: an append-only ``events`` table written in the same transaction as each change.

Every store operation that changes what a person would see calls :func:`record_event` inside its
write transaction, so an event exists exactly when its change was committed (a rolled-back change
leaves none). Readers poll with :func:`read_changes`; ``seq`` only grows and is never reused
(AUTOINCREMENT), so "everything after N" is exact. Old events are pruned by :func:`prune_events`
during maintenance; a reader older than what was kept is told to reload.
"""

from __future__ import annotations

from datetime import UTC, datetime

import apsw

from tallei_desktop.core.models import ChangeBatch, ChangeEvent, EventKind

__all__ = [
    "KEEP_EVENTS",
    "KEEP_EVENT_DAYS",
    "last_seq",
    "prune_events",
    "read_changes",
    "record_event",
]

#: Events are pruned once they are both older than this many days and beyond the newest KEEP_EVENTS.
KEEP_EVENT_DAYS = 30
KEEP_EVENTS = 50_000
_DAY = 86_400.0


def record_event(
    conn: apsw.Connection,
    kind: EventKind,
    *,
    at: float,
    memory_id: str | None = None,
    conflict_id: str | None = None,
    platform: str | None = None,
    detail: str = "",
) -> int:
    """Append one event and return its ``seq``; call inside the write transaction of the change."""
    conn.execute(
        "INSERT INTO events (kind, at, memory_id, conflict_id, platform, detail) VALUES (?, ?, ?, ?, ?, ?)",
        (str(kind), at, memory_id, conflict_id, platform, detail),
    )
    return int(conn.last_insert_rowid())


def last_seq(conn: apsw.Connection) -> int:
    """The newest ``seq`` ever handed out (0 for none), pruned or not."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
    return int(row[0]) if row else 0


def read_changes(conn: apsw.Connection, seq: int, limit: int) -> ChangeBatch:
    """Events after ``seq``, oldest first, at most ``limit`` of them.

    ``reload`` is True when events after ``seq`` were pruned (the caller cannot catch up by events
    alone), and when ``seq`` lies ahead of the store (it was replaced, e.g. restored from a backup).
    """
    newest = last_seq(conn)
    oldest_row = conn.execute("SELECT min(seq) FROM events").fetchone()
    oldest = int(oldest_row[0]) if oldest_row and oldest_row[0] is not None else newest + 1
    reload = seq > newest or seq < oldest - 1
    events = tuple(
        ChangeEvent(
            seq=int(s),
            kind=EventKind(str(kind)),
            at=datetime.fromtimestamp(float(at), tz=UTC),
            memory_id=str(mid) if mid is not None else None,
            conflict_id=str(cid) if cid is not None else None,
            platform=str(platform) if platform is not None else None,
            detail=str(detail),
        )
        for s, kind, at, mid, cid, platform, detail in conn.execute(
            "SELECT seq, kind, at, memory_id, conflict_id, platform, detail FROM events "
            "WHERE seq > ? ORDER BY seq LIMIT ?",
            (seq, limit),
        )
    )
    through = events[-1].seq if events else newest
    return ChangeBatch(events=events, last_seq=through, reload=reload)


def prune_events(
    conn: apsw.Connection, now: float, *, keep_days: float | None = None, keep: int | None = None
) -> int:
    """Drop events older than ``keep_days`` that are also beyond the newest ``keep`` (by default
    KEEP_EVENT_DAYS and KEEP_EVENTS); returns how many."""
    keep = KEEP_EVENTS if keep is None else keep
    cutoff = now - (KEEP_EVENT_DAYS if keep_days is None else keep_days) * _DAY
    deleted = conn.execute(
        "DELETE FROM events WHERE at < ? AND seq <= (SELECT max(seq) FROM events) - ? RETURNING seq",
        (cutoff, keep),
    ).fetchall()
    return len(deleted)
