"""The level the save path's decisions reach on the held-out sets, which no rule or weight was fitted to.

Each pair and list goes through the real save path (``MemoryService.save``, the background round,
the real model) in a fresh encrypted store, as ``bench/eval_heldout.py`` runs it; that script prints
every figure and every pair judged wrongly. The floors sit a little below what was reached, so a
change that makes the decisions worse on memories they were not fitted to fails here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tests.core.test_heldout_sets import load_heldout_lists, load_heldout_pairs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import eval_heldout

#: Reached by the pair model (bench/train_pairs.py): preference updates 18/26 (0.69), fact updates
#: 22/38 (0.58); lookalikes retired 0/47; list members retired 0/45; conflicts precision 0.96, recall
#: 0.45, F1 0.62. Before it (rules): 9/26, 2/38, 0/47, 0/45 and precision 0.81, recall 0.25, F1 0.38.
MIN_PREFERENCE_UPDATES = 0.65
MIN_FACT_UPDATES = 0.52
MIN_CONFLICT_PRECISION = 0.90
MIN_CONFLICT_F1 = 0.57


@pytest.fixture(scope="module")
def reached(real_embedder: FastEmbedEmbedder) -> dict[str, Any]:
    judged, per_list = eval_heldout.measure(real_embedder, load_heldout_pairs(), load_heldout_lists())
    return eval_heldout.figures(judged, per_list)


def _share(part: dict[str, int]) -> float:
    return part["k"] / part["n"]


def test_no_distinct_memory_is_retired(reached: dict[str, Any]) -> None:
    """A wrong retirement hides a memory from every assistant and nobody is asked: none at all."""
    assert reached["lookalikes_retired"]["k"] == 0, reached["lookalikes_retired"]
    assert reached["list_members_retired"]["k"] == 0, reached["list_members_retired"]
    assert reached["conflicts"]["conflict_sides_retired"] == 0


def test_updates_from_one_assistant_supersede(reached: dict[str, Any]) -> None:
    updates = reached["updates_superseded"]
    assert _share(updates["preference"]) >= MIN_PREFERENCE_UPDATES, updates
    assert _share(updates["fact"]) >= MIN_FACT_UPDATES, updates


def test_conflicts_across_assistants_are_flagged_precision_first(reached: dict[str, Any]) -> None:
    conflicts = reached["conflicts"]
    assert conflicts["precision"] >= MIN_CONFLICT_PRECISION, conflicts
    assert conflicts["f1"] >= MIN_CONFLICT_F1, conflicts
