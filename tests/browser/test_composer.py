"""Memory for what the person is writing: the chip's count, Tab and the block, the per-site choice."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import SITES, Browser, chip_state, open_store, wait_for, wait_for_chip

pytestmark = pytest.mark.browser

SEEDS = (
    "I always take the night train when I travel to Vienna.",
    "My sister Ana lives in Vienna and works as a cellist.",
    "I prefer aisle seats on long trains.",
)
DRAFT = "Plan a weekend trip to Vienna by night train"
OPEN = "[Tallei memory]"


@pytest.fixture(scope="module")
def seeded(session_browser: Browser) -> None:
    with open_store(session_browser.env) as svc:
        for text in SEEDS:
            svc.save(text, platform="claude")


def recall_now(browser: Browser) -> tuple[int, list[str]]:
    """How many memories recall gives for DRAFT on the store as it is now, and which."""
    with open_store(browser.env) as svc:
        items = svc.recall(DRAFT).items
        return len(items), [item.memory.id for item in items]


def reference_counts(browser: Browser, ids: list[str]) -> list[int]:
    with open_store(browser.env) as svc:
        return [svc.get(i).reference_count for i in ids]


def counts_after_uses_land(browser: Browser, ids: list[str], marker: str) -> list[int]:
    """Reference counts once every use recorded so far is written.

    The host writes uses in its background round, in order: a use of a fresh memory, asked for
    now, lands with or after everything before it.
    """
    with open_store(browser.env) as svc:
        sentinel = svc.save(f"Sentinel {marker} for the recorded uses.", platform="gemini").id
    reply = browser.request("recall", platform="gemini", draft=f"Sentinel {marker}", use=True)
    assert sentinel in reply["ids"], reply
    wait_for(lambda: reference_counts(browser, [sentinel]) == [2], what="the sentinel's use to be written")
    return reference_counts(browser, ids)


def open_site(browser: Browser, platform: str) -> tuple[Page, str, str]:
    url, composer, sent = SITES[platform]
    page = browser.page(url)
    page.click(composer)
    return page, composer, sent


@pytest.mark.parametrize("platform", ["chatgpt", "claude", "gemini"])
def test_chip_counts_recall_and_tab_adds_the_block_once(
    browser: Browser, seeded: None, platform: str
) -> None:
    count, ids = recall_now(browser)
    assert count >= 2
    before = reference_counts(browser, ids)
    page, composer, sent = open_site(browser, platform)
    page.keyboard.type(DRAFT)
    text = wait_for_chip(page, "count")
    assert text.startswith(f"{count} memories")

    page.keyboard.press("Tab")
    wait_for_chip(page, "done")
    draft = page.inner_text(composer)
    assert draft.count(OPEN) == 1 and "[/Tallei memory]" in draft
    assert draft.startswith(DRAFT)
    if platform != "gemini":  # ProseMirror takes the block as a paste: a paragraph a line
        assert page.locator(f"{composer} p").count() >= draft.count("\n") // 2
    with open_store(browser.env) as svc:
        assert all(svc.get(i).content in draft for i in ids)
    page.keyboard.press("Tab")  # the block is there: Tab is the page's again
    assert page.inner_text(composer).count(OPEN) == 1

    page.keyboard.press("Enter")
    message = page.locator(sent).last
    message.wait_for()
    assert message.inner_text().count(OPEN) == 1
    # Looking while typing never counts; adding the block is one use, however often Tab or Enter follow.
    after = counts_after_uses_land(browser, ids, f"zebra{platform}")
    gained = [a - b for a, b in zip(after, before, strict=True)]
    assert set(gained) <= {0, 1} and sum(gained) >= 1, f"uses gained: {gained}"


def test_tab_is_left_alone_when_the_caret_is_not_at_the_end(browser: Browser, seeded: None) -> None:
    page, composer, _ = open_site(browser, "chatgpt")
    page.keyboard.type(DRAFT)
    wait_for_chip(page, "count")
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    assert OPEN not in page.inner_text(composer)
    # At the end again, Tab adds it.
    page.click(composer)
    page.keyboard.press("End")
    page.keyboard.press("Tab")
    wait_for_chip(page, "done")
    assert page.inner_text(composer).count(OPEN) == 1


def test_a_click_on_the_chip_adds_the_block(browser: Browser, seeded: None) -> None:
    page, composer, _ = open_site(browser, "gemini")
    page.keyboard.type(DRAFT)
    wait_for_chip(page, "count")
    page.locator("tallei-chip .chip").first.click()
    wait_for_chip(page, "done")
    assert page.inner_text(composer).count(OPEN) == 1


def test_always_adds_the_block_when_sending_even_before_the_chip_shows(
    browser: Browser, seeded: None
) -> None:
    browser.set_site("chatgpt", mode="always")
    page, _, sent = open_site(browser, "chatgpt")
    page.keyboard.type(DRAFT)
    assert "added when you send" in wait_for_chip(page, "count")
    page.keyboard.press("Enter")
    first = page.locator(sent).nth(0)
    first.wait_for()
    assert first.inner_text().startswith(DRAFT) and first.inner_text().count(OPEN) == 1

    # Sent straight away: the message waits for its memories, then goes with them.
    page.keyboard.type("Which night train to Vienna is quietest?")
    page.keyboard.press("Enter")
    second = page.locator(sent).nth(1)
    second.wait_for()
    assert second.inner_text().count(OPEN) == 1


def test_always_never_adds_a_second_block(browser: Browser, seeded: None) -> None:
    browser.set_site("claude", mode="always")
    page, _, sent = open_site(browser, "claude")
    for line in (DRAFT, OPEN, "Something I pasted", "[/Tallei memory]"):
        page.keyboard.type(line)
        page.keyboard.press("Shift+Enter")
    page.keyboard.press("Enter")
    message = page.locator(sent).first
    message.wait_for()
    assert message.inner_text().count(OPEN) == 1
    assert "Something I pasted" in message.inner_text()


def test_a_paused_site_says_so_in_the_chip(browser: Browser, seeded: None) -> None:
    assert browser.request("pause", platform="chatgpt", paused=True)["paused"] == ["chatgpt"]
    page, composer, _ = open_site(browser, "chatgpt")
    page.keyboard.type(DRAFT)
    assert wait_for_chip(page, "notice") == "Tallei is paused for ChatGPT"
    page.keyboard.press("Tab")
    assert OPEN not in page.inner_text(composer)
    assert chip_state(page) == ("notice", "Tallei is paused for ChatGPT")


def test_never_hides_the_chip_and_leaves_tab_to_the_page(browser: Browser, seeded: None) -> None:
    page, composer, _ = open_site(browser, "gemini")
    page.keyboard.type(DRAFT)
    wait_for_chip(page, "count")
    browser.set_site("gemini", mode="never")
    wait_for(lambda: chip_state(page) is None, what="the chip to hide once the site is set to never")
    page.keyboard.press("Tab")
    assert OPEN not in page.inner_text(composer)


def test_a_textarea_composer_gets_the_block_once(browser: Browser, seeded: None) -> None:
    page = browser.page("https://chatgpt.com/?textarea")
    page.click("textarea#prompt-textarea")
    page.keyboard.type(DRAFT)
    wait_for_chip(page, "count")
    page.keyboard.press("Tab")
    wait_for_chip(page, "done")
    draft = page.input_value("textarea#prompt-textarea")
    assert draft.startswith(DRAFT) and draft.count(OPEN) == 1
    page.keyboard.press("Enter")
    message = page.locator("[data-message-author-role='user']").first
    message.wait_for()
    assert message.inner_text().count(OPEN) == 1
