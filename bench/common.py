"""Helpers both benchmarks share: timing summaries, progress lines, the model folder, the revision."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL_DIR = REPO_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"


def summary(samples_s: Sequence[float]) -> dict[str, float | int]:
    """n and p50/p95/p99/mean/min/max in milliseconds of samples in seconds."""
    ms = sorted(s * 1e3 for s in samples_s)
    if not ms:
        return {"n": 0}

    def pct(p: float) -> float:
        k = (len(ms) - 1) * p
        lo, hi = int(k), min(int(k) + 1, len(ms) - 1)
        return ms[lo] + (ms[hi] - ms[lo]) * (k - lo)

    return {
        "n": len(ms),
        "p50": round(pct(0.50), 4),
        "p95": round(pct(0.95), 4),
        "p99": round(pct(0.99), 4),
        "mean": round(statistics.fmean(ms), 4),
        "min": round(ms[0], 4),
        "max": round(ms[-1], 4),
    }


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def resolve_model_dir(given: Path | None) -> Path:
    model_dir = given or Path(os.environ.get("TALLEI_MODEL_DIR") or DEFAULT_MODEL_DIR)
    if not (model_dir / "model.onnx").is_file():
        raise SystemExit(f"No embedding model at {model_dir}: set TALLEI_MODEL_DIR or pass --model-dir.")
    return model_dir.resolve()


def revision() -> dict[str, Any]:
    """The commit measured, and whether the program's files differ from it (read-only git)."""

    def git(*args: str) -> str:
        try:
            done = subprocess.run(
                ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=False
            )
        except OSError:
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    changed = git("diff", "--name-only", "HEAD", "--", "tallei_desktop")
    return {
        "commit": git("rev-parse", "HEAD") or None,
        "changed_files": changed.splitlines() if changed else [],
    }


def write_report(report: dict[str, Any], out: Path, table: str) -> int:
    """Write the JSON report, print the table, and return the exit status."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table)
    print(f"\nrun took {report['run_s']:.0f} s; JSON written to {out}")
    return 0
