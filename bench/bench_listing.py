"""Listing benchmark: the table view's pages, counts, history and platform usage on a large store.

Builds an encrypted store of N memories from the engine corpus (saved through ``save``; no model is
needed, listing never embeds), forgets, pins and confirms some of them, then times through
``MemoryService``: the first page (which includes the total count), a deep keyset page, a deep
offset page, a count, the first page of every sort order, filtered first pages, a history and the
platform usage. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from common import revision, say, summary, write_report  # noqa: E402
from corpus import Corpus  # noqa: E402

from tallei_desktop.core.embeddings import NullEmbedder  # noqa: E402
from tallei_desktop.core.models import MemoryFilter, MemoryStatus, MemoryType, SortKey  # noqa: E402
from tallei_desktop.core.recall import Budgets  # noqa: E402
from tallei_desktop.core.service import MemoryService  # noqa: E402
from tallei_desktop.core.store.database import Database  # noqa: E402

DEFAULT_SIZES = (10_000,)
DEFAULT_OUT = BENCH_DIR / "results" / "listing.json"
SEED = 20_240_601
PAGE = 100
#: How far in the deep pages start (a share of the active memories).
DEEP_SHARE = 0.8
BUDGETS = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)
#: Target for first page, deep keyset page and count at 10,000 memories, in ms.
TARGET_MS = 20.0


def build(service: MemoryService, size: int) -> None:
    corpus = Corpus(SEED, datetime(2026, 6, 1, tzinfo=UTC))
    rng = random.Random(SEED)
    ids: list[str] = []
    for i, m in enumerate(corpus.memories(size), 1):
        ids.append(service.save(m.content, type=m.type, platform=m.platform, occurred_at=m.occurred_at).id)
        if i % 5_000 == 0:
            say(f"saved {i:,}")
    for mid in rng.sample(ids, size // 10):
        m = service.get(mid)
        service.save(m.content, platform=rng.choice(("claude", "chatgpt", "cursor", "gemini")))
    for mid in rng.sample(ids, size // 50):
        service.pin(mid)
    for mid in rng.sample(ids, size // 20):
        service.forget(mid)


def timed(fn: Callable[[], Any], reps: int) -> dict[str, Any]:
    fn()  # warm this thread's connection and the page cache, as a table view's second call is
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.thread_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    # CPU time of this thread: on a shared, busy machine it shows the work itself, without the waits.
    return {**summary(wall), "cpu_p50": summary(cpu)["p50"]}


def deep_cursor(service: MemoryService, f: MemoryFilter, sort: SortKey, rows: int) -> str:
    cursor: str | None = None
    for _ in range(rows // PAGE):
        cursor = service.list_page(f, sort=sort, limit=PAGE, after=cursor).next_cursor
        assert cursor is not None
    assert cursor is not None
    return cursor


def bench_size(size: int, reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tallei-bench-listing-") as tmp:
        db = Database(Path(tmp) / "tallei.db", os.urandom(32), key_source="benchmark key")
        service = MemoryService(db, NullEmbedder(), budgets=BUDGETS)
        try:
            say(f"{size:,}: building the store")
            t0 = time.perf_counter()
            build(service, size)
            say(f"{size:,}: built in {time.perf_counter() - t0:.1f} s")
            active = service.count()
            deep = int(active * DEEP_SHARE) // PAGE * PAGE
            f = MemoryFilter()
            cursor = deep_cursor(service, f, SortKey.UPDATED, deep)
            some_id = service.list_page(f, limit=1).memories[0].id
            cases: dict[str, Callable[[], Any]] = {
                "first page (with total)": lambda: service.list_page(f, limit=PAGE),
                f"keyset page at row {deep:,}": lambda: service.list_page(f, limit=PAGE, after=cursor),
                f"offset page at row {deep:,}": lambda: service.list_page(f, limit=PAGE, offset=deep),
                "count (active)": lambda: service.count(f),
                "count (all statuses)": lambda: service.count(MemoryFilter(statuses=frozenset())),
            }
            for key in SortKey:
                for desc in (True, False):
                    arrow = "desc" if desc else "asc"
                    cases[f"first page by {key} {arrow}"] = lambda key=key, desc=desc: service.list_page(
                        f, sort=key, descending=desc, limit=PAGE
                    )
            filters = {
                "type=decision": MemoryFilter(types=frozenset({MemoryType.DECISION})),
                "platform=cursor": MemoryFilter(platforms=frozenset({"cursor"})),
                "text='lisbon'": MemoryFilter(text="lisbon"),
                "forgotten": MemoryFilter(statuses=frozenset({MemoryStatus.DELETED})),
                "pinned": MemoryFilter(pinned=True),
            }
            for name, flt in filters.items():
                cases[f"first page, {name}"] = lambda flt=flt: service.list_page(flt, limit=PAGE)
            cases["history"] = lambda: service.history(some_id)
            cases["platform usage"] = service.platform_usage
            results = {}
            for name, fn in cases.items():
                results[name] = timed(fn, reps)
                say(f"{size:,}: {name}: p50 {results[name]['p50']:.2f} ms")
            return {"active": active, "deep_row": deep, "cases": results}
        finally:
            service.close()


def render(report: dict[str, Any]) -> str:
    sizes = list(report["sizes"])
    names = list(report["sizes"][sizes[0]]["cases"])
    width = max(len(n) for n in names) + 2
    lines = [
        f"{'listing (ms: p50 / p95 / cpu p50)':<{width}}"
        + "".join(f"{f'{int(s):,} memories':>30}" for s in sizes),
    ]
    for name in names:
        cells = []
        for s in sizes:
            c = report["sizes"][s]["cases"][name]
            cells.append(f"{c['p50']:>10.2f} / {c['p95']:>7.2f} / {c['cpu_p50']:>7.2f}")
        lines.append(f"{name:<{width}}" + "".join(f"{cell:>30}" for cell in cells))
    lines.append(
        f"\ntarget: first page, deep keyset page and count under {TARGET_MS:.0f} ms at 10,000 memories"
    )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="comma-separated store sizes (default 10000)")
    parser.add_argument("--reps", type=int, default=30, help="timed calls per case (default 30)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(DEFAULT_SIZES)
    started = time.perf_counter()
    report: dict[str, Any] = {
        "revision": revision(),
        "reps": args.reps,
        "page": PAGE,
        "sizes": {str(size): bench_size(size, args.reps) for size in sizes},
    }
    report["run_s"] = round(time.perf_counter() - started, 1)
    return write_report(report, args.out, render(report))


if __name__ == "__main__":
    raise SystemExit(main())
