"""Screenshots of the browser extension: the chip beside ChatGPT's composer, and the toolbar popup.

Writes docs/screenshots/browser-chip.png and docs/screenshots/browser-popup.png. Needs Chromium
(/usr/bin/chromium) and the dev extras (Playwright); the pages are the test fixtures, served
locally under the sites' names, and Tallei is the real native host on a throwaway store.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.browser.conftest import (  # noqa: E402
    SITES,
    build_extension,
    host_environment,
    launch,
    open_store,
    wait_for_chip,
)
from tests.browser.sites import serve_sites  # noqa: E402

OUT = REPO / "docs" / "screenshots"
MEMORIES = (
    ("I always take the night train when I travel to Vienna.", "claude"),
    ("My sister Ana lives in Vienna and works as a cellist.", "chatgpt"),
    ("I prefer aisle seats on long trains.", "gemini"),
    ("Book trains through the ÖBB app; it keeps my discount card.", "chatgpt"),
)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, serve_sites() as port, sync_playwright() as pw:
        root = Path(tmp)
        extension = build_extension(root / "extension")["chrome"]
        env = host_environment(root / "tallei")
        with open_store(env) as svc:
            for text, platform in MEMORIES:
                svc.save(text, platform=platform)
        with launch(pw, extension, root / "profile", port, env) as browser:
            page = browser.context.new_page()
            page.set_viewport_size({"width": 900, "height": 420})
            page.goto(SITES["chatgpt"][0])
            page.click(SITES["chatgpt"][1])
            page.keyboard.type("Plan a weekend in Vienna, going by night train")
            wait_for_chip(page, "count")
            page.screenshot(
                path=str(OUT / "browser-chip.png"), clip={"x": 60, "y": 250, "width": 780, "height": 170}
            )

            popup = browser.popup(page)
            popup.fill("#query", "Vienna")
            popup.locator("#hits li").nth(1).wait_for()
            popup.locator("#recent li").first.wait_for()
            height = popup.evaluate("() => document.documentElement.scrollHeight")
            popup.set_viewport_size({"width": 360, "height": height})
            popup.screenshot(path=str(OUT / "browser-popup.png"), full_page=True)
    print(OUT / "browser-chip.png")
    print(OUT / "browser-popup.png")


if __name__ == "__main__":
    main()
