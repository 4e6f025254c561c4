"""Benchmark of the native host as a browser drives it: framed messages over a real host's pipes.

    python bench/bench_native_host.py [--size 10000] [--quick] [--store DIR] [--out bench/results/native-host.json]

It builds an encrypted store of ``--size`` memories (passphrase key, never the OS keyring) through
``MemoryService.save`` and lets the real worker embed them all, as bench/bench_mcp.py does, then
starts one ``python -m tallei_desktop native-host <our origin>`` with the real model and waits
(untimed) until it has answered a recall by meaning. Then, each a round trip from writing the
framed request to reading the whole framed reply:

* ``recall`` warm: one draft repeated (``use: false``, as while the person types);
* ``recall`` cold: distinct drafts never asked before, the query embedding included;
* ``save``: distinct new memories from a page, one after another.

It prints a table and writes the raw figures as JSON. ``--store DIR`` keeps the built store and
reuses it next time (embedding 10,000 memories takes minutes).
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
for folder in (REPO_ROOT, BENCH_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from bench_mcp import build_store, process_env  # noqa: E402
from common import resolve_model_dir, revision, say, summary, write_report  # noqa: E402
from corpus import Corpus  # noqa: E402

from tallei_desktop.app.browsers import CHROMIUM_ORIGIN  # noqa: E402

SEED = 20_260_101
FULL = {"warm": 200, "cold": 50, "save": 200}
QUICK = {"warm": 50, "cold": 20, "save": 50}


class Host:
    def __init__(self, env: dict[str, str], stderr: IO[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tallei_desktop", "native-host", CHROMIUM_ORIGIN],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
        )
        self._id = 0

    def ask(self, message: dict[str, Any]) -> tuple[dict[str, Any], float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._id += 1
        data = json.dumps({"id": self._id, **message}).encode("utf-8")
        t0 = time.perf_counter()
        self.proc.stdin.write(struct.pack("=I", len(data)) + data)
        self.proc.stdin.flush()
        header = self.proc.stdout.read(4)
        if len(header) < 4:
            raise RuntimeError("the host closed its output")
        (length,) = struct.unpack("=I", header)
        reply: dict[str, Any] = json.loads(self.proc.stdout.read(length))
        elapsed = time.perf_counter() - t0
        if reply.get("id") != self._id or not reply.get("ok"):
            raise RuntimeError(f"unexpected reply {reply!r}")
        return reply, elapsed

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--store", type=Path, help="keep the built store here and reuse it")
    parser.add_argument("--model-dir", type=Path)
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "native-host.json")
    args = parser.parse_args(argv)
    model_dir = resolve_model_dir(args.model_dir)
    reps = QUICK if args.quick else FULL
    started = datetime.now(UTC)
    t_run = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="tallei-bench-nh-"))
    corpus = Corpus(SEED, started)
    built = process_env(args.store or workdir / "built", model_dir)
    kept = (args.store / "store.json") if args.store else None
    if kept is not None and kept.is_file():
        store = json.loads(kept.read_text(encoding="utf-8"))
        say(f"reusing the store in {args.store}")
    else:
        store = build_store(built, corpus.memories(args.size))
        if kept is not None:
            kept.write_text(json.dumps(store), encoding="utf-8")
    env = process_env(workdir / "run", model_dir)
    shutil.copytree(built["TALLEI_DATA_DIR"], env["TALLEI_DATA_DIR"])
    report: dict[str, Any] = {
        "timestamp": started.isoformat(timespec="seconds"),
        "revision": revision(),
        "args": {"size": args.size, "quick": args.quick, "reps": reps},
        "store": store,
    }
    with (workdir / "host-stderr.log").open("w") as stderr:
        host = Host(env, stderr)
        try:
            first, first_s = host.ask({"type": "status"})
            report["first_status_ms"] = round(first_s * 1e3, 2)
            say(f"first status in {first_s * 1e3:.0f} ms: {first['memories']:,} memories")
            host.ask({"type": "recall", "platform": "claude", "draft": "warm up the model please"})
            drafts = corpus.queries(reps["cold"] + 1, salt="native-host")
            warm_draft = drafts.pop()
            host.ask({"type": "recall", "platform": "claude", "draft": warm_draft})
            warm = [
                host.ask({"type": "recall", "platform": "chatgpt", "draft": warm_draft})[1]
                for _ in range(reps["warm"])
            ]
            cold = [host.ask({"type": "recall", "platform": "chatgpt", "draft": d})[1] for d in drafts]
            saves = []
            for i, m in enumerate(
                corpus.only(reps["save"], ("preference", "fact", "decision"), salt="nh-save")
            ):
                message = {
                    "type": "save",
                    "platform": "chatgpt",
                    "content": f"{m.content} ({i})",
                    "source": "selection",
                }
                saves.append(host.ask(message)[1])
        finally:
            code = host.close()
    report["host_exit"] = code
    report["recall_warm"] = summary(warm)
    report["recall_cold"] = summary(cold)
    report["save"] = summary(saves)
    report["run_s"] = round(time.perf_counter() - t_run, 1)
    rows = [
        ("recall warm (same draft)", "recall_warm", 30.0),
        ("recall cold (new drafts)", "recall_cold", None),
        ("save", "save", 20.0),
    ]
    lines = [
        f"native host, {store['active']:,} active memories",
        f"{'':26} {'n':>5} {'p50 ms':>9} {'p95 ms':>9}  bar",
    ]
    for title, key, bar in rows:
        s = report[key]
        lines.append(
            f"{title:26} {s['n']:>5} {s['p50']:>9.2f} {s['p95']:>9.2f}  {f'≤ {bar:.0f} ms p50' if bar else ''}"
        )
    shutil.rmtree(workdir, ignore_errors=True)
    return write_report(report, args.out, "\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
