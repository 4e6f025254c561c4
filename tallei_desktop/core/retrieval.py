"""The store side of recall: which memories each bucket considers, read in one snapshot.

:func:`build_recall` gathers candidates with SQL (bucket scans, BM25, vector k-NN, recency) and hands
them to the pure scoring in :mod:`tallei_desktop.core.recall`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import apsw
import numpy as np

from tallei_desktop.core import recall as r
from tallei_desktop.core.models import Bucket, RecallItem, RecallMode, RecallResult
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.queries import to_dt
from tallei_desktop.core.store.vector_index import VectorIndex

__all__ = ["Budgets", "RecallBuild", "build_recall", "text_hits"]

VECTOR_K = 25
BM25_K = 15
RECENT_K = 5
#: Cosine similarity from which a memory counts as matching the query (MiniLM: related ≈ 0.4–0.6).
MATCH_SIMILARITY = 0.45
#: An older event or an archived memory joins a dump-all only when it matches at least this well.
EXTRA_SIMILARITY = 0.50
#: Short-term order: recency, nudged by how well the memory matches the query.
SHORT_TERM_MATCH_WEIGHT = 0.3
#: The newest in-window memories considered for the short-term bucket (its budget holds far fewer).
SHORT_TERM_RECENT_K = 300


@dataclass(frozen=True, slots=True)
class Budgets:
    preference: int
    long_term: int
    short_term: int
    short_term_days: int


@dataclass(frozen=True, slots=True)
class RecallBuild:
    result: RecallResult
    hit_rowids: tuple[int, ...]  # the returned memories that matched the query: their references grow


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


def build_recall(
    conn: apsw.Connection,
    *,
    query: str,
    query_vector: np.ndarray | None,
    vectors: VectorIndex,
    semantic: bool,
    budgets: Budgets,
    now: datetime,
) -> RecallBuild:
    """Choose each bucket's memories within its budget; read full rows only for what is returned."""
    cutoff = (now - timedelta(days=budgets.short_term_days)).timestamp()
    # The nearest non-preference vectors (preferences have their own bucket).
    vec: dict[int, float] = {}
    if query_vector is not None:
        vec = dict(vectors.search(query_vector, VECTOR_K, exclude=Bucket.PREFERENCE))

    # Preferences: pinned first, then the most referenced, then the newest.
    pref_order: list[Any] = conn.execute(
        "SELECT rowid, tokens FROM memories WHERE status = 'active' AND bucket = 'preference' "
        "ORDER BY pinned DESC, reference_count DESC, updated_at DESC, rowid DESC"
    ).fetchall()
    pref_ids = r.take_within_budget(pref_order, budgets.preference)
    pref_hits = text_hits(conn, query, "m.status = 'active' AND m.bucket = 'preference'", (), BM25_K)

    # Long-term pool: active long-term, plus older events/notes and archived memories that match.
    older = (
        "((m.status = 'active' AND m.bucket = 'short_term' AND m.occurred_at < ?) OR m.status = 'archived')"
    )
    lt_where = f"((m.status = 'active' AND m.bucket = 'long_term') OR ({older} AND m.bucket != 'preference'))"
    bm25_raw = text_hits(conn, query, lt_where, (cutoff,), BM25_K)
    bm25 = r.normalise_bm25(bm25_raw)
    total_tokens = int(
        q.scalar(
            conn,
            "SELECT COALESCE(SUM(tokens), 0) FROM memories INDEXED BY memories_tokens "
            "WHERE status = 'active' AND bucket = 'long_term'",
        )
    )
    extra_ids = set(bm25_raw) | {rid for rid, sim in vec.items() if sim >= EXTRA_SIMILARITY}
    extras = {
        rid: row
        for rid, row in q.fetch_by_rowids(conn, sorted(extra_ids)).items()
        if row.memory.status == "archived"
        or (row.memory.bucket is Bucket.SHORT_TERM and row.memory.occurred_at.timestamp() < cutoff)
    }
    extra_tokens = sum(r.estimate_tokens(row.memory.content) for row in extras.values())

    def score(row: q.Row) -> float:
        return r.hybrid_score(
            vector=vec.get(row.rowid, 0.0),
            bm25=bm25.get(row.rowid, 0.0),
            activity_=r.activity(row.memory, now),
            semantic=semantic,
        )

    scores: dict[int, float | None] = {}
    if total_tokens + extra_tokens <= budgets.long_term:
        mode = RecallMode.DUMP_ALL
        dump: list[Any] = conn.execute(
            "SELECT rowid, tokens FROM memories WHERE status = 'active' AND bucket = 'long_term' "
            "ORDER BY pinned DESC, reference_count DESC, updated_at DESC, rowid DESC"
        ).fetchall()
        ranked_extras = sorted(extras.values(), key=score, reverse=True)
        scores.update({row.rowid: round(score(row), 4) for row in ranked_extras})
        lt_order = [(int(rid), int(t)) for rid, t in dump]
        lt_order += [(row.rowid, r.estimate_tokens(row.memory.content)) for row in ranked_extras]
    else:
        mode = RecallMode.HYBRID
        recent: list[Any] = conn.execute(
            "SELECT rowid FROM memories WHERE status = 'active' AND bucket = 'long_term' "
            "ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (RECENT_K,),
        ).fetchall()
        pool_ids = set(vec) | set(bm25_raw) | {int(rid) for (rid,) in recent}
        pool = [
            row
            for row in q.fetch_by_rowids(conn, sorted(pool_ids)).values()
            if (row.memory.status == "active" and row.memory.bucket is Bucket.LONG_TERM)
            or row.rowid in extras
        ]
        scores.update({row.rowid: round(score(row), 4) for row in pool})
        ranked = sorted(pool, key=lambda row: (row.memory.pinned, scores[row.rowid]), reverse=True)
        lt_order = [(row.rowid, r.estimate_tokens(row.memory.content)) for row in ranked]
    lt_ids = r.take_within_budget(lt_order, budgets.long_term)

    # Short-term: the recent window, newest first with a decay penalty, nudged by matching the query.
    # Candidates: the newest SHORT_TERM_RECENT_K plus any in-window text or vector match (a match can
    # lift an older one, but no more than that can fit the budget anyway).
    st_where = "m.status = 'active' AND m.bucket = 'short_term' AND m.occurred_at >= ?"
    st_raw = text_hits(conn, query, st_where, (cutoff,), BM25_K)
    st_bm25 = r.normalise_bm25(st_raw)
    window: dict[int, tuple[int, float]] = {
        int(rid): (int(t), float(at))
        for rid, t, at in conn.execute(
            f"SELECT m.rowid, m.tokens, m.occurred_at FROM memories m WHERE {st_where} "
            "ORDER BY m.occurred_at DESC LIMIT ?",
            (cutoff, SHORT_TERM_RECENT_K),
        )
    }
    more = sorted({*st_raw, *vec} - set(window))
    if more:
        marks = ",".join("?" * len(more))
        for rid, t, at in conn.execute(
            f"SELECT m.rowid, m.tokens, m.occurred_at FROM memories m WHERE m.rowid IN ({marks}) AND {st_where}",
            (*more, cutoff),
        ):
            window[int(rid)] = (int(t), float(at))
    for rid, (_, at) in window.items():
        match = max(st_bm25.get(rid, 0.0), vec.get(rid, 0.0))
        scores[rid] = round(r.recency(to_dt(at), now) + SHORT_TERM_MATCH_WEIGHT * match, 4)
    st_ranked = sorted(window, key=lambda rid: (scores[rid] or 0.0, rid), reverse=True)
    st_ids = r.take_within_budget(((rid, window[rid][0]) for rid in st_ranked), budgets.short_term)

    # Full rows, provenance and open conflicts, only for what is returned.
    chosen = [*pref_ids, *lt_ids, *st_ids]
    rows = q.fetch_full(conn, chosen)
    conflicts = _open_conflicts(conn, chosen)

    def items(ids: list[int], scored: bool) -> tuple[RecallItem, ...]:
        return tuple(
            RecallItem(
                rows[rid].memory,
                scores.get(rid) if scored else None,
                tuple(cid for cid, _ in conflicts.get(rows[rid].memory.id, ())),
            )
            for rid in ids
        )

    buckets = (items(pref_ids, False), items(lt_ids, True), items(st_ids, True))
    per_memory = {(mid, cid): other for mid, pairs in conflicts.items() for cid, other in pairs}
    text = r.render(
        query=query,
        buckets=buckets,
        mode=mode,
        semantic=semantic,
        short_term_days=budgets.short_term_days,
        conflicts=per_memory,
    )
    open_conflicts = int(q.scalar(conn, "SELECT count(*) FROM conflicts WHERE status = 'open'"))

    matched = (
        set(pref_hits)
        | set(bm25_raw)
        | set(st_raw)
        | {rid for rid, s in vec.items() if s >= MATCH_SIMILARITY}
    )
    hits = tuple(rid for rid in chosen if rid in matched)
    result = RecallResult(
        query=query,
        preferences=buckets[0],
        long_term=buckets[1],
        short_term=buckets[2],
        long_term_mode=mode,
        semantic_search=semantic,
        text=text,
        open_conflicts=open_conflicts,
    )
    return RecallBuild(result, hits)


def _open_conflicts(conn: apsw.Connection, rowids: list[int]) -> dict[str, list[tuple[str, tuple[str, str]]]]:
    """memory id -> [(conflict id, (other memory id, other platform))] for open conflicts."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    sql = (
        "SELECT c.id, a.id, a.platform, b.id, b.platform FROM conflicts c "
        "JOIN memories a ON a.rowid = c.a_rowid JOIN memories b ON b.rowid = c.b_rowid "
        f"WHERE c.status = 'open' AND (c.a_rowid IN ({marks}) OR c.b_rowid IN ({marks}))"
    )
    out: dict[str, list[tuple[str, tuple[str, str]]]] = {}
    for cid, a_id, a_pf, b_id, b_pf in conn.execute(sql, (*rowids, *rowids)):
        out.setdefault(str(a_id), []).append((str(cid), (str(b_id), str(b_pf))))
        out.setdefault(str(b_id), []).append((str(cid), (str(a_id), str(a_pf))))
    return out
