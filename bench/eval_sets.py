"""Classification and conflict detection measured on the labelled sets in tests/core/data/.

    python bench/eval_sets.py [--out bench/results/eval_sets.json] [--model-dir DIR]

Prints, for the tuned set (classify_labelled.tsv) and the held-out set (classify_heldout.tsv), the
accuracy, each type's precision and recall, and the confusion matrix; then conflict detection on
conflict_pairs.tsv through the real lifecycle (each pair saved from its two platforms into a fresh
encrypted store, the background round run with the real model): precision, recall and F1 overall
and per memory type, with every miss and false alarm listed. Writes the figures as JSON.
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
from tallei_desktop.core.models import MemoryType  # noqa: E402
from tallei_desktop.core.recall import Budgets  # noqa: E402
from tallei_desktop.core.service import MemoryService  # noqa: E402
from tallei_desktop.core.store.database import Database  # noqa: E402
from tallei_desktop.core.type_model import load_model  # noqa: E402
from tests.core.test_quality_sets import (  # noqa: E402
    CONFLICT_PAIRS,
    HELDOUT_SET,
    TUNED_SET,
    PairOutcome,
    accuracy,
    detection_scores,
    load_labelled,
    load_pairs,
    measure_pairs,
    predict,
)

DEFAULT_OUT = BENCH_DIR / "results" / "eval_sets.json"
#: A throwaway key: these stores live in a temporary folder for the length of the run.
STORE_KEY = bytes(range(32))
BUDGETS = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)


def classification(path: Path) -> dict[str, Any]:
    predictions = predict(load_labelled(path))
    counts = Counter((expected, got) for expected, got, _ in predictions)
    per_type = {}
    for t in MemoryType:
        truth = sum(n for (e, _), n in counts.items() if e is t)
        said = sum(n for (_, g), n in counts.items() if g is t)
        per_type[t.value] = {
            "n": truth,
            "precision": round(counts[(t, t)] / said, 4) if said else 0.0,
            "recall": round(counts[(t, t)] / truth, 4) if truth else 0.0,
        }
    return {
        "file": path.name,
        "sentences": len(predictions),
        "accuracy": round(accuracy(predictions), 4),
        "per_type": per_type,
        "confusion": {e.value: {g.value: counts[(e, g)] for g in MemoryType} for e in MemoryType},
        "misclassified": [
            {"expected": e.value, "got": g.value, "sentence": s} for e, g, s in predictions if e is not g
        ],
    }


def refined_accuracy(path: Path, embedder: FastEmbedEmbedder) -> float:
    """Accuracy of the type the background worker settles on: n-gram and embedding heads together."""
    labelled = load_labelled(path)
    model = load_model()
    vectors = embedder.embed([s for _, s in labelled])
    hits = sum(model.classify_combined(s, v) is t for (t, s), v in zip(labelled, vectors, strict=True))
    return round(hits / len(labelled), 4)


def conflicts(model_dir: Path) -> dict[str, Any]:
    pairs = load_pairs(CONFLICT_PAIRS)
    embedder = FastEmbedEmbedder(model_dir=model_dir, allow_download=False)
    embedder.load()
    workdir = Path(tempfile.mkdtemp(prefix="tallei-eval-sets-"))
    try:
        outcomes = measure_pairs(
            pairs,
            lambda i: MemoryService(
                Database(workdir / f"pair-{i}.db", STORE_KEY, key_source="throwaway key"),
                embedder,
                budgets=BUDGETS,
            ),
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    by_type: dict[str, list[PairOutcome]] = {}
    for o in outcomes:
        by_type.setdefault(o.pair.type_a.value, []).append(o)

    def rounded(scores: dict[str, float]) -> dict[str, float]:
        return {k: round(v, 4) for k, v in scores.items()}

    return {
        "file": CONFLICT_PAIRS.name,
        "pairs": len(pairs),
        "conflicting": sum(p.conflicting for p in pairs),
        "overall": rounded(detection_scores(outcomes)),
        "by_type": {t: {"pairs": len(os), **rounded(detection_scores(os))} for t, os in by_type.items()},
        "second_status": dict(
            Counter(
                f"{'conflict' if o.pair.conflicting else 'compatible'}:{o.second_status}" for o in outcomes
            )
        ),
        "errors": [
            {
                "label": "conflict" if o.pair.conflicting else "compatible",
                "flagged": o.flagged,
                "type": o.pair.type_a.value,
                "first": o.pair.first,
                "second": o.pair.second,
                "second_status": str(o.second_status),
            }
            for o in outcomes
            if o.flagged is not o.pair.conflicting
        ],
    }


def render_table(report: dict[str, Any]) -> str:
    out = []
    types = [t.value for t in MemoryType]
    for name in ("tuned", "heldout"):
        c = report["classification"][name]
        out.append(
            f"classification, {name} set ({c['file']}, {c['sentences']} sentences): accuracy {c['accuracy']:.1%}"
            f" at save time, {c['refined_accuracy']:.1%} refined with the embedding"
        )
        out.append(
            "expected \\ got".ljust(16) + "".join(t[:6].rjust(8) for t in types) + "  recall  precision"
        )
        for e in types:
            row = c["confusion"][e]
            pt = c["per_type"][e]
            out.append(
                e.ljust(16)
                + "".join(str(row[g]).rjust(8) for g in types)
                + f"  {pt['recall']:6.1%}  {pt['precision']:9.1%}"
            )
        out.append("")
    k = report["conflicts"]
    o = k["overall"]
    out.append(
        f"conflict detection ({k['pairs']} pairs, {k['conflicting']} conflicting): precision {o['precision']:.1%}, "
        f"recall {o['recall']:.1%}, F1 {o['f1']:.3f} (tp {o['tp']:.0f}, fp {o['fp']:.0f}, fn {o['fn']:.0f})"
    )
    for t, s in k["by_type"].items():
        out.append(
            f"  {t:<11} {s['pairs']:>3.0f} pairs: precision {s['precision']:.1%}, recall {s['recall']:.1%}, F1 {s['f1']:.3f}"
        )
    out.append(f"  what became of the second memory: {k['second_status']}")
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
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    model_dir = resolve_model_dir(args.model_dir or _env_model_dir())
    t_run = time.perf_counter()
    report: dict[str, Any] = {
        "revision": revision(),
        "classification": {"tuned": classification(TUNED_SET), "heldout": classification(HELDOUT_SET)},
    }
    embedder = FastEmbedEmbedder(model_dir=model_dir, allow_download=False)
    embedder.load()
    for name, path in (("tuned", TUNED_SET), ("heldout", HELDOUT_SET)):
        report["classification"][name]["refined_accuracy"] = refined_accuracy(path, embedder)
    say("conflict pairs: one fresh store per pair, real model")
    report["conflicts"] = conflicts(model_dir)
    report["run_s"] = round(time.perf_counter() - t_run, 1)
    return write_report(report, args.out, render_table(report))


if __name__ == "__main__":
    sys.exit(main())
