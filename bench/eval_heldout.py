"""Lifecycle decisions on the held-out sets, through the real save path and the real model.

    python bench/eval_heldout.py [--out bench/results/heldout.json] [--model-dir DIR] [--mistakes]

Each pair of tests/core/data/heldout_pairs.tsv goes into a fresh encrypted store: the first memory is
saved from its platform and the background work finished, then the second likewise; then the
script reads whether the first was superseded, whether the second was merged into it, and whether a
conflict between them opened. Each list of tests/core/data/heldout_lists.tsv is saved one memory at
a time (finishing after each) into one store, and any member no longer active, or any conflict
opened, counts against it. Prints updates superseded (preference and fact), lookalikes wrongly
retired, conflict precision, recall and F1 (over the pairs saved from two platforms), list members
wrongly retired, and with ``--mistakes`` every pair judged wrongly; writes the figures and the
per-pair outcomes as JSON. A held-out set judges once: its mistakes are listed only when asked, so
measuring a tree does not show them to whoever changes the next one.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from bench_quality import _env_model_dir  # noqa: E402
from common import resolve_model_dir, revision, say, write_report  # noqa: E402

from tallei_desktop.core.embeddings import FastEmbedEmbedder  # noqa: E402
from tallei_desktop.core.models import MemoryStatus, MemoryType  # noqa: E402
from tallei_desktop.core.recall import Budgets  # noqa: E402
from tallei_desktop.core.service import MemoryService  # noqa: E402
from tallei_desktop.core.store.database import Database  # noqa: E402
from tests.core.test_heldout_sets import (  # noqa: E402
    HELDOUT_LISTS,
    HELDOUT_PAIRS,
    HeldoutPair,
    ListMember,
    load_heldout_lists,
    load_heldout_pairs,
)

DEFAULT_OUT = BENCH_DIR / "results" / "heldout.json"
#: A throwaway key: these stores live in a temporary folder for the length of the run.
STORE_KEY = bytes(range(32))
BUDGETS = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)


@dataclass(frozen=True, slots=True)
class Judged:
    pair: HeldoutPair
    first_status: MemoryStatus
    second_status: MemoryStatus
    superseded: bool  # the first memory was superseded by the second
    flagged: bool  # a conflict between the two opened

    @property
    def retired(self) -> bool:
        """Whether either memory is no longer active (superseded, merged, or otherwise hidden)."""
        return self.first_status is not MemoryStatus.ACTIVE or self.second_status is not MemoryStatus.ACTIVE

    @property
    def right(self) -> bool:
        if self.pair.label == "update":
            return self.superseded and not self.flagged
        if self.pair.label == "conflict":
            return self.flagged and not self.retired
        return not self.retired and not self.flagged

    def as_json(self) -> dict[str, Any]:
        p = self.pair
        return {
            "label": p.label,
            "kind": p.kind,
            "type": p.type_a.value,
            "platforms": f"{p.platform_a}->{p.platform_b}",
            "first": p.first,
            "second": p.second,
            "first_status": self.first_status.value,
            "second_status": self.second_status.value,
            "superseded": self.superseded,
            "flagged": self.flagged,
            "right": self.right,
        }


class Stores:
    """Fresh encrypted stores in one temporary folder, all sharing one loaded model."""

    def __init__(self, embedder: FastEmbedEmbedder) -> None:
        self.embedder = embedder
        self.workdir = Path(tempfile.mkdtemp(prefix="tallei-eval-heldout-"))
        self.opened = 0

    def open(self) -> MemoryService:
        self.opened += 1
        db = Database(self.workdir / f"store-{self.opened}.db", STORE_KEY, key_source="throwaway key")
        return MemoryService(db, self.embedder, budgets=BUDGETS)

    def remove(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)


def judge_pair(service: MemoryService, pair: HeldoutPair) -> Judged:
    first = service.save(pair.first, type=pair.type_a, platform=pair.platform_a).id
    service.drain()
    second = service.save(pair.second, type=pair.type_b, platform=pair.platform_b).id
    service.drain()
    a, b = service.get(first), service.get(second)
    flagged = any({c.memory_a.id, c.memory_b.id} == {first, second} for c in service.conflicts())
    superseded = a.status is MemoryStatus.SUPERSEDED and a.superseded_by == second
    return Judged(pair, a.status, b.status, superseded, flagged)


def judge_list(service: MemoryService, name: str, members: Sequence[ListMember]) -> dict[str, Any]:
    ids = []
    for m in members:
        ids.append(service.save(m.memory, type=m.type, platform=m.platform).id)
        service.drain()
    statuses = [service.get(i).status for i in ids]
    flagged = len(service.conflicts())
    return {
        "list": name,
        "members": len(members),
        "retired": [
            {"memory": m.memory, "status": s.value}
            for m, s in zip(members, statuses, strict=True)
            if s is not MemoryStatus.ACTIVE
        ],
        "conflicts_flagged": flagged,
    }


def _count(judged: Sequence[Judged], label: str, mtype: MemoryType | None = None) -> list[Judged]:
    return [j for j in judged if j.pair.label == label and (mtype is None or j.pair.type_a is mtype)]


def figures(judged: Sequence[Judged], lists: Sequence[dict[str, Any]]) -> dict[str, Any]:
    pref = _count(judged, "update", MemoryType.PREFERENCE)
    fact = _count(judged, "update", MemoryType.FACT)
    decision = _count(judged, "update", MemoryType.DECISION)
    lookalikes = _count(judged, "compatible")
    cross = [j for j in judged if j.pair.cross_platform and j.pair.label in ("conflict", "compatible")]
    tp = sum(j.flagged and j.pair.label == "conflict" for j in cross)
    fp = sum(j.flagged and j.pair.label == "compatible" for j in cross)
    fn = sum(not j.flagged and j.pair.label == "conflict" for j in cross)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    conflicts = _count(judged, "conflict")
    return {
        "updates_superseded": {
            "preference": {"k": sum(j.superseded for j in pref), "n": len(pref)},
            "fact": {"k": sum(j.superseded for j in fact), "n": len(fact)},
            "decision": {"k": sum(j.superseded for j in decision), "n": len(decision)},
            "by_kind": {
                kind: {
                    "k": sum(j.superseded for j in pref + fact + decision if j.pair.kind == kind),
                    "n": sum(j.pair.kind == kind for j in pref + fact + decision),
                }
                for kind in ("cue", "plain")
            },
        },
        "lookalikes_retired": {"k": sum(j.retired for j in lookalikes), "n": len(lookalikes)},
        "lookalikes_flagged": {
            "k": sum(j.flagged for j in lookalikes if j.pair.cross_platform),
            "n": sum(j.pair.cross_platform for j in lookalikes),
        },
        "conflicts": {
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "recall_by_kind": {
                kind: {
                    "k": sum(j.flagged for j in conflicts if j.pair.kind == kind),
                    "n": sum(j.pair.kind == kind for j in conflicts),
                }
                for kind in ("negation", "no-shared-words", "contradiction")
            },
            "conflict_sides_retired": sum(j.retired for j in conflicts),
        },
        "list_members_retired": {
            "k": sum(len(x["retired"]) for x in lists),
            "n": sum(x["members"] for x in lists),
        },
        "list_conflicts_flagged": sum(x["conflicts_flagged"] for x in lists),
    }


def render_table(report: dict[str, Any], *, mistakes: bool = False) -> str:
    f = report["figures"]
    u = f["updates_superseded"]
    c = f["conflicts"]

    pairs_file, lists_file = report.get("files", (HELDOUT_PAIRS.name, HELDOUT_LISTS.name))

    def kn(d: dict[str, int]) -> str:
        return f"{d['k']}/{d['n']}"

    out = [
        f"held-out sets: {report['pairs']} pairs ({pairs_file}), {report['lists']} lists ({lists_file})",
        f"  updates superseded        preference {kn(u['preference'])}, fact {kn(u['fact'])}"
        + (f", decision {kn(u['decision'])}" if u.get("decision", {}).get("n") else "")
        + f"  (with a cue word {kn(u['by_kind']['cue'])}, without {kn(u['by_kind']['plain'])})",
        f"  lookalikes wrongly retired {kn(f['lookalikes_retired'])}"
        f"  (cross-platform ones flagged {kn(f['lookalikes_flagged'])})",
        f"  conflicts                 precision {c['precision']:.2f}, recall {c['recall']:.2f}, F1 {c['f1']:.2f}"
        f"  (tp {c['tp']}, fp {c['fp']}, fn {c['fn']})",
        "  conflict recall by kind   " + ", ".join(f"{k} {kn(v)}" for k, v in c["recall_by_kind"].items()),
        f"  list members wrongly retired {kn(f['list_members_retired'])}"
        f"  (conflicts flagged inside lists: {f['list_conflicts_flagged']})",
    ]
    if not mistakes:
        return "\n".join(out)
    out += ["", "judged wrongly (label/kind type platforms: first => second: first, second status; flagged):"]
    for j in report["per_pair"]:
        if not j["right"]:
            out.append(
                f"  {j['label']}/{j['kind']} {j['type']} {j['platforms']}: {j['first']!r} => {j['second']!r}:"
                f" {j['first_status']}, {j['second_status']}; flagged {j['flagged']}"
            )
    for x in report["per_list"]:
        for r in x["retired"]:
            out.append(f"  list {x['list']}: {r['memory']!r} {r['status']}")
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    parser.add_argument(
        "--model-dir",
        type=Path,
        help="the ONNX model folder (default: TALLEI_MODEL_DIR or TALLEI_TEST_MODEL_DIR, "
        "else ../shared/models/all-MiniLM-L6-v2-onnx beside the repository)",
    )
    parser.add_argument(
        "--mistakes", action="store_true", help="list every pair and list member judged wrongly"
    )
    parser.add_argument(
        "--pairs",
        type=Path,
        default=HELDOUT_PAIRS,
        help="pairs to judge instead (an earlier set, pair_train_seen*.tsv, reads its mistakes)",
    )
    parser.add_argument("--lists", type=Path, default=HELDOUT_LISTS, help="lists to judge instead")
    return parser.parse_args(argv)


def measure(
    embedder: FastEmbedEmbedder, pairs: Sequence[HeldoutPair], lists: dict[str, list[ListMember]]
) -> tuple[list[Judged], list[dict[str, Any]]]:
    """Every pair and every list through the real save path, each in a fresh encrypted store."""
    stores = Stores(embedder)
    judged: list[Judged] = []
    per_list: list[dict[str, Any]] = []
    try:
        for pair in pairs:
            service = stores.open()
            try:
                judged.append(judge_pair(service, pair))
            finally:
                service.close()
        for name, members in lists.items():
            service = stores.open()
            try:
                per_list.append(judge_list(service, name, members))
            finally:
                service.close()
    finally:
        stores.remove()
    return judged, per_list


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    model_dir = resolve_model_dir(args.model_dir or _env_model_dir())
    t_run = time.perf_counter()
    pairs = load_heldout_pairs(args.pairs)
    lists = load_heldout_lists(args.lists)
    embedder = FastEmbedEmbedder(model_dir=model_dir, allow_download=False)
    embedder.load()
    say(f"{len(pairs)} pairs and {len(lists)} lists: one fresh encrypted store each, real model")
    judged, per_list = measure(embedder, pairs, lists)
    report: dict[str, Any] = {
        "revision": revision(),
        "pairs": len(pairs),
        "lists": len(lists),
        "figures": figures(judged, per_list),
        "wrong_by_label_kind": dict(Counter(f"{j.pair.label}/{j.pair.kind}" for j in judged if not j.right)),
        "per_pair": [j.as_json() for j in judged],
        "per_list": per_list,
    }
    report["run_s"] = round(time.perf_counter() - t_run, 1)
    report["files"] = [args.pairs.name, args.lists.name]
    return write_report(report, args.out, render_table(report, mistakes=args.mistakes))


if __name__ == "__main__":
    sys.exit(main())
