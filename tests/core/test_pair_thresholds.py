"""How bench/train_pairs.py chooses the pair model's thresholds from cross-validated probabilities."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import train_pairs


def _pairs(*groups: tuple[int, float, bool, bool, bool, bool]) -> tuple[np.ndarray, ...]:
    """(count, probability, incompatible, one assistant, background, apart) rows, repeated."""
    rows = [row[1:] for row in groups for _ in range(row[0])]
    p, y, one, background, apart = (np.array([r[i] for r in rows]) for i in range(5))
    return p, y.astype(float), one.astype(bool), background.astype(bool), apart.astype(bool)


#: Pairs as (count, probability, incompatible, one assistant, background, apart).
ASKING = (
    # Written apart (a former held-out set): conflicts at 0.5, a lookalike at 0.45.
    (9, 0.5, True, False, False, True),
    (1, 0.45, False, False, False, True),
    # Written to be hard: lookalikes up to 0.7, which would push the threshold above them.
    (10, 0.7, False, False, False, False),
    (5, 0.8, True, False, False, False),
    # Background: 1 of 200 at 0.6, the rest low.
    (1, 0.6, False, True, True, False),
    (199, 0.05, False, True, True, False),
)


def test_the_ask_threshold_is_judged_on_the_sets_written_apart_and_capped_by_the_background() -> None:
    conflict_at, supersede_at = train_pairs.thresholds(*_pairs(*ASKING))
    # The lowest probability at which the sets written apart are 0.90 precise, and which no more
    # than 2 % of the background reaches.
    assert conflict_at == 0.45
    assert supersede_at >= conflict_at
    # Two more background pairs at 0.6 (3 of 202 reach it, under 2 %): still asked.
    assert train_pairs.thresholds(*_pairs(*ASKING, (2, 0.6, False, True, True, False)))[0] == 0.45
    # Four more (5 of 204, over 2 %): the cap lifts the threshold above them.
    louder = _pairs(*ASKING, (4, 0.6, False, True, True, False))
    assert train_pairs.thresholds(*louder)[0] > 0.6


def test_retiring_may_reach_half_as_much_of_the_background_as_asking() -> None:
    p, y, one, background, apart = _pairs(
        (1, 0.5, True, False, False, True),
        (40, 0.9, True, True, False, False),
        # One assistant's background: 3 of 200 at 0.9, over 1 % and under 2 %.
        (3, 0.9, False, True, True, False),
        (197, 0.05, False, True, True, False),
    )
    conflict_at, supersede_at = train_pairs.thresholds(p, y, one, background, apart)
    assert conflict_at == 0.5
    assert supersede_at > 0.9


def test_the_retire_threshold_is_judged_on_every_written_pair_of_one_assistant() -> None:
    p, y, one, background, apart = _pairs(
        (1, 0.5, True, False, False, True),
        # One assistant: updates at 0.9, two hard lookalikes at 0.85 that a lower threshold would retire.
        (40, 0.9, True, True, False, False),
        (2, 0.85, False, True, False, False),
        (100, 0.05, False, True, True, False),
    )
    conflict_at, supersede_at = train_pairs.thresholds(p, y, one, background, apart)
    assert conflict_at == 0.5
    assert supersede_at == 0.9
