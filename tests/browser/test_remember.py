"""Remember this, and import from a site's memory page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import SITES, Browser, open_store, wait_for, wait_for_chip

pytestmark = pytest.mark.browser


def memories_from(browser: Browser, platform: str) -> dict[str, str]:
    """What the store holds from ``platform``: content → type."""
    with open_store(browser.env) as svc:
        return {m.content: str(m.type) for m in svc.list(platform=platform, limit=500)}


def select_text_of(page: Page, selector: str) -> None:
    page.evaluate(
        """(sel) => {
            const range = document.createRange();
            range.selectNodeContents(document.querySelector(sel));
            getSelection().removeAllRanges();
            getSelection().addRange(range);
        }""",
        selector,
    )


def remember_shortcut(browser: Browser, page: Page) -> dict[str, Any]:
    """What the Remember-this shortcut does in the page's tab (headless Chromium has no key bindings)."""
    reply: dict[str, Any] = browser.worker.evaluate(
        """async (url) => {
            const tab = (await chrome.tabs.query({})).find((t) => t.url === url);
            return globalThis.talleiBackground.onCommand("remember-selection", tab);
        }""",
        page.url,
    )
    return reply


def send(page: Page, platform: str, text: str) -> None:
    _, composer, sent = SITES[platform]
    before = page.locator(sent).count()
    page.click(composer)
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    page.locator(sent).nth(before).wait_for()


def test_remember_this_saves_the_selection_under_the_sites_platform(browser: Browser) -> None:
    page = browser.page("https://claude.ai/new")
    send(page, "claude", "Our staging database lives in eu-west-2.")
    select_text_of(page, ".font-claude-message")  # an assistant's reply, chosen by the person
    reply = remember_shortcut(browser, page)
    assert reply["ok"], reply
    assert wait_for_chip(page, "done") == "Saved to Tallei"
    assert "Understood." in memories_from(browser, "claude")
    assert "Understood." not in memories_from(browser, "chatgpt")


def test_remember_this_leaves_out_a_memory_block_in_the_selection(browser: Browser) -> None:
    page = browser.page("https://gemini.google.com/app")
    page.click(SITES["gemini"][1])
    for line in ("Biscuit's vet is Dr Okafor.", "[Tallei memory]", "an earlier memory", "[/Tallei memory]"):
        page.keyboard.type(line)
        page.keyboard.press("Shift+Enter")
    select_text_of(page, SITES["gemini"][1])
    assert remember_shortcut(browser, page)["ok"]
    saved = memories_from(browser, "gemini")
    assert "Biscuit's vet is Dr Okafor." in saved
    assert not any("Tallei memory" in text or "an earlier memory" in text for text in saved)


def test_remember_this_on_a_paused_site_says_so_and_saves_nothing(browser: Browser) -> None:
    browser.request("pause", platform="chatgpt", paused=True)
    page = browser.page("https://chatgpt.com/")
    send(page, "chatgpt", "The office wifi is called Larch.")
    select_text_of(page, "[data-message-author-role='user']")
    reply = remember_shortcut(browser, page)
    assert reply["error"]["code"] == "paused"
    assert wait_for_chip(page, "notice").startswith("Access for chatgpt is paused in Tallei")
    assert "The office wifi is called Larch." not in memories_from(browser, "chatgpt")


@pytest.mark.parametrize(
    ("platform", "url", "items"),
    [
        (
            "chatgpt",
            "https://chatgpt.com/#settings/Personalization",
            [
                "Is a pediatric nurse in Leeds",
                "Prefers answers with metric units",
                "Is learning Portuguese for a move to Porto",
            ],
        ),
        (
            "claude",
            "https://claude.ai/settings/capabilities",
            ["Works on a fork of an open-source GIS library", "Prefers British spelling in documents"],
        ),
        ("gemini", "https://gemini.google.com/saved-info", ["Has a dog called Biscuit"]),
    ],
)
def test_the_memory_page_imports_what_it_lists(
    browser: Browser, platform: str, url: str, items: list[str]
) -> None:
    page = browser.page(url)
    offer = wait_for_chip(page, "count", role="import")
    assert str(len(items)) in offer or len(items) == 1
    page.locator("tallei-chip[data-role='import'] .chip").click()
    assert wait_for_chip(page, "done", role="import") == f"Imported {len(items)} into Tallei"
    saved = memories_from(browser, platform)
    assert all(item in saved for item in items)
    # A second import finds them all there already.
    page.locator("tallei-chip[data-role='import'] .chip").click()
    wait_for(
        lambda: "already there" in wait_for_chip(page, "done", role="import"),
        what="the second import to say they were there",
    )


def test_remember_this_from_the_menu_uses_the_menus_text_when_the_page_has_no_selection(
    browser: Browser,
) -> None:
    page = browser.page("https://gemini.google.com/app")
    reply = browser.worker.evaluate(
        """async (url) => {
            const tab = (await chrome.tabs.query({})).find((t) => t.url === url);
            return globalThis.talleiBackground.rememberFromTab(tab, "Biscuit eats twice a day.");
        }""",
        page.url,
    )
    assert reply["ok"] and not reply["confirmed_existing"], reply
    assert "Biscuit eats twice a day." in memories_from(browser, "gemini")
