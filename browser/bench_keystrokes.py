"""What a keystroke costs in the composer: the content script's input and keydown handlers, timed in Chromium.

Types a draft into each fixture site (ChatGPT, Claude, Gemini) through Playwright with the real
native host behind the extension, and prints the handlers' times per keystroke (median, p95,
max) from performance.now() around each call; writes the figures as JSON with --json. The pages
are served cross-origin isolated, so the clock reads in 5 µs steps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.browser.conftest import SITES, build_extension, host_environment, launch, open_store  # noqa: E402
from tests.browser.sites import serve_sites  # noqa: E402

TEXT = "Plan a weekend in Vienna going by night train, with a day for the museums and one for walking. "


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=300, help="keystrokes per site")
    parser.add_argument("--delay", type=float, default=20, help="milliseconds between keystrokes")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    text = (TEXT * (args.chars // len(TEXT) + 1))[: args.chars]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp, serve_sites() as port, sync_playwright() as pw:
        root = Path(tmp)
        env = host_environment(root / "tallei")
        with open_store(env) as svc:
            svc.save("I always take the night train when I travel to Vienna.", platform="claude")
        with launch(pw, build_extension(root / "ext")["chrome"], root / "profile", port, env) as browser:
            # Before the content script starts (at document idle), the page asks it to time its handlers.
            browser.context.add_init_script(
                "document.addEventListener('DOMContentLoaded', "
                "() => document.documentElement.setAttribute('data-tallei-bench', ''))"
            )
            for platform, (url, composer, _) in SITES.items():
                page = browser.context.new_page()
                page.goto(url)
                page.click(composer)
                page.keyboard.type(text, delay=args.delay)
                isolated = page.evaluate("() => crossOriginIsolated")
                page.evaluate("() => document.dispatchEvent(new CustomEvent('tallei-bench-report'))")
                times = json.loads(page.evaluate("() => document.documentElement.dataset.talleiBenchResult"))
                for kind in ("input", "keydown"):
                    ms = times[kind]
                    results[f"{platform} {kind}"] = {
                        "keystrokes": len(ms),
                        "median_us": statistics.median(ms) * 1000,
                        "p95_us": quantile(ms, 0.95) * 1000,
                        "max_us": max(ms) * 1000,
                        "clock_step_us": 5 if isolated else 100,
                    }
                page.close()
    print(f"{'handler':<18}{'keys':>6}{'median µs':>11}{'p95 µs':>9}{'max µs':>9}")
    for name, r in results.items():
        print(f"{name:<18}{r['keystrokes']:>6}{r['median_us']:>11.1f}{r['p95_us']:>9.1f}{r['max_us']:>9.1f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
