"""Recall's first step, gather: what recall and search read from the store, in one snapshot.

:func:`gather_recall` and :func:`gather_search` do every read the ranking needs and return frozen
values; ranking and rendering are pure, in :mod:`tallei_desktop.core.recall` (the package says how
the steps fit). :func:`read_chosen` then reads full rows only for what was chosen, in the same
snapshot. How many candidates are read is part of :class:`~tallei_desktop.core.recall.RecallTuning`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import apsw
import numpy as np

from tallei_desktop.core.models import Bucket, Memory, MemoryStatus
from tallei_desktop.core.recall.rank import alongside, alongside_rowids, asks, match_strength
from tallei_desktop.core.recall.tuning import DEFAULT_TUNING, RecallTuning
from tallei_desktop.core.recall.values import Chosen, RecallCandidates, SavedAt, SearchCandidates
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.conflicts import open_conflicts_of, open_conflicts_per_memory
from tallei_desktop.core.store.vector_index import VectorIndex

__all__ = ["gather_recall", "gather_search", "read_chosen", "text_hits"]


def text_hits(
    conn: apsw.Connection, query: str, where: str, params: tuple[object, ...], k: int
) -> dict[int, float]:
    """rowid -> raw bm25() of the best ``k`` text matches among memories satisfying ``where``."""
    match = q.fts_query(query)
    if match is None:
        return {}
    # CROSS JOIN keeps the text index as the outer loop: left to itself, SQLite may walk a memories
    # index and probe FTS once per row (measured: 230 ms instead of 0.5 ms at 10,000 memories).
    sql = (
        "SELECT f.rowid, bm25(memory_fts) AS score FROM memory_fts f CROSS JOIN memories m ON m.rowid = f.rowid "
        f"WHERE memory_fts MATCH ? AND {where} ORDER BY score LIMIT ?"
    )
    return {int(rowid): float(score) for rowid, score in conn.execute(sql, (match, *params, k))}


def _recall_text_hits(
    conn: apsw.Connection, query: str, cutoff: float, k: int
) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
    """rowid -> raw bm25() of the best ``k`` text matches among active preferences, the long-term
    pool (active long-term memories, older short-term ones, archived ones but preferences) and the
    short-term window (active short-term memories since ``cutoff``), in one pass over the text index:
    bm25() does not depend on which of them a match falls in."""
    match = q.fts_query(query)
    if match is None:
        return {}, {}, {}
    sql = (
        "SELECT rowid, score, part FROM ("
        " SELECT rowid, score, part, row_number() OVER (PARTITION BY part ORDER BY score) AS n FROM ("
        "  SELECT f.rowid AS rowid, bm25(memory_fts) AS score, CASE"
        "   WHEN m.bucket = 'preference' THEN (CASE WHEN m.status = 'active' THEN 0 ELSE 3 END)"
        "   WHEN m.status = 'active' AND m.bucket = 'short_term' AND m.occurred_at >= ? THEN 2"
        "   ELSE 1 END AS part"
        "  FROM memory_fts f CROSS JOIN memories m ON m.rowid = f.rowid"
        "  WHERE memory_fts MATCH ? AND m.status IN ('active', 'archived')))"
        " WHERE n <= ? AND part < 3"
    )
    parts: tuple[dict[int, float], dict[int, float], dict[int, float]] = ({}, {}, {})
    for rowid, score, part in conn.execute(sql, (cutoff, match, k)):
        parts[int(part)][int(rowid)] = float(score)
    return parts


def _all(conn: apsw.Connection, sql: str, params: tuple[object, ...] = ()) -> list[Any]:
    rows: list[Any] = conn.execute(sql, params).fetchall()
    return rows


def gather_recall(
    conn: apsw.Connection,
    *,
    query: str,
    query_vector: np.ndarray | None,
    vectors: VectorIndex,
    cutoff: float,
    dump_all: Callable[[int, Sequence[Memory]], bool],
    tuning: RecallTuning = DEFAULT_TUNING,
) -> RecallCandidates:
    """Read recall's candidates. ``cutoff`` is the short-term window's start (Unix seconds); older
    short-term and archived memories join as extras when they are text hits or at least
    ``tuning.extra_similarity`` similar. ``dump_all(long_term_tokens, extras)`` says whether the
    long-term bucket is dumped whole, so only that mode's candidates are read; when it is not, the
    extras are those at least ``tuning.hybrid_extra_similarity`` similar (and the text hits),
    ranked with the rest."""
    vec: dict[int, float] = {}
    if query_vector is not None:
        vec = dict(vectors.search(query_vector, tuning.vector_k, exclude=Bucket.PREFERENCE))

    pref_order = _all(
        conn,
        "SELECT rowid, tokens, pinned, reference_count FROM memories "
        "WHERE status = 'active' AND bucket = 'preference' "
        "ORDER BY pinned DESC, reference_count DESC, updated_at DESC, rowid DESC",
    )
    pref_similarity: dict[int, float] = {}
    if query_vector is not None:
        pref_similarity = vectors.similarities(query_vector, (int(rid) for rid, *_ in pref_order))
    pref_bm25, lt_bm25, st_bm25 = _recall_text_hits(conn, query, cutoff, tuning.bm25_k)
    related: dict[int, float] = {}
    if query_vector is not None:
        # A text hit outside the nearest vectors is scored by its real similarity, not by 0.
        hits = (rid for rid in (*pref_bm25, *lt_bm25, *st_bm25) if rid not in vec)
        vec.update(vectors.similarities(query_vector, hits))
        match = match_strength(vec, {**pref_bm25, **lt_bm25, **st_bm25})
        related = alongside(match, _saved_next_to(conn, alongside_rowids(match, tuning)), vec, tuning)
    near = {**vec, **related}  # who may be a candidate: matches, and what was saved alongside them
    total_tokens = int(
        q.scalar(
            conn,
            "SELECT COALESCE(SUM(tokens), 0) FROM memories INDEXED BY memories_tokens "
            "WHERE status = 'active' AND bucket = 'long_term'",
        )
    )
    # One read for the long-term pool and the extras (rows in the recent window are read below).
    pool_where = (
        "m.bucket != 'preference' AND (m.status = 'archived' OR (m.status = 'active' AND "
        "(m.bucket = 'long_term' OR m.occurred_at < ?)))"
    )
    rows = _rows(conn, set(near) | set(lt_bm25), pool_where, (cutoff,))
    # Older events and notes, and archived memories, in saving order as the pool (ties in rank keep it).
    older = [
        rid
        for rid in sorted(rows)
        if rows[rid].status is MemoryStatus.ARCHIVED or rows[rid].bucket is Bucket.SHORT_TERM
    ]

    def extras_from(similarity: float) -> dict[int, Memory]:
        return {rid: rows[rid] for rid in older if rid in lt_bm25 or near.get(rid, 0.0) >= similarity}

    extras = extras_from(tuning.extra_similarity)

    dump_order: tuple[tuple[int, int], ...] | None = None
    pool: dict[int, Memory] = {}
    newest: frozenset[int] = frozenset()
    if dump_all(total_tokens, tuple(extras.values())):
        dump_order = tuple(
            (int(rid), int(t))
            for rid, t in _all(
                conn,
                "SELECT rowid, tokens FROM memories WHERE status = 'active' AND bucket = 'long_term' "
                "ORDER BY pinned DESC, reference_count DESC, updated_at DESC, rowid DESC",
            )
        )
    else:
        recent = _all(
            conn,
            "SELECT rowid FROM memories WHERE status = 'active' AND bucket = 'long_term' "
            "ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (tuning.recent_k,),
        )
        newest = frozenset(int(rid) for (rid,) in recent)
        extras = extras_from(tuning.hybrid_extra_similarity)
        rows.update(_rows(conn, newest - rows.keys(), pool_where, (cutoff,)))
        pool = {
            rid: rows[rid]
            for rid in sorted(rows)
            if (rows[rid].status is MemoryStatus.ACTIVE and rows[rid].bucket is Bucket.LONG_TERM)
            or rid in extras
        }

    st_where = "m.status = 'active' AND m.bucket = 'short_term' AND m.occurred_at >= ?"
    # Short-term: the newest ``short_term_recent_k`` in the window plus any in-window text or vector match
    # (a match can lift an older one, but no more than that can fit the budget anyway).
    window: dict[int, tuple[int, float]] = {
        int(rid): (int(t), float(at))
        for rid, t, at in _all(
            conn,
            f"SELECT m.rowid, m.tokens, m.occurred_at FROM memories m WHERE {st_where} "
            "ORDER BY m.occurred_at DESC LIMIT ?",
            (cutoff, tuning.short_term_recent_k),
        )
    }
    more = sorted({*st_bm25, *near} - set(window))
    if more:
        marks = ",".join("?" * len(more))
        for rid, t, at in _all(
            conn,
            f"SELECT m.rowid, m.tokens, m.occurred_at FROM memories m NOT INDEXED "
            f"WHERE m.rowid IN ({marks}) AND {st_where}",
            (*more, cutoff),
        ):
            window[int(rid)] = (int(t), float(at))

    per_memory = open_conflicts_per_memory(conn)  # each conflict counted on both its memories
    return RecallCandidates(
        preference_order=tuple((int(rid), int(t)) for rid, t, _, _ in pref_order),
        preference_bm25=pref_bm25,
        vector=vec,
        long_term_bm25=lt_bm25,
        long_term_tokens=total_tokens,
        extras=extras,
        dump_order=dump_order,
        pool=pool,
        short_term_bm25=st_bm25,
        window=window,
        open_conflicts=sum(per_memory.values()) // 2,
        conflicts=per_memory,
        related=related,
        preference_rank={int(rid): (bool(pinned), int(refs)) for rid, _, pinned, refs in pref_order},
        preference_similarity=pref_similarity,
        newest=newest,
    )


def _rows(
    conn: apsw.Connection, rowids: Collection[int], where: str, params: tuple[object, ...]
) -> dict[int, Memory]:
    """The memories among ``rowids`` that satisfy ``where`` (over alias ``m``)."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    # NOT INDEXED: by rowid, one lookup each. Left to itself SQLite may walk a status index over
    # every active memory instead (measured: 1.0 ms against 0.25 ms for 250 rows at 10,000).
    sql = f"SELECT {q.MEMORY_COLUMNS} FROM memories m NOT INDEXED WHERE m.rowid IN ({marks}) AND {where}"
    found = (q.row_from(values) for values in conn.execute(sql, (*sorted(rowids), *params)))
    return {row.rowid: row.memory for row in found}


def _saved_next_to(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, SavedAt]:
    """Platform and times of the active memories among ``rowids``."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    sql = (
        "SELECT rowid, platform, created_at, occurred_at FROM memories NOT INDEXED "
        f"WHERE rowid IN ({marks}) AND status = 'active'"
    )
    return {
        int(rowid): SavedAt(str(platform), float(created), float(occurred))
        for rowid, platform, created, occurred in conn.execute(sql, tuple(rowids))
    }


def read_chosen(
    conn: apsw.Connection, rowids: Sequence[int], known: Mapping[int, Memory] | None = None
) -> Chosen:
    """Full rows with provenance, and their open conflicts, for the memories recall returns. Rows
    already read as candidates in this snapshot (``known``) are not read again, only their provenance."""
    known = known or {}
    memories = {
        rid: row.memory for rid, row in q.fetch_full(conn, [r for r in rowids if r not in known]).items()
    }
    again = q.load_provenance(conn, (q.Row(rid, known[rid]) for rid in rowids if rid in known))
    memories.update((row.rowid, row.memory) for row in again)
    return Chosen(memories, open_conflicts_of(conn, rowids))


def gather_search(
    conn: apsw.Connection,
    *,
    query: str,
    query_vector: np.ndarray | None,
    vectors: VectorIndex,
    include_archived: bool,
    k: int,
) -> SearchCandidates:
    """The best ``k`` text matches and ``k`` nearest vectors among live memories, with their rows.
    ``vector`` holds the similarity of every candidate that has a vector, text hits outside the
    nearest ``k`` included, so a text hit is never scored as if it meant nothing. Call with
    ``vectors`` already synced to this snapshot when ``query_vector`` is given."""
    statuses = "'active', 'archived'" if include_archived else "'active'"
    bm25 = text_hits(conn, query, f"m.status IN ({statuses})", (), k)
    vec: dict[int, float] = {}
    if query_vector is not None:
        vec = dict(vectors.search(query_vector, k))
        vec.update(vectors.similarities(query_vector, (rid for rid in bm25 if rid not in vec)))
    rows = q.fetch_by_rowids(conn, sorted(set(vec) | set(bm25)))
    memories = {rid: row.memory for rid, row in rows.items()}
    # The memory saved right after one that asks may be its answer (rank_search decides).
    after = sorted({rid + 1 for rid, m in memories.items() if asks(m.content)} - memories.keys())
    if after:
        memories.update((rid, row.memory) for rid, row in q.fetch_by_rowids(conn, after).items())
        if query_vector is not None:
            vec.update(vectors.similarities(query_vector, after))
    return SearchCandidates(bm25=bm25, vector=vec, memories=memories)
