"""What each ranking rule of recall and search is worth, on the LoCoMo development half.

    python bench/ablate_recall.py [--format dated|plain|sentences ...] [--conversations N]
                                  [--limit-questions N] [--out bench/results/ablation.json]

For each format it builds the stores once (one per conversation, and one holding every
conversation, as ``bench_quality.py --merged`` does), then asks every question with the program's
:data:`~tallei_desktop.core.recall.DEFAULT_TUNING` and with each variant below, which turns one
rule (one group of :class:`~tallei_desktop.core.recall.RecallTuning` fields) off or to its plainest
form. A variant is asked only of the part it changes (recall's block or search). It prints, per
format and store kind, each variant's figures and their difference from the defaults, and writes
them to the JSON file and a Markdown table beside it (``ablation.md``).

A rule is worth keeping when turning it off costs on the per-conversation stores AND on the merged
one; one that pays only per conversation fits those five small stores, not memories in general.
The variants never search for better values: the point is to see what each constant pays, not to
fit new ones to this data.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from bench_quality import PARTS, add_common_args, aggregate, ask, load, open_stores, table  # noqa: E402
from common import revision, say, write_report  # noqa: E402
from locomo import FORMATS  # noqa: E402

from tallei_desktop.core.recall import DEFAULT_TUNING, RecallTuning  # noqa: E402

DEFAULT_OUT = BENCH_DIR / "results" / "ablation.json"


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    #: What the variant turns off, in a few words.
    what: str
    tuning: RecallTuning
    #: Which of recall and search it changes (the other is not asked again).
    parts: frozenset[str]


def _off(**fields: Any) -> RecallTuning:
    return replace(DEFAULT_TUNING, **fields)


RECALL = frozenset({"recall"})
SEARCH = frozenset({"search"})

VARIANTS: tuple[Variant, ...] = (
    Variant(
        "alongside off", "no memory ranks with a match saved next to it", _off(alongside_seeds=0), RECALL
    ),
    Variant("alongside next only", "only the very next save, not four", _off(alongside_reach=1), RECALL),
    Variant(
        "hybrid extras at 0.50",
        "older events join the hybrid ranking at the dump-all bar",
        _off(hybrid_extra_similarity=DEFAULT_TUNING.extra_similarity),
        RECALL,
    ),
    Variant("no activity", "the hybrid score has no activity term", _off(w_activity=0.0), RECALL),
    Variant("vector pool 200", "200 nearest vectors, not 25", _off(vector_k=200), RECALL),
    Variant(
        "no question/answer",
        "search: a question scores in full, its answer gets nothing",
        _off(asking_share=1.0, answer_seeds=0),
        SEARCH,
    ),
    Variant(
        "no answer lift", "search: questions discounted, answers not lifted", _off(answer_seeds=0), SEARCH
    ),
)

#: The figures the table shows, as (JSON key, column, what a gain looks like).
COLUMNS = (
    ("evidence_in_context", "in context"),
    ("questions_with_all_evidence_in_context", "all in ctx"),
    ("tokens_mean", "tokens"),
    ("search_recall_at_5", "R@5"),
    ("search_recall_at_10", "R@10"),
)


class QueryCache:
    """The embedder, with each query's vector kept: every variant asks the same questions, and the
    model's answer for a text does not change, so only the ranking is timed again."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._queries: dict[str, Any] = {}

    def embed_query(self, text: str) -> Any:
        if text not in self._queries:
            self._queries[text] = self._inner.embed_query(text)
        return self._queries[text]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def run_format(
    fmt: str, args: argparse.Namespace, loaded: Any, variants: Sequence[Variant]
) -> dict[str, dict[str, Any]]:
    """{store kind: {variant name: figures}} for one format; store kinds "per-conversation" and "merged"."""
    conversations, model_dir, embedder = loaded
    embedder = QueryCache(embedder)
    workdir = Path(tempfile.mkdtemp(prefix="tallei-ablate-", dir=args.workdir))
    out: dict[str, dict[str, Any]] = {"per-conversation": {}, "merged": {}}
    with open_stores(
        conversations, fmt, model_dir=model_dir, embedder=embedder, workdir=workdir, merged=True
    ) as (singles, together):
        assert together is not None
        kinds = {"per-conversation": singles, "merged": [together]}
        for variant in (Variant("defaults", "the program as it is", DEFAULT_TUNING, PARTS), *variants):
            t0 = time.perf_counter()
            for kind, stores in kinds.items():
                results = [
                    r for s in stores for r in ask(s, args.limit_questions, variant.tuning, variant.parts)
                ]
                out[kind][variant.name] = aggregate(results)
            say(f"{fmt}: {variant.name} asked in {time.perf_counter() - t0:.0f} s")
    return out


#: Store kinds as the printed table names them.
SHORT = {"per-conversation": "conv", "merged": "merged"}


def _cell(figures: dict[str, Any], base: dict[str, Any], key: str) -> str:
    if key not in figures:
        return "="
    value, ref = figures[key], base.get(key)
    if figures is base or ref is None:
        return f"{value:,.0f}" if key == "tokens_mean" else f"{value:.1%}"
    if key == "tokens_mean":
        return f"{value - ref:+,.0f}"
    return f"{100 * (value - ref):+.1f}"


def render(report: dict[str, Any]) -> str:
    """One table per format: defaults in full, each variant as its difference in points."""
    out = []
    for fmt, kinds in report["formats"].items():
        out.append(f"\nformat: {fmt} (defaults in full; each variant: points against them, '=' not asked)")
        header = ["variant"] + [f"{col} {SHORT[k]}" for k in kinds for _, col in COLUMNS]
        rows = []
        for name in kinds["per-conversation"]:
            cells = [name]
            for k in kinds:
                base = kinds[k]["defaults"]
                cells += [_cell(kinds[k][name], base, key) for key, _ in COLUMNS]
            rows.append(cells)
        out += table(rows, header)
    return "\n".join(out)


def markdown(report: dict[str, Any]) -> str:
    lines = ["# Ablation of recall's ranking rules", "", f"Revision {report['revision'].get('commit', '?')}."]
    for fmt, kinds in report["formats"].items():
        lines += ["", f"## {fmt}", ""]
        cols = [f"{col} ({k})" for k in kinds for _, col in COLUMNS]
        lines.append("| variant | " + " | ".join(cols) + " |")
        lines.append("|---" * (len(cols) + 1) + "|")
        for name in kinds["per-conversation"]:
            cells = [_cell(kinds[k][name], kinds[k]["defaults"], key) for k in kinds for key, _ in COLUMNS]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Variants:", ""] + [f"- **{v.name}**: {v.what}" for v in VARIANTS]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(parser)
    parser.add_argument("--format", choices=FORMATS, action="append", help="repeatable; default all three")
    parser.add_argument("--variant", action="append", help="only these variants (by name); repeatable")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    variants = [v for v in VARIANTS if not args.variant or v.name in args.variant]
    unknown = set(args.variant or ()) - {v.name for v in VARIANTS}
    if unknown:
        parser.error(
            f"unknown variant {sorted(unknown)}; the variants are: {', '.join(v.name for v in VARIANTS)}"
        )
    loaded = load(args)
    if loaded is None:
        return 0
    started = datetime.now(UTC)
    t_run = time.perf_counter()
    report: dict[str, Any] = {
        "timestamp": started.isoformat(timespec="seconds"),
        "revision": revision(),
        "args": {"conversations": args.conversations, "limit_questions": args.limit_questions},
        "variants": {v.name: v.what for v in variants},
        "formats": {},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for fmt in args.format or FORMATS:
        report["formats"][fmt] = run_format(fmt, args, loaded, variants)
        # Written after each format, so a long run leaves what it has measured so far.
        report["run_s"] = round(time.perf_counter() - t_run, 1)
        args.out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return write_report(report, args.out, render(report))


if __name__ == "__main__":
    sys.exit(main())
