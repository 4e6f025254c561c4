"""The level the save path's decisions reach on the held-out sets, which no rule or weight was fitted to.

Each pair and list goes through the real save path (``MemoryService.save``, the background round,
the real model) in a fresh encrypted store, as ``bench/eval_heldout.py`` runs it; that script prints
every figure and every pair judged wrongly. The floors sit a little below what was reached, so a
change that makes the decisions worse on memories they were not fitted to fails here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tests.core.test_heldout_sets import LISTS_HEADER, PAIRS_HEADER, load_heldout_lists, load_heldout_pairs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import eval_heldout

#: Reached on this held-out set (the nineteenth) by the pair model's networks
#: (bench/train_pairs.py), measured once: preference updates 26/30 (0.87), fact updates 30/40
#: (0.75), decision updates 6/10; lookalikes retired 1/60; list members retired 0/65; conflicts
#: precision 1.00, recall 0.59, F1 0.74. The networks of 6ca623e, trained before the eighteenth set
#: joined the training, reached 26/30, 32/40, 6/10, 1/60, 0/65, and 1.00, 0.62, 0.77; the previous
#: release's single weighted sum 23/30, 19/40, 0/60, 0/65, and 0.96, 0.33, 0.49
#: (docs/adr/0007-pair-networks.md has each step).
MIN_PREFERENCE_UPDATES = 0.83
MIN_FACT_UPDATES = 0.72
MIN_CONFLICT_PRECISION = 0.95
MIN_CONFLICT_F1 = 0.70
#: One is retired now (the aim is none): two fail.
MOST_LOOKALIKES_RETIRED = 1
#: None is retired now: one fails.
MOST_LIST_MEMBERS_RETIRED = 0


@pytest.fixture(scope="module")
def reached(real_embedder: FastEmbedEmbedder) -> dict[str, Any]:
    judged, per_list = eval_heldout.measure(real_embedder, load_heldout_pairs(), load_heldout_lists())
    return eval_heldout.figures(judged, per_list)


def _share(part: dict[str, int]) -> float:
    return part["k"] / part["n"]


def test_no_distinct_memory_is_retired(reached: dict[str, Any]) -> None:
    """A wrong retirement hides a memory from every assistant and nobody is asked: no side of a
    conflict, no lookalike, and no more list members than now (the aim is none)."""
    assert reached["lookalikes_retired"]["k"] <= MOST_LOOKALIKES_RETIRED, reached["lookalikes_retired"]
    assert reached["list_members_retired"]["k"] <= MOST_LIST_MEMBERS_RETIRED, reached["list_members_retired"]
    assert reached["conflicts"]["conflict_sides_retired"] == 0


def test_updates_from_one_assistant_supersede(reached: dict[str, Any]) -> None:
    updates = reached["updates_superseded"]
    assert _share(updates["preference"]) >= MIN_PREFERENCE_UPDATES, updates
    assert _share(updates["fact"]) >= MIN_FACT_UPDATES, updates


def test_conflicts_across_assistants_are_flagged_precision_first(reached: dict[str, Any]) -> None:
    conflicts = reached["conflicts"]
    assert conflicts["precision"] >= MIN_CONFLICT_PRECISION, conflicts
    assert conflicts["f1"] >= MIN_CONFLICT_F1, conflicts


def test_an_earlier_set_is_judged_when_given(
    model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--pairs`` and ``--lists`` judge another set (an earlier one, to read its mistakes once it trains)."""
    pairs, lists, out = tmp_path / "seen_pairs.tsv", tmp_path / "seen_lists.tsv", tmp_path / "report.json"
    pairs.write_text(
        "\t".join(PAIRS_HEADER)
        + "\nupdate\tplain\tfact\tclaude\tLives in Leeds.\tfact\tclaude\tLives in Bristol.\n"
        + "conflict\tcontradiction\tfact\tclaude\tWorks at Stripe.\tfact\tgemini\tWorks at Adyen.\n"
        + "compatible\tsame-shape\tfact\tclaude\tMaya plays the violin.\tfact\tgemini\tMaya is allergic to peanuts.\n",
        encoding="utf-8",
    )
    lists.write_text(
        "\t".join(LISTS_HEADER)
        + "\nservers\tfact\tcursor\tweb-01 runs Ubuntu 22.04.\nservers\tfact\tcursor\tdb-02 runs Debian 12.\n",
        encoding="utf-8",
    )
    args = ["--pairs", str(pairs), "--lists", str(lists), "--out", str(out), "--model-dir", str(model_dir)]
    assert eval_heldout.main([*args, "--mistakes"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert (report["pairs"], report["lists"], report["files"]) == (3, 1, [pairs.name, lists.name])
    assert [p["second"] for p in report["per_pair"]] == [
        "Lives in Bristol.",
        "Works at Adyen.",
        "Maya is allergic to peanuts.",
    ]
    assert f"3 pairs ({pairs.name}), 1 lists ({lists.name})" in capsys.readouterr().out
