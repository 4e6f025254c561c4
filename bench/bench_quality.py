"""Recall quality on long conversations (LoCoMo, development half), with the real embedding model.

    python bench/bench_quality.py [--format dated|plain|sentences] [--conversations N]
                                  [--limit-questions N] [--out bench/results/quality.json]

For each conversation it builds a fresh encrypted store in a temporary folder and saves every turn
as one memory (``--format dated``: "[8 May 2023] Caroline: …"; ``plain``: "Caroline: …";
``sentences``: the dated form cut into one memory per sentence). Saves go through
``MemoryService.save`` with exactly the arguments the MCP tool ``save_memory`` passes when an
assistant names no type (type None, the platform, pinned False, ``occurred_at``); the MCP layer adds
only argument validation and a thread hop, which change nothing a recall sees. ``occurred_at`` is the
session's time, shifted so that the last session ends now. Then the background work (embeddings,
dedup, supersede, conflicts) is drained, and for every question (categories 1-4) it records:

* evidence in context: the share of the question's evidence turns whose memory text appears in the
  block ``recall_memories`` returns (as one of its items) (a turn saved as several sentences counts by the share of its
  sentences that appear; a turn merged into an earlier near-duplicate counts as that memory);
* tokens returned: ``ceil(chars / 4)`` of that block;
* search R@5 and R@10: the share of evidence turns among the first 5 and 10 hits of
  ``search_memories`` (limit 10); a turn counts as found when any of its memories is;
* recall and search latency, query embedding included.

Recall hits bump reference counts, which would make each answer depend on the questions asked before
it; the bumps are never written (the worker is not running while questions are asked), so every
question sees the same store. It prints a table per category and overall, and writes the figures
under the format's name in the JSON file (other formats' entries are kept). Without the data set it
says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from bench_engine import open_service  # noqa: E402
from common import resolve_model_dir, revision, say, summary, write_report  # noqa: E402
from locomo import CATEGORIES, FORMATS, Conversation, load_conversations, memory_texts  # noqa: E402

from tallei_desktop.core.embeddings import FastEmbedEmbedder  # noqa: E402
from tallei_desktop.core.models import MemoryStatus  # noqa: E402
from tallei_desktop.core.service import MemoryService  # noqa: E402

DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "locomo-dev" / "locomo-dev.json"
DEFAULT_OUT = BENCH_DIR / "results" / "quality.json"
PLATFORM = "claude"
SEARCH_LIMIT = 10
DRAIN_TIMEOUT_S = 3600.0


@dataclass(frozen=True, slots=True)
class QuestionResult:
    conversation: str
    category: str
    in_context: float
    tokens: int
    recall_at_5: float
    recall_at_10: float
    recall_s: float
    search_s: float
    long_term_mode: str


def resolve_memory(service: MemoryService, memory_id: str) -> tuple[str, str] | None:
    """(id, content) of the active memory that now carries ``memory_id``'s text, None if none does.

    A merged memory lives on in the one it was merged into; a superseded or deleted one is gone.
    """
    seen: set[str] = set()
    current = service.get(memory_id)
    while current.status is MemoryStatus.MERGED and current.superseded_by and current.id not in seen:
        seen.add(current.id)
        current = service.get(current.superseded_by)
    if current.status in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED):
        return current.id, current.content
    return None


def build(service: MemoryService, conv: Conversation, fmt: str, now: datetime) -> dict[str, Any]:
    """Save every turn of ``conv``, drain the background work, and map each turn to its memories."""
    shift = now - max(t.at for t in conv.turns)
    saved: dict[str, list[str]] = {}
    t0 = time.perf_counter()
    for turn in conv.turns:
        saved[turn.dia_id] = [
            service.save(text, type=None, platform=PLATFORM, pinned=False, occurred_at=turn.at + shift).id
            for text in memory_texts(turn, fmt)
        ]
    save_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    service.drain()
    drain_s = time.perf_counter() - t0
    status = service.status()
    if status.pending_embeddings:
        raise RuntimeError(f"{conv.sample_id}: {status.pending_embeddings} memories still pending")
    turn_memories = {
        dia_id: [r for r in (resolve_memory(service, mid) for mid in ids) if r is not None]
        for dia_id, ids in saved.items()
    }
    lost = sum(
        1 for ids, kept in zip(saved.values(), turn_memories.values(), strict=True) if len(kept) < len(ids)
    )
    return {
        "turn_memories": turn_memories,
        "pieces": {dia_id: len(ids) for dia_id, ids in saved.items()},
        "figures": {
            "turns": len(conv.turns),
            "memories_saved": sum(len(ids) for ids in saved.values()),
            "save_s": round(save_s, 3),
            "drain_s": round(drain_s, 3),
            "active_per_bucket": status.counts,
            "open_conflicts": status.open_conflicts,
            "turns_with_a_memory_superseded_or_gone": lost,
            # Their evidence names no turn of the conversation, so there is nothing to look for.
            "questions_skipped": sum(not any(e in saved for e in q.evidence) for q in conv.questions),
        },
    }


def ask(
    service: MemoryService, conv: Conversation, built: dict[str, Any], limit: int | None
) -> list[QuestionResult]:
    turn_memories: dict[str, list[tuple[str, str]]] = built["turn_memories"]
    pieces: dict[str, int] = built["pieces"]
    results = []
    questions = [q for q in conv.questions if any(e in pieces for e in q.evidence)]
    for question in questions[:limit]:
        evidence = [e for e in dict.fromkeys(question.evidence) if e in pieces]
        t0 = time.perf_counter()
        recalled = service.recall(question.text)
        recall_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        hits = service.search(question.text, limit=SEARCH_LIMIT)
        search_s = time.perf_counter() - t0
        block = recalled.text
        hit_ids = [h.memory.id for h in hits]

        def found(dia_id: str, k: int, hit_ids: list[str] = hit_ids) -> bool:
            return any(mid in hit_ids[:k] for mid, _ in turn_memories[dia_id])

        # Text alone could match inside a longer memory ("Thanks!" in "Thanks! See you"), so the
        # memory must also be one of the items the block was rendered from.
        shown = {item.memory.id for item in recalled.items}
        in_context = statistics.fmean(
            sum(mid in shown and content in block for mid, content in turn_memories[e]) / pieces[e]
            for e in evidence
        )
        results.append(
            QuestionResult(
                conversation=conv.sample_id,
                category=CATEGORIES[question.category],
                in_context=in_context,
                tokens=math.ceil(len(block) / 4),
                recall_at_5=statistics.fmean(found(e, 5) for e in evidence),
                recall_at_10=statistics.fmean(found(e, 10) for e in evidence),
                recall_s=recall_s,
                search_s=search_s,
                long_term_mode=str(recalled.long_term_mode),
            )
        )
    return results


def aggregate(results: Sequence[QuestionResult]) -> dict[str, Any]:
    if not results:
        return {"questions": 0}
    modes: dict[str, int] = defaultdict(int)
    for r in results:
        modes[r.long_term_mode] += 1
    return {
        "questions": len(results),
        "evidence_in_context": round(statistics.fmean(r.in_context for r in results), 4),
        "questions_with_all_evidence_in_context": round(
            statistics.fmean(r.in_context >= 1.0 for r in results), 4
        ),
        "tokens_mean": round(statistics.fmean(r.tokens for r in results), 1),
        "tokens_p50": statistics.median(r.tokens for r in results),
        "search_recall_at_5": round(statistics.fmean(r.recall_at_5 for r in results), 4),
        "search_recall_at_10": round(statistics.fmean(r.recall_at_10 for r in results), 4),
        "recall_latency_ms": summary([r.recall_s for r in results]),
        "search_latency_ms": summary([r.search_s for r in results]),
        "long_term_modes": dict(modes),
    }


def render_table(fmt: str, report: dict[str, Any]) -> str:
    header = [
        "questions",
        "n",
        "in context",
        "all in ctx",
        "tokens",
        "R@5",
        "R@10",
        "recall p50",
        "search p50",
    ]
    rows = []
    groups = [
        *(
            (name, report["by_category"][name])
            for name in CATEGORIES.values()
            if name in report["by_category"]
        )
    ]
    groups += [(f"conv {cid}", figures) for cid, figures in report["by_conversation"].items()]
    groups.append(("overall", report["overall"]))
    for name, g in groups:
        if not g.get("questions"):
            continue
        rows.append(
            [
                name,
                str(g["questions"]),
                f"{g['evidence_in_context']:.1%}",
                f"{g['questions_with_all_evidence_in_context']:.1%}",
                f"{g['tokens_mean']:,.0f}",
                f"{g['search_recall_at_5']:.1%}",
                f"{g['search_recall_at_10']:.1%}",
                f"{g['recall_latency_ms']['p50']:.1f} ms",
                f"{g['search_latency_ms']['p50']:.1f} ms",
            ]
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells))

    out = [f"format: {fmt}", line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]
    out.append("")
    for cid, figures in report["stores"].items():
        out.append(
            f"{cid}: {figures['turns']} turns -> {figures['memories_saved']} memories, saved in "
            f"{figures['save_s']:.1f} s, background work {figures['drain_s']:.1f} s; active {figures['active_per_bucket']}; "
            f"{figures['turns_with_a_memory_superseded_or_gone']} turns lost a memory to supersede; "
            f"{figures['open_conflicts']} open conflicts; {figures['questions_skipped']} questions without evidence skipped"
        )
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", choices=FORMATS, default="dated", help="how a turn becomes memory text")
    parser.add_argument("--conversations", type=int, help="only the first N conversations")
    parser.add_argument("--limit-questions", type=int, help="only the first N questions of each conversation")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"the LoCoMo JSON (default {DEFAULT_DATA})"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    parser.add_argument(
        "--model-dir",
        type=Path,
        help="the ONNX model folder (default: TALLEI_MODEL_DIR or TALLEI_TEST_MODEL_DIR, "
        "else ../shared/models/all-MiniLM-L6-v2-onnx beside the repository)",
    )
    parser.add_argument(
        "--workdir", type=Path, help="where to build the stores (default: a temporary folder)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    if not args.data.is_file():
        print(f"Skipped: the LoCoMo data is not at {args.data} (pass --data to point at it).")
        return 0
    model_dir = resolve_model_dir(args.model_dir or _env_model_dir())
    conversations = load_conversations(args.data)[: args.conversations]
    started = datetime.now(UTC)
    t_run = time.perf_counter()
    embedder = FastEmbedEmbedder(model_dir=model_dir, allow_download=False)
    embedder.load()
    workdir = Path(tempfile.mkdtemp(prefix="tallei-quality-", dir=args.workdir))
    results: list[QuestionResult] = []
    stores: dict[str, Any] = {}
    try:
        for conv in conversations:
            say(f"{conv.sample_id}: saving {len(conv.turns)} turns ({args.format})")
            service = open_service(workdir / conv.sample_id, model_dir, embedder, background=False)
            try:
                built = build(service, conv, args.format, service.now())
                stores[conv.sample_id] = built["figures"]
                say(f"{conv.sample_id}: stored; asking {len(conv.questions)} questions")
                results += ask(service, conv, built, args.limit_questions)
            finally:
                service.close()
            shutil.rmtree(workdir / conv.sample_id, ignore_errors=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    by_category: dict[str, list[QuestionResult]] = defaultdict(list)
    by_conversation: dict[str, list[QuestionResult]] = defaultdict(list)
    for r in results:
        by_category[r.category].append(r)
        by_conversation[r.conversation].append(r)
    report: dict[str, Any] = {
        "timestamp": started.isoformat(timespec="seconds"),
        "revision": revision(),
        "data": str(args.data),
        "model_dir": str(model_dir),
        "args": {
            "format": args.format,
            "conversations": [c.sample_id for c in conversations],
            "limit_questions": args.limit_questions,
            "platform": PLATFORM,
        },
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "overall": aggregate(results),
        "by_category": {name: aggregate(rs) for name, rs in by_category.items()},
        "by_conversation": {cid: aggregate(rs) for cid, rs in by_conversation.items()},
        "stores": stores,
        "run_s": round(time.perf_counter() - t_run, 1),
    }
    document = _existing(args.out)
    document.setdefault("formats", {})[args.format] = report
    document["run_s"] = report["run_s"]
    return write_report(document, args.out, render_table(args.format, report))


def _env_model_dir() -> Path | None:
    given = os.environ.get("TALLEI_MODEL_DIR") or os.environ.get("TALLEI_TEST_MODEL_DIR")
    return Path(given) if given else None


def _existing(out: Path) -> dict[str, Any]:
    """The JSON written by earlier runs (one entry per format), or a fresh document."""
    try:
        document = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


if __name__ == "__main__":
    sys.exit(main())
