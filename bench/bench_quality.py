"""Recall quality on long conversations (LoCoMo, development half), with the real embedding model.

    python bench/bench_quality.py [--format dated|plain|sentences] [--merged] [--conversations N]
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

With ``--merged`` it also saves every conversation into ONE store (about 3,100 turns, each
conversation shifted to end now, saved one after the other) and asks every question of it: the block
is then a small share of what is stored, as for a person with months of memories, and the figures are
reported beside the per-conversation ones. A turn's evidence is keyed by sample id and dia_id (dia_ids
repeat across conversations), so only the question's own conversation's memories count.

Recall hits bump reference counts, which would make each answer depend on the questions asked before
it; the bumps are never written (the worker is not running while questions are asked), so every
question sees the same store. It prints a table per category and overall, and writes the figures
under the format's name in the JSON file (other formats' entries are kept). Without the data set it
says so and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
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
from collections.abc import Iterator, Sequence
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
from locomo import CATEGORIES, FORMATS, Conversation, Question, load_conversations, memory_texts  # noqa: E402

from tallei_desktop.core.embeddings import FastEmbedEmbedder  # noqa: E402
from tallei_desktop.core.models import MemoryStatus  # noqa: E402
from tallei_desktop.core.recall import RecallTuning  # noqa: E402
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
    tokens: int
    long_term_mode: str
    #: None when the question was not asked of recall (or of search): see ``ask``'s ``parts``.
    in_context: float | None
    recall_s: float | None
    recall_at_5: float | None
    recall_at_10: float | None
    search_s: float | None


#: A turn's key: dia_ids repeat across conversations, so evidence names its conversation too.
TurnKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Store:
    """A built store, the conversations saved into it, and the memories each turn became."""

    label: str
    service: MemoryService
    conversations: tuple[Conversation, ...]
    #: (sample id, dia_id) -> (id, content) of each active memory carrying the turn's text
    turn_memories: dict[TurnKey, list[tuple[str, str]]]
    #: (sample id, dia_id) -> how many memories the turn was saved as
    pieces: dict[TurnKey, int]
    figures: dict[str, Any]


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


def build(
    service: MemoryService, conversations: Sequence[Conversation], fmt: str, now: datetime, label: str
) -> Store:
    """Save every turn of ``conversations`` into one store, one conversation after the other, drain
    the background work, and map each turn to its memories. Each conversation is shifted so that its
    last session ends ``now``, as if it were the only one."""
    saved: dict[TurnKey, list[str]] = {}
    t0 = time.perf_counter()
    for conv in conversations:
        shift = now - max(t.at for t in conv.turns)
        for turn in conv.turns:
            saved[(conv.sample_id, turn.dia_id)] = [
                service.save(text, type=None, platform=PLATFORM, pinned=False, occurred_at=turn.at + shift).id
                for text in memory_texts(turn, fmt)
            ]
    save_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    service.drain()
    drain_s = time.perf_counter() - t0
    status = service.status()
    if status.pending_embeddings:
        raise RuntimeError(f"{label}: {status.pending_embeddings} memories still pending")
    turn_memories = {
        key: [r for r in (resolve_memory(service, mid) for mid in ids) if r is not None]
        for key, ids in saved.items()
    }
    lost = sum(
        1 for ids, kept in zip(saved.values(), turn_memories.values(), strict=True) if len(kept) < len(ids)
    )
    figures = {
        "turns": len(saved),
        "memories_saved": sum(len(ids) for ids in saved.values()),
        "save_s": round(save_s, 3),
        "drain_s": round(drain_s, 3),
        "active_per_bucket": status.counts,
        "open_conflicts": status.open_conflicts,
        "turns_with_a_memory_superseded_or_gone": lost,
        # Their evidence names no turn of the conversation, so there is nothing to look for.
        "questions_skipped": sum(
            not any((c.sample_id, e) in saved for e in q.evidence) for c in conversations for q in c.questions
        ),
    }
    pieces = {key: len(ids) for key, ids in saved.items()}
    return Store(label, service, tuple(conversations), turn_memories, pieces, figures)


#: What ``ask`` may measure: the recall block, search hits, or both.
PARTS = frozenset({"recall", "search"})


def ask(
    store: Store,
    limit: int | None,
    tuning: RecallTuning | None = None,
    parts: frozenset[str] = PARTS,
) -> list[QuestionResult]:
    """Ask every question of ``store``'s conversations (the first ``limit`` of each) of recall and/or
    search (``parts``), ranked with ``tuning`` (None: the program's own, cache included)."""
    results = []
    for conv in store.conversations:
        questions = [
            q for q in conv.questions if any((conv.sample_id, e) in store.pieces for e in q.evidence)
        ]
        for question in questions[:limit]:
            keys = [
                (conv.sample_id, e)
                for e in dict.fromkeys(question.evidence)
                if (conv.sample_id, e) in store.pieces
            ]
            results.append(_one(store, conv.sample_id, question, keys, tuning, parts))
    return results


def _one(
    store: Store,
    sample_id: str,
    question: Question,
    keys: list[TurnKey],
    tuning: RecallTuning | None,
    parts: frozenset[str],
) -> QuestionResult:
    service, turn_memories, pieces = store.service, store.turn_memories, store.pieces
    in_context = recall_s = at_5 = at_10 = search_s = None
    tokens, mode = 0, ""
    if "recall" in parts:
        t0 = time.perf_counter()
        recalled = service.recall(question.text, tuning=tuning)
        recall_s = time.perf_counter() - t0
        block = recalled.text
        # Text alone could match inside a longer memory ("Thanks!" in "Thanks! See you"), so the
        # memory must also be one of the items the block was rendered from.
        shown = {item.memory.id for item in recalled.items}
        in_context = statistics.fmean(
            sum(mid in shown and content in block for mid, content in turn_memories[k]) / pieces[k]
            for k in keys
        )
        tokens, mode = math.ceil(len(block) / 4), str(recalled.long_term_mode)
    if "search" in parts:
        t0 = time.perf_counter()
        hits = service.search(question.text, limit=SEARCH_LIMIT, tuning=tuning)
        search_s = time.perf_counter() - t0
        hit_ids = [h.memory.id for h in hits]

        def found(key: TurnKey, k: int) -> bool:
            return any(mid in hit_ids[:k] for mid, _ in turn_memories[key])

        at_5 = statistics.fmean(found(k, 5) for k in keys)
        at_10 = statistics.fmean(found(k, 10) for k in keys)
    return QuestionResult(
        conversation=sample_id,
        category=CATEGORIES[question.category],
        tokens=tokens,
        long_term_mode=mode,
        in_context=in_context,
        recall_s=recall_s,
        recall_at_5=at_5,
        recall_at_10=at_10,
        search_s=search_s,
    )


def aggregate(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """The figures of ``results``; a part that was not measured (see ``ask``) is left out."""
    if not results:
        return {"questions": 0}
    out: dict[str, Any] = {"questions": len(results)}
    recalled = [r for r in results if r.in_context is not None]
    if recalled:
        modes: dict[str, int] = defaultdict(int)
        for r in recalled:
            modes[r.long_term_mode] += 1
        in_context = [r.in_context for r in recalled if r.in_context is not None]
        out |= {
            "evidence_in_context": round(statistics.fmean(in_context), 4),
            "questions_with_all_evidence_in_context": round(
                statistics.fmean(x >= 1.0 for x in in_context), 4
            ),
            "tokens_mean": round(statistics.fmean(r.tokens for r in recalled), 1),
            "tokens_p50": statistics.median(r.tokens for r in recalled),
            "recall_latency_ms": summary([r.recall_s for r in recalled if r.recall_s is not None]),
            "long_term_modes": dict(modes),
        }
    searched = [r for r in results if r.recall_at_5 is not None]
    if searched:
        out |= {
            "search_recall_at_5": round(statistics.fmean(r.recall_at_5 or 0.0 for r in searched), 4),
            "search_recall_at_10": round(statistics.fmean(r.recall_at_10 or 0.0 for r in searched), 4),
            "search_latency_ms": summary([r.search_s for r in searched if r.search_s is not None]),
        }
    return out


def figures_of(results: Sequence[QuestionResult], stores: Sequence[Store]) -> dict[str, Any]:
    """Overall, by category and by conversation, and what each store holds."""
    by_category: dict[str, list[QuestionResult]] = defaultdict(list)
    by_conversation: dict[str, list[QuestionResult]] = defaultdict(list)
    for r in results:
        by_category[r.category].append(r)
        by_conversation[r.conversation].append(r)
    return {
        "overall": aggregate(results),
        "by_category": {name: aggregate(rs) for name, rs in by_category.items()},
        "by_conversation": {cid: aggregate(rs) for cid, rs in by_conversation.items()},
        "stores": {s.label: s.figures for s in stores},
    }


def _cells(name: str, g: dict[str, Any]) -> list[str]:
    def pct(key: str) -> str:
        return f"{g[key]:.1%}" if key in g else "-"

    def ms(key: str) -> str:
        return f"{g[key]['p50']:.1f} ms" if key in g else "-"

    return [
        name,
        str(g["questions"]),
        pct("evidence_in_context"),
        pct("questions_with_all_evidence_in_context"),
        f"{g['tokens_mean']:,.0f}" if "tokens_mean" in g else "-",
        pct("search_recall_at_5"),
        pct("search_recall_at_10"),
        ms("recall_latency_ms"),
        ms("search_latency_ms"),
    ]


HEADER = ["questions", "n", "in context", "all in ctx", "tokens", "R@5", "R@10", "recall p50", "search p50"]


def table(rows: Sequence[list[str]], header: Sequence[str] = HEADER) -> list[str]:
    """Rows under ``header``, the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [list(header), *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells))

    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def render_table(fmt: str, report: dict[str, Any]) -> str:
    rows = [
        _cells(name, report["by_category"][name])
        for name in CATEGORIES.values()
        if name in report["by_category"]
    ]
    rows += [_cells(f"conv {cid}", g) for cid, g in report["by_conversation"].items()]
    rows.append(_cells("overall", report["overall"]))
    merged = report.get("merged")
    if merged:
        rows += [
            _cells(f"merged {name}", merged["by_category"][name])
            for name in CATEGORIES.values()
            if name in merged["by_category"]
        ]
        rows.append(_cells("merged overall", merged["overall"]))
    out = [f"format: {fmt}", *table([r for r in rows if r[1] != "0"]), ""]
    stores = {**report["stores"], **(merged["stores"] if merged else {})}
    for label, figures in stores.items():
        out.append(
            f"{label}: {figures['turns']} turns -> {figures['memories_saved']} memories, saved in "
            f"{figures['save_s']:.1f} s, background work {figures['drain_s']:.1f} s; active {figures['active_per_bucket']}; "
            f"{figures['turns_with_a_memory_superseded_or_gone']} turns lost a memory to supersede; "
            f"{figures['open_conflicts']} open conflicts; {figures['questions_skipped']} questions without evidence skipped"
        )
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(parser)
    parser.add_argument("--format", choices=FORMATS, default="dated", help="how a turn becomes memory text")
    parser.add_argument(
        "--merged",
        action="store_true",
        help="also save every conversation into ONE store and ask every question of it",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    return parser.parse_args(argv)


def add_common_args(parser: argparse.ArgumentParser) -> None:
    """The options this benchmark shares with bench/ablate_recall.py."""
    parser.add_argument("--conversations", type=int, help="only the first N conversations")
    parser.add_argument("--limit-questions", type=int, help="only the first N questions of each conversation")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"the LoCoMo JSON (default {DEFAULT_DATA})"
    )
    parser.add_argument(
        "--model-dir",
        type=Path,
        help="the ONNX model folder (default: TALLEI_MODEL_DIR or TALLEI_TEST_MODEL_DIR, "
        "else ../shared/models/all-MiniLM-L6-v2-onnx beside the repository)",
    )
    parser.add_argument(
        "--workdir", type=Path, help="where to build the stores (default: a temporary folder)"
    )


@contextlib.contextmanager
def open_stores(
    conversations: Sequence[Conversation],
    fmt: str,
    *,
    model_dir: Path,
    embedder: FastEmbedEmbedder,
    workdir: Path,
    per_conversation: bool = True,
    merged: bool = False,
) -> Iterator[tuple[list[Store], Store | None]]:
    """Build one store per conversation and/or one holding them all, in ``workdir``; closed and
    removed on exit."""
    singles: list[Store] = []
    together: Store | None = None
    try:
        if per_conversation:
            for conv in conversations:
                say(f"{conv.sample_id}: saving {len(conv.turns)} turns ({fmt})")
                service = open_service(workdir / conv.sample_id, model_dir, embedder, background=False)
                singles.append(build(service, [conv], fmt, service.now(), conv.sample_id))
        if merged:
            turns = sum(len(c.turns) for c in conversations)
            say(f"merged: saving {turns} turns of {len(conversations)} conversations into one store ({fmt})")
            service = open_service(workdir / "merged", model_dir, embedder, background=False)
            together = build(service, conversations, fmt, service.now(), "merged")
        yield singles, together
    finally:
        for store in (*singles, *([together] if together else [])):
            store.service.close()
        shutil.rmtree(workdir, ignore_errors=True)


def load(args: argparse.Namespace) -> tuple[list[Conversation], Path, FastEmbedEmbedder] | None:
    """The conversations, the model folder and a loaded embedder; None (said why) without the data."""
    if not args.data.is_file():
        print(f"Skipped: the LoCoMo data is not at {args.data} (pass --data to point at it).")
        return None
    model_dir = resolve_model_dir(args.model_dir or _env_model_dir())
    conversations = load_conversations(args.data)[: args.conversations]
    embedder = FastEmbedEmbedder(model_dir=model_dir, allow_download=False)
    embedder.load()
    return conversations, model_dir, embedder


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    started = datetime.now(UTC)
    t_run = time.perf_counter()
    loaded = load(args)
    if loaded is None:
        return 0
    conversations, model_dir, embedder = loaded
    workdir = Path(tempfile.mkdtemp(prefix="tallei-quality-", dir=args.workdir))
    with open_stores(
        conversations,
        args.format,
        model_dir=model_dir,
        embedder=embedder,
        workdir=workdir,
        merged=args.merged,
    ) as (singles, together):
        results = [r for store in singles for r in ask(store, args.limit_questions)]
        if together is not None:
            say(f"merged: asking {sum(len(c.questions) for c in conversations)} questions")
        merged_results = ask(together, args.limit_questions) if together is not None else []
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
            "merged": args.merged,
        },
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        **figures_of(results, singles),
        "run_s": round(time.perf_counter() - t_run, 1),
    }
    if together is not None:
        report["merged"] = figures_of(merged_results, [together])
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
