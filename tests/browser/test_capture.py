"""Capture of the person's own sent statements: off by default, never a question, never the added block."""

from __future__ import annotations

import pytest

from tests.browser.conftest import SITES, Browser, open_store, wait_for, wait_for_chip
from tests.browser.test_remember import memories_from, send

pytestmark = pytest.mark.browser


def test_capture_is_off_by_default_and_keeps_only_the_persons_statements(browser: Browser) -> None:
    with open_store(browser.env) as svc:
        svc.save("I keep my climbing gear in the blue locker.", platform="claude")
    page = browser.page("https://chatgpt.com/")
    send(page, "chatgpt", "I prefer my coffee without sugar.")  # capture is off: never saved
    browser.set_site("chatgpt", capture=True)
    send(page, "chatgpt", "What time does the climbing gym open on Sundays?")  # a question: not kept

    # A statement with a memory block added: only the person's own words are saved.
    page.click(SITES["chatgpt"][1])
    page.keyboard.type("I decided to book the climbing course for March.")
    wait_for_chip(page, "count")
    page.keyboard.press("Tab")
    wait_for_chip(page, "done")
    page.keyboard.press("Enter")

    wait_for(
        lambda: "I decided to book the climbing course for March." in memories_from(browser, "chatgpt"),
        what="the captured statement",
    )
    saved = memories_from(browser, "chatgpt")
    assert saved["I decided to book the climbing course for March."] == "decision"  # the type classify gave
    assert "I prefer my coffee without sugar." not in saved
    assert not any("climbing gym" in text for text in saved)
    assert not any("Tallei memory" in text or "blue locker" in text for text in saved)
    assert not any("night train" in text for text in saved)  # the fixture assistant's reply
