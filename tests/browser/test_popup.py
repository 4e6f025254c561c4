"""The toolbar popup: status, search, what this site saved, pause, the block for a draft, and its one-line problems."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from playwright.sync_api import Page, Playwright

from tallei_desktop.app.browsers import CHROMIUM_EXTENSION_ID
from tests.browser.conftest import (
    SITES,
    Browser,
    host_environment,
    host_pids,
    launch,
    open_store,
    wait_for,
    wait_for_chip,
)

pytestmark = pytest.mark.browser


def status_of(popup: Page) -> str:
    return popup.inner_text("#status")


def test_popup_searches_lists_recent_and_pauses_the_site(browser: Browser) -> None:
    with open_store(browser.env) as svc:
        svc.save("My bike is a green Brompton with a dynamo hub.", platform="chatgpt")
        svc.save("The Brompton's tyres take 6.5 bar.", platform="gemini")
        total = svc.count()
    tab = browser.page("https://chatgpt.com/")
    popup = browser.popup(tab)
    assert status_of(popup) == f"Connected · {total} memories"
    assert popup.inner_text("#site-name") == "On ChatGPT"
    popup.locator("#recent li").first.wait_for()
    recent = popup.inner_text("#recent")
    assert "green Brompton" in recent and "6.5 bar" not in recent

    popup.fill("#query", "Brompton")
    popup.locator("#hits li").nth(1).wait_for()
    hits = popup.inner_text("#hits")
    assert "green Brompton" in hits and "6.5 bar" in hits

    popup.click("#pause")
    wait_for(lambda: status_of(popup).startswith("Paused:"), what="the popup to say the site is paused")
    assert status_of(popup) == "Paused: ChatGPT cannot use or save memories in Tallei."
    assert popup.inner_text("#pause") == "Resume ChatGPT"
    with open_store(browser.env) as svc:
        assert svc.paused_platforms() == frozenset({"chatgpt"})
    tab.click(SITES["chatgpt"][1])
    tab.keyboard.type("Which pump fits a Brompton?")
    assert wait_for_chip(tab, "notice") == "Tallei is paused for ChatGPT"

    popup.click("#pause")
    wait_for(lambda: status_of(popup).startswith("Connected"), what="the popup to say it is connected again")
    with open_store(browser.env) as svc:
        assert svc.paused_platforms() == frozenset()


def test_popup_gives_the_block_for_the_current_draft_and_keeps_the_sites_choice(browser: Browser) -> None:
    with open_store(browser.env) as svc:
        svc.save("I run the Thursday book club at the library.", platform="claude")
    tab = browser.page("https://claude.ai/new")
    tab.click(SITES["claude"][1])
    tab.keyboard.type("Suggest a novel for the Thursday book club")
    popup = browser.popup(tab)
    assert popup.input_value("#draft") == "Suggest a novel for the Thursday book club"
    popup.click("#get-block")
    popup.locator("#block:not([hidden])").wait_for()
    block = popup.inner_text("#block")
    assert block.startswith("[Tallei memory]") and block.rstrip().endswith("[/Tallei memory]")
    assert "Thursday book club at the library" in block
    popup.click("#copy")
    wait_for(lambda: popup.inner_text("#copy") == "Copied", what="the block to be copied")
    browser.context.grant_permissions(["clipboard-read"], origin="https://claude.ai")
    tab.bring_to_front()
    assert tab.evaluate("() => navigator.clipboard.readText()") == block

    assert popup.input_value("#mode") == "ask" and not popup.is_checked("#capture")
    popup.select_option("#mode", "always")
    popup.check("#capture")
    wait_for(
        lambda: (
            browser.worker.evaluate("() => globalThis.talleiShared.loadSettings()")["claude"]
            == {"mode": "always", "capture": True}
        ),
        what="the popup's choice to be stored",
    )


def test_popup_says_how_to_connect_when_tallei_is_not_registered(
    playwright_driver: Playwright, extension_builds: dict[str, Path], site_port: int, tmp_path: Path
) -> None:
    env = host_environment(tmp_path)
    with launch(
        playwright_driver, extension_builds["chrome"], tmp_path / "profile", site_port, env, register=False
    ) as b:
        popup = b.popup(b.page("https://gemini.google.com/app"))
        assert status_of(popup) == (
            # Debian's Chromium: its own folder for host manifests, so `connect chromium`, not chrome.
            "Tallei is not connected to this browser: run tallei-desktop connect chromium "
            "(or use the Assistants page of the Tallei app)."
        )
        assert popup.inner_text("#status code") == "tallei-desktop connect chromium"


def test_popup_says_tallei_is_locked_on_a_passphrase_store_without_the_app(
    playwright_driver: Playwright, extension_builds: dict[str, Path], site_port: int, tmp_path: Path
) -> None:
    with open_store(host_environment(tmp_path)):  # a passphrase-guarded store exists
        pass
    env = host_environment(tmp_path, passphrase=False)
    with launch(playwright_driver, extension_builds["chrome"], tmp_path / "profile", site_port, env) as b:
        tab = b.page("https://chatgpt.com/")
        tab.click(SITES["chatgpt"][1])
        tab.keyboard.type("Where did I park?")
        assert wait_for_chip(tab, "notice") == "Tallei is locked"
        popup = b.popup(tab)
        assert status_of(popup).startswith(
            "Tallei is locked: open the Tallei app and unlock it, then try again"
        )
        assert popup.get_attribute("body", "data-state") == "locked"


def test_options_page_keeps_each_sites_choice(browser: Browser) -> None:
    page = browser.page(f"chrome-extension://{CHROMIUM_EXTENSION_ID}/options/options.html")
    page.locator("#mode-gemini").wait_for()
    assert [page.input_value(f"#mode-{p}") for p in ("chatgpt", "claude", "gemini")] == ["ask"] * 3
    assert not any(page.is_checked(f"#capture-{p}") for p in ("chatgpt", "claude", "gemini"))
    page.select_option("#mode-gemini", "never")
    page.check("#capture-claude")
    wait_for(
        lambda: (
            browser.worker.evaluate("() => globalThis.talleiShared.loadSettings()")
            == {
                "chatgpt": {"mode": "ask", "capture": False},
                "claude": {"mode": "ask", "capture": True},
                "gemini": {"mode": "never", "capture": False},
            }
        ),
        what="the options page's choices to be stored",
    )


def test_the_extension_starts_the_host_again_when_it_stops(browser: Browser) -> None:
    assert browser.request("status")["ok"]
    [first] = host_pids(browser.env)
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: first not in host_pids(browser.env), what="the host to stop")
    reply = browser.request("status")
    assert reply["ok"], reply
    assert host_pids(browser.env) not in ([], [first])
