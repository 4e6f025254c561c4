"""SQL for memories, provenance, vectors and conflicts. Functions take a connection the caller owns.

Rows come back as :class:`Row` (internal rowid + the public :class:`Memory`) so callers can join
against the vector and text indexes without a second lookup.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import apsw
import numpy as np

from tallei_desktop.core.errors import BugError
from tallei_desktop.core.models import (
    Bucket,
    Conflict,
    ConflictResolution,
    ConflictStatus,
    Memory,
    MemoryStatus,
    MemoryType,
    Provenance,
)

__all__ = [
    "CONFLICT_COLUMNS",
    "MEMORY_COLUMNS",
    "Row",
    "add_provenance",
    "conflict_from",
    "drop_vector",
    "fetch_by_id",
    "fetch_by_rowids",
    "fetch_full",
    "fetch_rows",
    "fts_query",
    "load_provenance",
    "nearest",
    "new_id",
    "norm_hash",
    "row_from",
    "scalar",
    "set_status",
    "set_vector_bucket",
    "status_counts",
    "to_dt",
    "upsert_vector",
]

MEMORY_COLUMNS = (
    "m.rowid, m.id, m.content, m.type, m.bucket, m.platform, m.created_at, m.updated_at, m.occurred_at, "
    "m.reference_count, m.last_referenced_at, m.pinned, m.status, m.superseded_by, m.embedded"
)


@dataclass(frozen=True, slots=True)
class Row:
    rowid: int
    memory: Memory


def to_dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


# Recall reads a few hundred rows per question: looking members up by value skips Enum.__call__.
_TYPES = {str(t): t for t in MemoryType}
_BUCKETS = {str(b): b for b in Bucket}
_STATUSES = {str(s): s for s in MemoryStatus}


def row_from(values: Sequence[object], provenance: tuple[Provenance, ...] = ()) -> Row:
    (
        rowid,
        mid,
        content,
        mtype,
        bucket,
        platform,
        created,
        updated,
        occurred,
        refs,
        last_ref,
        pinned,
        status,
        superseded_by,
        embedded,
    ) = values
    memory = Memory(
        id=str(mid),
        content=str(content),
        type=_TYPES.get(str(mtype)) or MemoryType(str(mtype)),
        bucket=_BUCKETS.get(str(bucket)) or Bucket(str(bucket)),
        platform=str(platform),
        created_at=datetime.fromtimestamp(created, UTC),  # type: ignore[arg-type]
        updated_at=datetime.fromtimestamp(updated, UTC),  # type: ignore[arg-type]
        occurred_at=datetime.fromtimestamp(occurred, UTC),  # type: ignore[arg-type]
        reference_count=int(refs),  # type: ignore[call-overload]
        last_referenced_at=to_dt(float(last_ref)) if last_ref is not None else None,  # type: ignore[arg-type]
        pinned=bool(pinned),
        status=_STATUSES.get(str(status)) or MemoryStatus(str(status)),
        superseded_by=str(superseded_by) if superseded_by is not None else None,
        embedded=bool(embedded),
        provenance=provenance,
    )
    return Row(int(rowid), memory)  # type: ignore[call-overload]


def new_id(prefix: str = "") -> str:
    """A short random public id (48 bits is plenty for one person's memories)."""
    return prefix + secrets.token_hex(6)


_SPACE = re.compile(r"\s+")
_PUNCT_END = re.compile(r"[\s.!?;:,]+$")


def norm_hash(text: str) -> str:
    """Hash of the text with case, Unicode form, inner spacing and end punctuation folded."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _PUNCT_END.sub("", _SPACE.sub(" ", folded).strip())
    return hashlib.blake2b(folded.encode("utf-8"), digest_size=16).hexdigest()


_WORD = re.compile(r"\w+", re.UNICODE)
# Words too common to say anything about a match; without this "the" alone would make a BM25 hit.
_STOPWORDS = frozenset(
    """
    a about after again all also am an and any are as at be because been before being but by can could
    did do does doing for from had has have having he her here hers him his how i if in into is it its
    just me more most my no nor not of on once only or other our ours out over own same she should so
    some such than that the their theirs them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your yours
    """.split()
)


def fts_query(text: str, *, max_terms: int = 32) -> str | None:
    """An FTS5 MATCH expression that ORs the words of ``text``, each quoted (no syntax injection)."""
    words: dict[str, None] = {}
    for w in _WORD.findall(text.casefold()):
        if (len(w) > 1 or w.isdigit()) and w not in _STOPWORDS:
            words.setdefault(w, None)
        if len(words) >= max_terms:
            break
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def scalar(conn: apsw.Connection, sql: str, params: Sequence[object] = ()) -> Any:
    """The first column of the first row; a query that must return a row and did not is a bug."""
    row = conn.execute(sql, tuple(params)).fetchone()
    if row is None:
        raise BugError(f"Expected a row from: {sql}")
    return row[0]


def _provenance_of(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, list[Provenance]]:
    by_rowid: dict[int, list[Provenance]] = {rowid: [] for rowid in rowids}
    if not by_rowid:
        return by_rowid
    marks = ",".join("?" * len(by_rowid))
    for rowid, platform, at, action, previous in conn.execute(
        f"SELECT memory_rowid, platform, at, action, previous FROM provenance WHERE memory_rowid IN ({marks}) "
        "ORDER BY at, rowid",
        tuple(by_rowid),
    ):
        before = str(previous) if previous is not None else None
        by_rowid[int(rowid)].append(Provenance(str(platform), to_dt(float(at)), str(action), before))
    return by_rowid


def _with_provenance(m: Memory, provenance: tuple[Provenance, ...]) -> Memory:
    """``m`` with ``provenance``: the constructor called directly costs half of ``dataclasses.replace``,
    which recall would pay once per line of its block."""
    return Memory(
        id=m.id,
        content=m.content,
        type=m.type,
        bucket=m.bucket,
        platform=m.platform,
        created_at=m.created_at,
        updated_at=m.updated_at,
        occurred_at=m.occurred_at,
        reference_count=m.reference_count,
        last_referenced_at=m.last_referenced_at,
        pinned=m.pinned,
        status=m.status,
        superseded_by=m.superseded_by,
        embedded=m.embedded,
        provenance=provenance,
    )


def load_provenance(conn: apsw.Connection, rows: Iterable[Row]) -> list[Row]:
    """The same rows with their provenance attached, in one query."""
    rows = list(rows)
    by_rowid = _provenance_of(conn, [r.rowid for r in rows])
    return [Row(r.rowid, _with_provenance(r.memory, tuple(by_rowid[r.rowid]))) for r in rows]


def fetch_full(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, Row]:
    """Memories by rowid with their provenance, each built once."""
    if not rowids:
        return {}
    by_rowid = _provenance_of(conn, rowids)
    marks = ",".join("?" * len(rowids))
    sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.rowid IN ({marks})"
    rows = (row_from(values, tuple(by_rowid[int(values[0])])) for values in conn.execute(sql, tuple(rowids)))
    return {row.rowid: row for row in rows}


def add_provenance(
    conn: apsw.Connection, rowid: int, platform: str, at: float, action: str, *, previous: str | None = None
) -> None:
    """One entry of the memory's trail; ``previous`` is an edit's text from before it."""
    conn.execute(
        "INSERT INTO provenance (memory_rowid, platform, at, action, previous) VALUES (?, ?, ?, ?, ?)",
        (rowid, platform, at, action, previous),
    )


def fetch_rows(conn: apsw.Connection, where: str, params: Sequence[object] = ()) -> list[Row]:
    """Memories matching a WHERE/ORDER/LIMIT clause over alias ``m``."""
    sql = f"SELECT {MEMORY_COLUMNS} FROM memories m {where}"
    return [row_from(values) for values in conn.execute(sql, tuple(params))]


def fetch_by_id(conn: apsw.Connection, memory_id: str) -> Row | None:
    rows = fetch_rows(conn, "WHERE m.id = ?", (memory_id,))
    return rows[0] if rows else None


def fetch_by_rowids(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, Row]:
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    return {r.rowid: r for r in fetch_rows(conn, f"WHERE m.rowid IN ({marks})", rowids)}


# Every change to memory_vectors is logged in the same transaction, so each process's in-memory
# VectorIndex can follow it (see store/vector_index.py).


def _log_vector(conn: apsw.Connection, rowid: int) -> None:
    conn.execute("INSERT INTO vector_log (memory_rowid) VALUES (?)", (rowid,))


def upsert_vector(conn: apsw.Connection, rowid: int, vector: np.ndarray, bucket: Bucket) -> None:
    blob = np.asarray(vector, dtype=np.float32).tobytes()
    conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (rowid,))
    conn.execute(
        "INSERT INTO memory_vectors (rowid, embedding, bucket) VALUES (?, ?, ?)", (rowid, blob, str(bucket))
    )
    _log_vector(conn, rowid)


def set_vector_bucket(conn: apsw.Connection, rowid: int, bucket: Bucket) -> None:
    conn.execute("UPDATE memory_vectors SET bucket = ? WHERE rowid = ?", (str(bucket), rowid))
    _log_vector(conn, rowid)


def drop_vector(conn: apsw.Connection, rowid: int) -> None:
    conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (rowid,))
    _log_vector(conn, rowid)


def nearest(
    conn: apsw.Connection, vector: np.ndarray, k: int, *, bucket: Bucket | None = None
) -> list[tuple[int, float]]:
    """(rowid, cosine similarity) of the ``k`` nearest vectors, optionally within one bucket."""
    blob = np.asarray(vector, dtype=np.float32).tobytes()
    if bucket is None:
        cur = conn.execute(
            "SELECT rowid, distance FROM memory_vectors WHERE embedding MATCH ? AND k = ?", (blob, k)
        )
    else:
        cur = conn.execute(
            "SELECT rowid, distance FROM memory_vectors WHERE embedding MATCH ? AND k = ? AND bucket = ?",
            (blob, k, str(bucket)),
        )
    return [(int(rowid), 1.0 - float(dist)) for rowid, dist in cur]


def conflict_from(conn: apsw.Connection, values: Sequence[object]) -> Conflict:
    cid, a_rowid, b_rowid, status, created, resolved, resolution = values
    rows = load_provenance(conn, fetch_by_rowids(conn, [int(a_rowid), int(b_rowid)]).values())  # type: ignore[call-overload]
    by = {r.rowid: r.memory for r in rows}
    return Conflict(
        id=str(cid),
        memory_a=by[int(a_rowid)],  # type: ignore[call-overload]
        memory_b=by[int(b_rowid)],  # type: ignore[call-overload]
        status=ConflictStatus(str(status)),
        created_at=to_dt(float(created)),  # type: ignore[arg-type]
        resolved_at=to_dt(float(resolved)) if resolved is not None else None,  # type: ignore[arg-type]
        resolution=ConflictResolution(str(resolution)) if resolution is not None else None,
    )


CONFLICT_COLUMNS = "id, a_rowid, b_rowid, status, created_at, resolved_at, resolution"


def status_counts(conn: apsw.Connection) -> dict[tuple[str, str], int]:
    return {
        (str(status), str(bucket)): int(n)
        for status, bucket, n in conn.execute("SELECT status, bucket, count(*) FROM memories GROUP BY 1, 2")
    }


def set_status(conn: apsw.Connection, rowid: int, status: MemoryStatus, now: float) -> None:
    conn.execute("UPDATE memories SET status = ?, updated_at = ? WHERE rowid = ?", (str(status), now, rowid))
