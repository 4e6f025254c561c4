"""The in-process vector index follows every change to the store's vectors, from any connection."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import apsw
import numpy as np
import pytest

from tallei_desktop.core.models import Bucket, Memory
from tallei_desktop.core.recall import DEFAULT_TUNING, Budgets, RecallCandidates, RecallTuning
from tallei_desktop.core.recall.rank import plan_recall, rank_search
from tallei_desktop.core.store import gather as store_gather
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store.database import Database
from tallei_desktop.core.store.gather import gather_search
from tallei_desktop.core.store.vector_index import LOG_KEEP, VectorIndex, trim_log
from tests.core.conftest import KEY


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    return v / np.linalg.norm(v)


def _insert(
    db: Database,
    rowid: int,
    seed: int,
    bucket: Bucket = Bucket.LONG_TERM,
    *,
    content: str = "x",
    vector: np.ndarray | None = None,
    at: float = 0.0,
) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO memories (rowid, id, content, norm_hash, type, bucket, platform, created_at, updated_at,"
            " occurred_at) VALUES (?, ?, ?, ?, 'fact', ?, 'p', ?, ?, ?)",
            (rowid, f"{rowid:012x}", content, f"h{rowid}", str(bucket), at, at, at),
        )
        q.upsert_vector(conn, rowid, _unit(seed) if vector is None else vector, bucket)


def _synced(db: Database, index: VectorIndex) -> VectorIndex:
    with db.read() as conn:
        index.sync(conn)
    return index


def test_index_matches_vec0_knn_and_follows_other_connections(tmp_path: Path) -> None:
    writer = Database(tmp_path / "t.db", KEY, key_source="k")
    reader = Database(tmp_path / "t.db", KEY, key_source="k")  # a second "process"
    try:
        for i in range(1, 41):
            _insert(writer, i, i, Bucket.PREFERENCE if i % 4 == 0 else Bucket.LONG_TERM)
        index = _synced(reader, VectorIndex())
        assert len(index) == 40
        query = _unit(7)
        with reader.read() as conn:
            expected = q.nearest(conn, query, 5)
        got = index.search(query, 5)
        assert [r for r, _ in got] == [r for r, _ in expected]
        assert np.allclose([s for _, s in got], [s for _, s in expected], atol=1e-5)

        assert all(r % 4 != 0 for r, _ in index.search(query, 40, exclude=Bucket.PREFERENCE))
        assert all(r % 4 == 0 for r, _ in index.search(query, 40, bucket=Bucket.PREFERENCE))

        with writer.write() as conn:
            q.drop_vector(conn, 7)
            q.set_vector_bucket(conn, 8, Bucket.LONG_TERM)
        _insert(writer, 41, 7)  # same direction as the dropped one
        _synced(reader, index)
        top = index.search(query, 1)
        assert top[0][0] == 41 and top[0][1] > 0.999
        assert 7 not in {r for r, _ in index.search(query, 100)}
        assert 8 in {r for r, _ in index.search(query, 100, exclude=Bucket.PREFERENCE)}
    finally:
        writer.close()
        reader.close()


def test_index_reloads_when_the_log_was_trimmed_past_it(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    try:
        _insert(db, 1, 1)
        index = _synced(db, VectorIndex())
        with db.write() as conn:
            for _ in range(LOG_KEEP + 5):
                q.set_vector_bucket(conn, 1, Bucket.LONG_TERM)
            q.drop_vector(conn, 1)
            trim_log(conn)
        _insert(db, 2, 2)
        _synced(db, index)
        assert [r for r, _ in index.search(_unit(2), 10)] == [2]
    finally:
        db.close()


def test_similarities_are_the_cosines_of_the_rowids_that_have_a_vector(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    try:
        for i in range(1, 6):
            _insert(db, i, i)
        with db.write() as conn:
            q.drop_vector(conn, 3)
        index = _synced(db, VectorIndex())
        query = _unit(9)
        got = index.similarities(query, [1, 3, 5, 99])
        assert set(got) == {1, 5}  # 3 lost its vector, 99 never had one
        for rowid in (1, 5):
            assert got[rowid] == pytest.approx(float(_unit(rowid) @ query), abs=1e-5)
        assert index.similarities(query, []) == {}
    finally:
        db.close()


def _towards(query: np.ndarray, cosine: float, seed: int) -> np.ndarray:
    """A unit vector whose cosine with the unit vector ``query`` is ``cosine``."""
    other = _unit(seed)
    other -= (other @ query) * query
    other /= np.linalg.norm(other)
    return (cosine * query + np.sqrt(1 - cosine**2) * other).astype(np.float32)


def _two_text_hits_beyond_three_nearer(db: Database) -> tuple[np.ndarray, VectorIndex]:
    """Two equal text hits for "heron": 1 means nothing like the query, 2 means much the same; three
    memories without the word are nearer still, so with k = 3 neither text hit is among the nearest.
    They were saved an hour apart: none was saved alongside another."""
    query = _unit(100)
    _insert(db, 1, 0, content="the heron nests by the lake", vector=_towards(query, 0.05, 1), at=3600)
    _insert(db, 2, 0, content="the heron nests by the pond", vector=_towards(query, 0.6, 2), at=7200)
    for rowid in (3, 4, 5):
        vector = _towards(query, 0.8, rowid)
        _insert(db, rowid, 0, content=f"wading birds {rowid}", vector=vector, at=3600.0 * (rowid + 1))
    return query, _synced(db, VectorIndex())


def _gather_recall(
    conn: apsw.Connection,
    text: str,
    query: np.ndarray,
    index: VectorIndex,
    tuning: RecallTuning = DEFAULT_TUNING,
) -> RecallCandidates:
    """Recall's candidates in hybrid mode, everything long-term (no recent window)."""
    return store_gather.gather_recall(
        conn,
        query=text,
        query_vector=query,
        vectors=index,
        cutoff=0.0,
        dump_all=lambda tokens, extras: False,
        tuning=tuning,
    )


def test_search_scores_a_text_hit_outside_the_nearest_k_by_its_real_similarity(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    try:
        query, index = _two_text_hits_beyond_three_nearer(db)
        with db.read() as conn:
            found = gather_search(
                conn, query="heron", query_vector=query, vectors=index, include_archived=False, k=3
            )
        assert set(found.bm25) == {1, 2} and found.bm25[1] == pytest.approx(found.bm25[2])
        assert found.vector[2] == pytest.approx(0.6, abs=1e-5)
        assert found.vector[1] == pytest.approx(0.05, abs=1e-5)
        ranked = [rowid for rowid, _ in rank_search(found, semantic=True, limit=5)]
        assert ranked.index(2) < ranked.index(1)
    finally:
        db.close()


def test_recall_scores_a_text_hit_outside_the_nearest_k_by_its_real_similarity(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    try:
        query, index = _two_text_hits_beyond_three_nearer(db)
        with db.read() as conn:
            found = _gather_recall(conn, "heron", query, index, RecallTuning(vector_k=3))
        assert set(found.long_term_bm25) == {1, 2}
        assert found.vector[2] == pytest.approx(0.6, abs=1e-5)
        assert found.vector[1] == pytest.approx(0.05, abs=1e-5)
        budgets = Budgets(preference=100, long_term=100, short_term=100, short_term_days=60, line_tokens=0)
        plan = plan_recall(found, budgets=budgets, now=datetime.now(UTC), semantic=True)
        assert plan.long_term.index(2) < plan.long_term.index(1)
        assert plan.scores[2] > plan.scores[1]
    finally:
        db.close()


def test_recall_gathers_what_was_saved_alongside_its_best_matches(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    try:
        query = _unit(200)
        # Saved one after another by one assistant at the same moment (see _insert): 3 matches,
        # 2 and 4 on either side of it mean little on their own.
        for rowid, cosine in ((1, 0.1), (2, 0.05), (3, 0.9), (4, 0.02), (5, 0.1)):
            _insert(db, rowid, 0, content=f"memory {rowid}", vector=_towards(query, cosine, rowid))
        index = _synced(db, VectorIndex())
        with db.write() as conn:
            conn.execute("UPDATE memories SET status = 'archived' WHERE rowid = 2")
        with db.read() as conn:
            index.sync(conn)
            found = _gather_recall(conn, "nothing in common", query, index)
        # 4 ranks with a share of 3's similarity, and 5 through it with the same share; 2 is no
        # longer active, so it takes none, and 1, two before 3, is not reached through it.
        lent = DEFAULT_TUNING.alongside_share * 0.9
        assert found.related == {4: pytest.approx(lent, abs=1e-5), 5: pytest.approx(lent, abs=1e-5)}
        assert 4 in found.pool and found.vector[4] == pytest.approx(0.02, abs=1e-5)
    finally:
        db.close()


def test_older_events_that_match_weakly_are_ranked_in_hybrid_recall_but_do_not_decide_dump_all(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "t.db", KEY, key_source="k")
    try:
        query = _unit(300)
        # Saved an hour apart (none alongside another), all before the recent window begins.
        older = {1: 0.35, 2: 0.55, 3: 0.2}
        for rowid, cosine in older.items():
            vector = _towards(query, cosine, rowid)
            _insert(
                db, rowid, 0, Bucket.SHORT_TERM, content=f"event {rowid}", vector=vector, at=3600.0 * rowid
            )
        _insert(db, 10, 0, content="a fact", vector=_towards(query, 0.9, 10), at=36_000.0)
        index = _synced(db, VectorIndex())
        asked: list[set[int]] = []

        def gather(dump: bool) -> RecallCandidates:
            def dump_all(tokens: int, extras: Sequence[Memory]) -> bool:
                asked.append({int(m.content.split()[-1]) for m in extras})
                return dump

            with db.read() as conn:
                return store_gather.gather_recall(
                    conn,
                    query="nothing in common",
                    query_vector=query,
                    vectors=index,
                    cutoff=1e9,
                    dump_all=dump_all,
                )

        hybrid = gather(dump=False)
        # Whether to dump the bucket whole is decided on the strong matches only...
        assert asked == [{2}]
        # ...while the hybrid ranking takes the weaker one too; what matches less stays out.
        assert set(hybrid.extras) == {1, 2} and {1, 2, 10} <= set(hybrid.pool) and 3 not in hybrid.pool
        assert set(gather(dump=True).extras) == {2}
    finally:
        db.close()
