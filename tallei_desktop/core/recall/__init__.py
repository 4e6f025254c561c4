"""Recall and search: what an assistant is given for a question, in three steps.

1. **gather** (:mod:`tallei_desktop.core.store.gather`, in the store as it holds the SQL): read every
   candidate in one snapshot into a frozen :class:`RecallCandidates` / :class:`SearchCandidates`.
2. **rank** (:mod:`.rank`, pure): :func:`~.rank.plan_recall` decides which memories each bucket
   returns within its budget; :func:`~.rank.rank_search` orders search hits.
3. **render** (:mod:`.block`, pure): :func:`~.block.assemble_recall` writes the context block.

:mod:`.pipeline` joins the three inside one read transaction (``build_recall``, ``build_search``);
:mod:`.tuning` holds every ranking constant in one :class:`RecallTuning` value; :mod:`.values` the
values passed between the steps. How it works and how it is measured: docs/recall.md.

The pipeline is not imported here: it reads the store, whose conflict reads import
:class:`OpenConflict` from this package.
"""

from __future__ import annotations

from tallei_desktop.core.recall.block import CONFIRMED_LEGEND, estimate_tokens, items_cost
from tallei_desktop.core.recall.tuning import DEFAULT_TUNING, RecallTuning
from tallei_desktop.core.recall.values import (
    Budgets,
    Chosen,
    OpenConflict,
    RecallBuild,
    RecallCandidates,
    RecallPlan,
    SavedAt,
    SearchCandidates,
)

__all__ = [
    "CONFIRMED_LEGEND",
    "DEFAULT_TUNING",
    "Budgets",
    "Chosen",
    "OpenConflict",
    "RecallBuild",
    "RecallCandidates",
    "RecallPlan",
    "RecallTuning",
    "SavedAt",
    "SearchCandidates",
    "estimate_tokens",
    "items_cost",
]
