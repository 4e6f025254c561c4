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
    conflict_at, supersede_at, _ = train_pairs.thresholds(*_pairs(*ASKING))
    # The lowest probability at which the sets written apart are 0.90 precise, and which no more
    # than 1 % of the background reaches.
    assert conflict_at == 0.45
    assert supersede_at >= conflict_at
    # Two more background pairs at 0.6 (3 of 202 reach it, more than 1 %): the cap lifts the
    # threshold above them.
    louder = _pairs(*ASKING, (2, 0.6, False, True, True, False))
    assert train_pairs.thresholds(*louder)[0] > 0.6


def test_the_retire_threshold_is_judged_on_every_written_pair_of_one_assistant() -> None:
    p, y, one, background, apart = _pairs(
        (1, 0.5, True, False, False, True),
        # One assistant: updates at 0.9, two hard lookalikes at 0.85 that a lower threshold would retire.
        (40, 0.9, True, True, False, False),
        (2, 0.85, False, True, False, False),
        (100, 0.05, False, True, True, False),
    )
    conflict_at, supersede_at, _ = train_pairs.thresholds(p, y, one, background, apart)
    assert conflict_at == 0.5
    assert supersede_at == 0.9


def test_preferences_and_facts_each_get_the_retire_threshold_their_own_pairs_need() -> None:
    # (count, probability, incompatible, one assistant, background, apart), then whether a preference.
    groups = (
        (1, 0.5, True, False, False, True, False),
        # Facts: updates at 0.9 and two lookalikes (other hosts) at 0.85.
        (40, 0.9, True, True, False, False, False),
        (2, 0.85, False, True, False, False, False),
        # Preferences: changes of taste at 0.7, and no lookalike.
        (40, 0.7, True, True, False, False, True),
        (100, 0.05, False, True, True, False, False),
    )
    rows = [g for g in groups for _ in range(g[0])]
    p, y, one, background, apart, preference = (np.array([r[i] for r in rows]) for i in range(1, 7))
    mask = (one.astype(bool), background.astype(bool), apart.astype(bool))
    conflict_at, supersede_at, supersede_preference_at = train_pairs.thresholds(
        p, y.astype(float), *mask, preference.astype(bool)
    )
    assert (conflict_at, supersede_at, supersede_preference_at) == (0.5, 0.9, 0.7)
    # Judged together, the facts' lookalikes set the preferences' threshold too.
    together = train_pairs.thresholds(p, y.astype(float), *mask)
    assert together[1] == together[2] == 0.9


def test_every_neighbour_of_a_save_trains_but_the_cap_is_judged_on_the_nearest_alike_pairs() -> None:
    p, y, one, background, apart = _pairs(
        *ASKING,
        # Every neighbour a store compares: 20 of 200 reach 0.6, ten times the cap's share.
        (20, 0.6, False, True, True, False),
        (180, 0.05, False, True, True, False),
    )
    capped = np.ones(len(p), dtype=bool)
    capped[-200:] = False
    # Counted in the cap, they would lift the ask threshold above them; left out, it stays.
    assert train_pairs.thresholds(p, y, one, background, apart)[0] > 0.6
    assert train_pairs.thresholds(p, y, one, background, apart, None, capped)[0] == 0.45
