"""Recall and search, end to end: gather from the store in one snapshot, rank, render.

The reads live in :mod:`tallei_desktop.core.store.gather`, the ranking in :mod:`.rank`, the
rendering in :mod:`.block`. Call these inside one read transaction.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

import numpy as np

from tallei_desktop.core.models import Bucket, MemoryType
from tallei_desktop.core.recall.block import assemble_recall
from tallei_desktop.core.recall.rank import long_term_fits, plan_recall, rank_search
from tallei_desktop.core.recall.tuning import DEFAULT_TUNING, RecallTuning
from tallei_desktop.core.recall.values import Budgets, RecallBuild
from tallei_desktop.core.store import Connection
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.gather import gather_recall, gather_search, read_chosen, text_hits
from tallei_desktop.core.store.vector_index import VectorIndex

__all__ = ["Budgets", "RecallBuild", "build_recall", "build_search", "text_hits"]


def build_recall(
    conn: Connection,
    *,
    query: str,
    query_vector: np.ndarray | None,
    vectors: VectorIndex,
    semantic: bool,
    budgets: Budgets,
    now: datetime,
    tuning: RecallTuning = DEFAULT_TUNING,
) -> RecallBuild:
    """Choose each bucket's memories within its budget; read full rows only for what is returned."""
    candidates = gather_recall(
        conn,
        query=query,
        query_vector=query_vector,
        vectors=vectors,
        cutoff=(now - timedelta(days=budgets.short_term_days)).timestamp(),
        tuning=tuning,
        dump_all=lambda tokens, extras: long_term_fits(tokens, extras, budgets.long_term),
    )
    plan = plan_recall(candidates, budgets=budgets, now=now, semantic=semantic, tuning=tuning)
    return assemble_recall(
        plan,
        read_chosen(conn, plan.chosen, {**candidates.pool, **candidates.extras}),
        query=query,
        semantic=semantic,
        short_term_days=budgets.short_term_days,
        open_conflicts=candidates.open_conflicts,
        max_tokens=budgets.total,
    )


def build_search(
    conn: Connection,
    *,
    query: str,
    query_vector: np.ndarray | None,
    vectors: VectorIndex,
    limit: int,
    types: Collection[MemoryType] | None,
    buckets: Collection[Bucket] | None,
    include_archived: bool,
    tuning: RecallTuning = DEFAULT_TUNING,
) -> list[tuple[q.Row, float]]:
    """The best ``limit`` search hits with provenance, best first, and their scores."""
    candidates = gather_search(
        conn,
        query=query,
        query_vector=query_vector,
        vectors=vectors,
        include_archived=include_archived,
        k=max(limit * 10, 100),
    )
    ranked = rank_search(
        candidates,
        semantic=query_vector is not None,
        limit=limit,
        types=types,
        buckets=buckets,
        include_archived=include_archived,
        tuning=tuning,
    )
    rows = q.load_provenance(conn, (q.Row(rid, candidates.memories[rid]) for rid, _ in ranked))
    return [(row, score) for row, (_, score) in zip(rows, ranked, strict=True)]
