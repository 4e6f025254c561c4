"""Benchmark of export, import, backup and restore on stores of realistic memories.

    python bench/bench_transfer.py [--sizes 1000,10000] [--out bench/results/transfer.json]

For each size N it saves N corpus memories into an encrypted store in a temporary folder (the
hashing test embedder stands in for the model: none of these operations embeds anything), then
times: building the export document, sealing it (scrypt at the shipped cost + AES-256-GCM) and
opening it again, importing it into a fresh store (one transaction), re-importing it (a no-op), an
online backup, and a restore. It prints a table and writes the raw figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
for extra in (REPO_ROOT, BENCH_DIR):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from common import revision, say, write_report  # noqa: E402
from corpus import Corpus  # noqa: E402

from tallei_desktop.core.backups import backups_dir, restore_backup  # noqa: E402
from tallei_desktop.core.exports import decode_export, encode_export  # noqa: E402
from tallei_desktop.core.recall import Budgets  # noqa: E402
from tallei_desktop.core.service import MemoryService  # noqa: E402
from tallei_desktop.core.store.database import Database  # noqa: E402
from tests.support.fake_embedder import HashEmbedder  # noqa: E402

DEFAULT_SIZES = (1_000, 10_000)
DEFAULT_OUT = BENCH_DIR / "results" / "transfer.json"
KEY = bytes(range(32))
BUDGETS = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)


def open_service(path: Path) -> MemoryService:
    return MemoryService(Database(path, KEY, key_source="bench key"), HashEmbedder(), budgets=BUDGETS)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def bench_size(n: int, folder: Path) -> dict[str, Any]:
    source = open_service(folder / "source" / "tallei.db")
    say(f"{n:,}: saving")
    for m in Corpus(seed=7, now=datetime.now(UTC)).memories(n):
        source.save(m.content, type=m.type, platform=m.platform, occurred_at=m.occurred_at)
    source.drain()
    export_s, document = timed(source.export_memories)
    plain = encode_export(document, None)
    seal_s, sealed = timed(lambda: encode_export(document, "a benchmark passphrase"))
    open_s, _ = timed(lambda: decode_export(sealed, "a benchmark passphrase"))
    say(f"{n:,}: backing up")
    backup_s, backup = timed(lambda: source.backup_now(backups_dir(source.db.path)))
    store_bytes = source.db.path.stat().st_size
    source.close()
    restore_s, _ = timed(
        lambda: restore_backup(
            folder / "source" / "tallei.db", KEY, backup, key_source="bench key", now=datetime.now(UTC)
        )
    )

    target = open_service(folder / "target" / "tallei.db")
    say(f"{n:,}: importing")
    import_s, report = timed(lambda: target.import_memories(document))
    again_s, again = timed(lambda: target.import_memories(document))
    if report.added != len(document["memories"]) or again.changed:
        raise RuntimeError(f"{n:,}: unexpected import reports {report} / {again}")
    target.close()
    return {
        "memories": len(document["memories"]),
        "store_bytes": store_bytes,
        "plain_bytes": len(plain),
        "sealed_bytes": len(sealed),
        "backup_bytes": backup.stat().st_size,
        "export_document_s": round(export_s, 3),
        "seal_s": round(seal_s, 3),
        "open_s": round(open_s, 3),
        "import_s": round(import_s, 3),
        "reimport_s": round(again_s, 3),
        "backup_s": round(backup_s, 3),
        "restore_s": round(restore_s, 3),
    }


def render_table(report: dict[str, Any]) -> str:
    rows = [
        ("memories", "memories", "{:,}"),
        ("store file (MB)", "store_bytes", "mb"),
        ("export JSON (MB)", "plain_bytes", "mb"),
        ("build export document (s)", "export_document_s", "{:.2f}"),
        ("seal: scrypt + AES-GCM (s)", "seal_s", "{:.2f}"),
        ("open sealed export (s)", "open_s", "{:.2f}"),
        ("import into fresh store (s)", "import_s", "{:.2f}"),
        ("re-import, no change (s)", "reimport_s", "{:.2f}"),
        ("online backup (s)", "backup_s", "{:.2f}"),
        ("restore (s)", "restore_s", "{:.2f}"),
    ]
    sizes = report["sizes"]
    lines = ["| metric | " + " | ".join(f"{int(s):,}" for s in sizes) + " |", "|---|" + "---:|" * len(sizes)]
    for label, key, fmt in rows:
        cells = []
        for s in sizes:
            value = report["results"][s][key]
            cells.append(f"{value / 1e6:.1f}" if fmt == "mb" else fmt.format(value))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    t0 = time.perf_counter()
    results: dict[str, Any] = {}
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="tallei-bench-transfer-") as tmp:
            results[str(n)] = bench_size(n, Path(tmp))
    report = {
        "revision": revision(),
        "sizes": [str(n) for n in sizes],
        "results": results,
        "run_s": time.perf_counter() - t0,
    }
    json.dumps(report)
    return write_report(report, args.out, render_table(report))


if __name__ == "__main__":
    raise SystemExit(main())
