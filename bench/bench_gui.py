"""Tray-app benchmark: the main window on a 10,000-memory store, filtering and sorting it, and the Qt
event loop and page switches while another process saves 2,000 memories.

Prints a table and writes JSON (default bench/results/gui.json). Runs offscreen; targets: window
shown with its first view filled < 500 ms, filter or sort < 200 ms, longest event-loop stall < 100 ms
while another process saves, a page switch painted < 100 ms (idle and under that load; median and
worst), views caught up < 2 s after the last save.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO_ROOT, revision, say, write_report

KEY = bytes(range(32))
TYPES = ("fact", "decision", "lesson", "failure", "preference", "event", "note")
PLATFORMS = ("claude", "chatgpt", "gemini", "cursor", "vscode")
SUBJECTS = ("billing", "garden", "deploys", "the kitchen", "Rust", "the mobile app", "tax forms", "hiking")

WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
from bench.bench_gui import open_service, text_for
service = open_service(Path({path!r}), {model!r})
if {model!r}:
    service.start_background()
for i in range({n}):
    service.save(text_for({start} + i), type="fact", platform="cursor")
print(time.time(), flush=True)
service.wait_idle(600)
service.close()
"""


def text_for(i: int) -> str:
    return f"Note {i}: {SUBJECTS[i % len(SUBJECTS)]} detail number {i * 7919 % 100_003} for the record"


def open_service(path: Path, model_dir: str | None = None) -> Any:
    """A service on the bench store; with ``model_dir`` it embeds with the real model, as an MCP server does."""
    from tallei_desktop.core.embeddings import FastEmbedEmbedder
    from tallei_desktop.core.recall import Budgets
    from tallei_desktop.core.service import MemoryService
    from tallei_desktop.core.store.database import Database
    from tests.support.fake_embedder import HashEmbedder

    budgets = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)
    embedder = (
        FastEmbedEmbedder(
            "sentence-transformers/all-MiniLM-L6-v2",
            model_dir=Path(model_dir),
            cache_dir=path.parent / "models",
            allow_download=False,
        )
        if model_dir
        else HashEmbedder()
    )
    return MemoryService(Database(path, KEY, key_source="bench key"), embedder, budgets=budgets)


def fill(path: Path, n: int) -> None:
    service = open_service(path)
    try:
        for i in range(n):
            service.save(
                text_for(i), type=TYPES[i % len(TYPES)] if i % 10 == 0 else "fact", platform=PLATFORMS[i % 5]
            )
    finally:
        service.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--saves", type=int, default=2_000)
    parser.add_argument(
        "--model-dir",
        type=Path,
        default=REPO_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx",
        help="the saving process embeds with this model, as an MCP server would (none: a hashing stand-in)",
    )
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results" / "gui.json")
    args = parser.parse_args()

    from PySide6.QtCore import QElapsedTimer, QEvent, QEventLoop, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from tallei_desktop.config import load_settings
    from tallei_desktop.core.models import SortKey
    from tallei_desktop.gui.backend import Backend, ListQuery, View
    from tallei_desktop.gui.main_window import MainWindow, PageName
    from tallei_desktop.gui.ops import Ops
    from tallei_desktop.gui.watcher import StoreWatcher

    started = time.perf_counter()
    qt_app = QApplication(sys.argv[:1])
    tmp = Path(tempfile.mkdtemp(prefix="tallei-bench-gui-"))
    path = tmp / "tallei.db"
    say(f"filling a store with {args.memories:,} memories")
    fill(path, args.memories)
    service = open_service(path)
    backend = Backend(service)
    ops = Ops()
    settings = load_settings(environ={"TALLEI_DATA_DIR": str(tmp)}, config_path=tmp / "absent.toml")

    def wait(signal: Any, timeout_ms: int = 60_000) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)
        QTimer.singleShot(timeout_ms, loop.quit)
        loop.exec()
        signal.disconnect(loop.quit)

    class SwitchProbe(QObject):
        """Times a page switch: from asking for the page to the first paint of its table."""

        def __init__(self) -> None:
            super().__init__()
            self.started: float | None = None
            self.target: object = None
            self.samples: list[float] = []
            self.fresh_started: float | None = None
            self.fresh: list[float] = []

        def loaded(self) -> None:
            if self.fresh_started is not None:
                self.fresh.append((time.perf_counter() - self.fresh_started) * 1e3)
                self.fresh_started = None

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and watched is self.target and self.started is not None:
                self.samples.append((time.perf_counter() - self.started) * 1e3)
                self.started = None
            return False

    results: dict[str, float] = {}
    # The first view (Preferences) holds a tenth of the store; Long-term holds most of it.
    window = MainWindow(settings, backend, ops, has_tray=True)
    long_term = window.memory_pages[View.LONG_TERM]
    clock = time.perf_counter()
    window.show()
    wait(window.memory_pages[View.PREFERENCES].loaded)
    results["window_shown_ms"] = (time.perf_counter() - clock) * 1e3
    clock = time.perf_counter()
    window.show_page(PageName.LONG_TERM)
    wait(long_term.loaded)
    results["long_term_view_ms"] = (time.perf_counter() - clock) * 1e3
    say(f"long-term view holds {long_term.model.total:,} memories")

    timings: dict[str, list[float]] = {"sort": [], "filter": []}
    for key in (SortKey.CONTENT, SortKey.REFERENCES, SortKey.UPDATED):
        clock = time.perf_counter()
        long_term.set_query(ListQuery(View.LONG_TERM, sort=key))
        wait(long_term.loaded)
        timings["sort"].append((time.perf_counter() - clock) * 1e3)
    for platform in ("claude", "gemini"):
        clock = time.perf_counter()
        long_term.set_query(ListQuery(View.LONG_TERM, platforms=frozenset({platform})))
        wait(long_term.loaded)
        timings["filter"].append((time.perf_counter() - clock) * 1e3)
    long_term.set_query(ListQuery(View.LONG_TERM))
    wait(long_term.loaded)
    results["sort_max_ms"] = max(timings["sort"])
    results["filter_max_ms"] = max(timings["filter"])

    switch_probe = SwitchProbe()
    cycle = [PageName.PREFERENCES, PageName.LONG_TERM, PageName.RECENT]
    pages = {
        PageName.PREFERENCES: View.PREFERENCES,
        PageName.LONG_TERM: View.LONG_TERM,
        PageName.RECENT: View.RECENT,
    }
    for view in pages.values():
        window.memory_pages[view].table.viewport().installEventFilter(switch_probe)
        window.memory_pages[view].loaded.connect(switch_probe.loaded)
    turn = [0]

    def switch() -> None:
        turn[0] += 1
        name = cycle[turn[0] % len(cycle)]
        page = window.memory_pages[pages[name]]
        switch_probe.target = page.table.viewport()
        switch_probe.started = time.perf_counter()
        # A page that missed changes while hidden reloads on show: time until its fresh rows are in too.
        switch_probe.fresh_started = switch_probe.started if page.isHidden() and page._dirty else None
        window.show_page(name)

    switcher = QTimer()
    switcher.setInterval(300)
    switcher.timeout.connect(switch)
    idle = QEventLoop()
    switcher.start()
    QTimer.singleShot(300 * 13, idle.quit)
    idle.exec()
    switcher.stop()
    idle_switches, switch_probe.samples = switch_probe.samples, []

    say(f"another process saves {args.saves:,} memories")
    watcher = StoreWatcher(backend, ops)
    watcher.changed.connect(window.store_changed)
    watcher.start()
    expected = long_term.model.total + args.saves
    gaps: list[float] = []
    probe = QTimer()
    probe.setInterval(10)
    tick = QElapsedTimer()
    tick.start()

    def on_tick() -> None:
        gaps.append(tick.restart())

    probe.timeout.connect(on_tick)
    probe.start()
    switcher.start()
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WRITER.format(
                repo=str(REPO_ROOT),
                path=str(path),
                n=args.saves,
                start=args.memories,
                model=str(args.model_dir) if args.model_dir and args.model_dir.is_dir() else None,
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    caught_up: list[float] = []
    done = QEventLoop()

    def check() -> None:
        if not caught_up and long_term.model.total >= expected:
            caught_up.append(time.time())
        if writer.poll() is not None and caught_up:
            done.quit()

    # QCoreApplication.processEvents(flags, maxtime) leaks a reference to None per call in
    # PySide6 6.12, which aborts a busy loop; a nested event loop with a checking timer does not.
    checker = QTimer()
    checker.setInterval(20)
    checker.timeout.connect(check)
    checker.start()
    QTimer.singleShot(600_000, done.quit)
    done.exec()
    checker.stop()
    switcher.stop()
    loaded_switches = switch_probe.samples
    fresh_switches = switch_probe.fresh
    caught_up_at = caught_up[0] if caught_up else None
    probe.stop()
    assert writer.stdout is not None
    last_save = float(writer.stdout.read().split()[-1])
    watcher.stop()
    results["longest_stall_ms"] = max(gaps) - 10 if gaps else 0.0
    results["catch_up_after_last_save_ms"] = max(0.0, ((caught_up_at or time.time()) - last_save) * 1e3)
    for label, samples in (
        ("idle", idle_switches),
        ("under_load", loaded_switches),
        ("under_load_fresh_rows", fresh_switches),
    ):
        if samples:
            results[f"page_switch_{label}_median_ms"] = statistics.median(samples)
            results[f"page_switch_{label}_max_ms"] = max(samples)
    say(
        f"page switches timed: {len(idle_switches)} idle, {len(loaded_switches)} under load "
        f"({len(fresh_switches)} of them reloading)"
    )

    ops.shutdown()
    service.close()
    qt_app.quit()
    targets = {
        "window_shown_ms": 500,
        "sort_max_ms": 200,
        "filter_max_ms": 200,
        "longest_stall_ms": 100,
        "catch_up_after_last_save_ms": 2000,
        "page_switch_idle_median_ms": 100,
        "page_switch_idle_max_ms": 100,
        "page_switch_under_load_median_ms": 100,
        "page_switch_under_load_max_ms": 100,
        "page_switch_under_load_fresh_rows_median_ms": 100,
        "page_switch_under_load_fresh_rows_max_ms": 100,
    }
    rows = [f"{'measure':<30} {'ms':>10} {'target':>8}"]
    for name, value in results.items():
        target = targets.get(name)
        rows.append(f"{name:<30} {value:>10.1f} {('< ' + str(target)) if target else '':>8}")
    report = {
        "memories": args.memories,
        "saves": args.saves,
        "results_ms": {k: round(v, 1) for k, v in results.items()},
        "targets_ms": targets,
        "revision": revision(),
        "run_s": time.perf_counter() - started,
    }
    return write_report(report, args.out, "\n".join(rows))


if __name__ == "__main__":
    raise SystemExit(main())
