"""The recall formulas, held to what docs/adr/0002-recall-scoring.md writes down."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from tallei_desktop.core import recall as r
from tallei_desktop.core.models import Bucket, Memory, MemoryStatus, MemoryType

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _memory(content: str = "x", refs: int = 1, touched_days_ago: float = 0.0) -> Memory:
    t = NOW - timedelta(days=touched_days_ago)
    return Memory(
        id="000000000000",
        content=content,
        type=MemoryType.FACT,
        bucket=Bucket.LONG_TERM,
        platform="claude",
        created_at=t,
        updated_at=t,
        occurred_at=t,
        reference_count=refs,
        last_referenced_at=None,
        pinned=False,
        status=MemoryStatus.ACTIVE,
        superseded_by=None,
        embedded=True,
    )


@pytest.mark.parametrize(("chars", "tokens"), [(0, 0), (1, 1), (4, 1), (5, 2), (4800 * 4, 4800)])
def test_token_estimate_is_ceil_chars_over_four(chars: int, tokens: int) -> None:
    assert r.estimate_tokens("a" * chars) == tokens


def test_activity_formula() -> None:
    m = _memory(refs=4, touched_days_ago=21)
    expected = math.log1p(4) / math.log1p(20) * math.exp(-1)
    assert r.activity(m, NOW) == pytest.approx(expected)
    assert r.activity(_memory(refs=50), NOW) == pytest.approx(1.0)  # saturates
    assert r.activity(_memory(refs=5, touched_days_ago=10), NOW) > r.activity(
        _memory(refs=5, touched_days_ago=60), NOW
    )


def test_activity_counts_the_latest_touch() -> None:
    m = replace(_memory(refs=3, touched_days_ago=100), last_referenced_at=NOW)
    assert r.activity(m, NOW) == pytest.approx(math.log1p(3) / math.log1p(20))


def test_recency_decays_with_21_day_constant_and_clamps_the_future() -> None:
    assert r.recency(NOW, NOW) == 1.0
    assert r.recency(NOW + timedelta(days=3), NOW) == 1.0
    assert r.recency(NOW - timedelta(days=21), NOW) == pytest.approx(math.exp(-1))


def test_hybrid_score_weights() -> None:
    assert r.hybrid_score(vector=0.8, bm25=0.5, activity_=0.2, semantic=True) == pytest.approx(
        0.55 * 0.8 + 0.30 * 0.5 + 0.15 * 0.2
    )
    assert r.hybrid_score(vector=-0.3, bm25=0.0, activity_=0.0, semantic=True) == 0.0  # clipped
    assert r.hybrid_score(vector=0.9, bm25=0.5, activity_=0.2, semantic=False) == pytest.approx(
        0.8 * 0.5 + 0.2 * 0.2
    )


def test_bm25_normalisation_maps_best_hit_to_one() -> None:
    assert r.normalise_bm25({1: -4.0, 2: -1.0, 3: -2.0}) == {1: 1.0, 2: 0.25, 3: 0.5}
    assert r.normalise_bm25({}) == {}


def test_budget_skips_what_does_not_fit_and_keeps_order() -> None:
    costs = [
        (1, r.estimate_tokens("a" * 40)),
        (2, r.estimate_tokens("b" * 400)),
        (3, r.estimate_tokens("c" * 20)),
    ]
    assert r.take_within_budget(costs, 20) == [1, 3]
    assert r.take_within_budget(costs, 200) == [1, 2, 3]
    assert r.take_within_budget(costs, 0) == []
