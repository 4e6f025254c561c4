"""SQL for export and import, and the values passed between it and the document. Functions take a
connection the caller owns (import: a write transaction).

The document itself (format, encryption, checks) is ``core/exports.py``.

Import rules, applied memory by memory in file order:

* the id is already in the store: the file's provenance entries it lacks are added (each one also
  adds a reference); with none to add the memory is skipped;
* else an *active* memory with the same normalised text exists: it is confirmed the same way;
* else the memory is inserted with its id, dates, counts and provenance, *pending*, so the background
  worker runs the same dedup / supersede / conflict checks as for a save.

Conflicts are inserted unless their id or their pair of memories is already known. Importing the same
file twice therefore changes nothing the second time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import apsw

from tallei_desktop.core.models import ConflictStatus, EventKind, Memory, MemoryStatus, Provenance
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.database import bump_generation
from tallei_desktop.core.store.events import record_event

__all__ = ["ExportedConflict", "ImportReport", "ParsedExport", "export_all", "import_parsed"]


@dataclass(frozen=True, slots=True)
class ExportedConflict:
    id: str
    memory_a: str
    memory_b: str
    status: ConflictStatus
    created_at: datetime
    resolved_at: datetime | None
    resolution: str | None  # a ConflictResolution, or "forgotten" when one side was forgotten


@dataclass(frozen=True, slots=True)
class ParsedExport:
    """A checked document: every memory (with provenance) and conflict, ready to merge."""

    exported_at: datetime
    memories: tuple[Memory, ...]
    conflicts: tuple[ExportedConflict, ...]


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did. Importing the same file again adds and confirms nothing."""

    added: int  # new memories
    confirmed: int  # existing memories that gained provenance from the file
    skipped: int  # memories already known with all their provenance
    conflicts_added: int
    conflicts_skipped: int

    @property
    def changed(self) -> bool:
        return bool(self.added or self.confirmed or self.conflicts_added)


def _all_provenance(conn: apsw.Connection) -> dict[int, list[Provenance]]:
    by_rowid: defaultdict[int, list[Provenance]] = defaultdict(list)
    for rowid, platform, at, action, previous in conn.execute(
        "SELECT memory_rowid, platform, at, action, previous FROM provenance ORDER BY memory_rowid, at, rowid"
    ):
        before = str(previous) if previous is not None else None
        by_rowid[int(rowid)].append(Provenance(str(platform), q.to_dt(float(at)), str(action), before))
    return by_rowid


def export_all(conn: apsw.Connection) -> tuple[list[Memory], list[ExportedConflict]]:
    """Every memory (all statuses, oldest first, with provenance) and every conflict."""
    provenance = _all_provenance(conn)
    memories = [
        q.row_from(values, tuple(provenance.get(int(values[0]), ()))).memory
        for values in conn.execute(f"SELECT {q.MEMORY_COLUMNS} FROM memories m ORDER BY m.rowid")
    ]
    conflicts = [
        ExportedConflict(
            id=str(cid),
            memory_a=str(a),
            memory_b=str(b),
            status=ConflictStatus(str(status)),
            created_at=q.to_dt(float(created)),
            resolved_at=q.to_dt(float(resolved)) if resolved is not None else None,
            resolution=str(how) if how is not None else None,
        )
        for cid, a, b, status, created, resolved, how in conn.execute(
            "SELECT c.id, a.id, b.id, c.status, c.created_at, c.resolved_at, c.resolution FROM conflicts c "
            "JOIN memories a ON a.rowid = c.a_rowid JOIN memories b ON b.rowid = c.b_rowid ORDER BY c.rowid"
        )
    ]
    return memories, conflicts


def _ts(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def _merge_provenance(conn: apsw.Connection, row: q.Row, incoming: Memory) -> int:
    """Add the file's provenance entries this memory lacks; returns how many were added."""
    have = {
        (str(p), q.to_dt(float(at)), str(a))
        for p, at, a in conn.execute(
            "SELECT platform, at, action FROM provenance WHERE memory_rowid = ?", (row.rowid,)
        )
    }
    added = 0
    for p in incoming.provenance:
        if (p.platform, p.at, p.action) not in have:
            q.add_provenance(conn, row.rowid, p.platform, p.at.timestamp(), p.action, previous=p.previous)
            have.add((p.platform, p.at, p.action))
            added += 1
    if added:
        latest = max(p.at for p in incoming.provenance).timestamp()
        conn.execute(
            "UPDATE memories SET reference_count = reference_count + ?, pinned = max(pinned, ?), "
            "last_referenced_at = max(COALESCE(last_referenced_at, 0), ?) WHERE rowid = ?",
            (added, int(incoming.pinned), latest, row.rowid),
        )
    return added


def _insert(conn: apsw.Connection, m: Memory) -> int:
    conn.execute(
        "INSERT INTO memories (id, content, norm_hash, type, bucket, platform, created_at, updated_at, "
        "occurred_at, reference_count, last_referenced_at, pinned, status, superseded_by, embedded, processed) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0)",
        (
            m.id,
            m.content,
            q.norm_hash(m.content),
            str(m.type),
            str(m.bucket),
            m.platform,
            m.created_at.timestamp(),
            m.updated_at.timestamp(),
            m.occurred_at.timestamp(),
            m.reference_count,
            _ts(m.last_referenced_at),
            int(m.pinned),
            str(m.status),
            m.superseded_by,
        ),
    )
    rowid = conn.last_insert_rowid()
    conn.executemany(
        "INSERT INTO provenance (memory_rowid, platform, at, action, previous) VALUES (?, ?, ?, ?, ?)",
        [(rowid, p.platform, p.at.timestamp(), p.action, p.previous) for p in m.provenance],
    )
    return rowid


def _import_conflicts(
    conn: apsw.Connection, conflicts: Iterable[ExportedConflict], ids: dict[str, tuple[int, str]], now: float
) -> tuple[int, int]:
    added = skipped = 0
    for c in conflicts:
        (a, a_id), (b, b_id) = ids[c.memory_a], ids[c.memory_b]
        known = conn.execute(
            "SELECT 1 FROM conflicts WHERE id = ? OR (a_rowid = ? AND b_rowid = ?) OR (a_rowid = ? AND b_rowid = ?)",
            (c.id, a, b, b, a),
        ).fetchone()
        if known is not None or a == b:
            skipped += 1
            continue
        conn.execute(
            "INSERT INTO conflicts (id, a_rowid, b_rowid, status, created_at, resolved_at, resolution) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                c.id,
                a,
                b,
                str(c.status),
                c.created_at.timestamp(),
                _ts(c.resolved_at),
                c.resolution,
            ),
        )
        added += 1
        if c.status is ConflictStatus.OPEN:
            record_event(
                conn, EventKind.CONFLICT_OPENED, at=now, memory_id=b_id, conflict_id=c.id, detail=a_id
            )
    return added, skipped


def import_parsed(conn: apsw.Connection, parsed: ParsedExport, *, now: float) -> ImportReport:
    """Merge a checked export into the store, inside the caller's write transaction.

    Each added or confirmed memory is a ``memory_imported`` event (detail ``added`` or ``confirmed``),
    each imported open conflict a ``conflict_opened`` one; skipped ones leave no event.
    """
    added = confirmed = skipped = 0
    ids: dict[str, tuple[int, str]] = {}  # file id -> (rowid, id) of the memory it became or matched
    for m in parsed.memories:
        row = q.fetch_by_id(conn, m.id)
        if row is None and m.status is MemoryStatus.ACTIVE:
            same = q.fetch_rows(
                conn, "WHERE m.norm_hash = ? AND m.status = 'active' LIMIT 1", (q.norm_hash(m.content),)
            )
            row = same[0] if same else None
        if row is None:
            ids[m.id] = (_insert(conn, m), m.id)
            record_event(
                conn, EventKind.MEMORY_IMPORTED, at=now, memory_id=m.id, platform=m.platform, detail="added"
            )
            added += 1
            continue
        ids[m.id] = (row.rowid, row.memory.id)
        if _merge_provenance(conn, row, m):
            record_event(
                conn,
                EventKind.MEMORY_IMPORTED,
                at=now,
                memory_id=row.memory.id,
                platform=m.platform,
                detail="confirmed",
            )
            confirmed += 1
        else:
            skipped += 1
    conflicts_added, conflicts_skipped = _import_conflicts(conn, parsed.conflicts, ids, now)
    report = ImportReport(added, confirmed, skipped, conflicts_added, conflicts_skipped)
    if report.changed:
        bump_generation(conn)
    return report
