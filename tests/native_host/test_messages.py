"""Each message type against a real host on a real encrypted store with the real model."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import keyring.backends.null
import pytest

from tallei_desktop.app.key_agent import NOT_RUNNING_MESSAGE, KeyAgent
from tallei_desktop.config import load_settings
from tallei_desktop.core import SecretStore
from tallei_desktop.factory import build_service
from tests.native_host.conftest import PASSPHRASE
from tests.native_host.host import TIMEOUT_S, NativeHost

pytestmark = pytest.mark.slow


def _save(host: NativeHost, content: str, platform: str = "chatgpt", **extra: object) -> dict[str, object]:
    got = host.ask({"type": "save", "platform": platform, "content": content, "source": "selection", **extra})
    assert got["ok"] is True, got
    return got


def test_a_save_is_recalled_for_a_draft_and_found_by_meaning(host: NativeHost) -> None:
    saved = _save(host, "My daughter Maya is allergic to peanuts")
    assert saved["type"] == "fact" and saved["confirmed_existing"] is False
    again = _save(host, "my daughter maya is allergic to peanuts", platform="claude")
    assert again["memory_id"] == saved["memory_id"] and again["confirmed_existing"] is True

    recalled = host.ask(
        {"type": "recall", "platform": "chatgpt", "draft": "Plan a snack menu for Maya's party"}
    )
    assert recalled["ok"] is True
    assert "My daughter Maya is allergic to peanuts" in recalled["block"]
    assert recalled["ids"] == [saved["memory_id"]] and recalled["count"] == 1 and recalled["conflicts"] == 0

    # By meaning, once the background worker has embedded it.
    deadline = time.monotonic() + TIMEOUT_S
    while not (found := host.ask({"type": "search", "query": "nut allergies", "limit": 5}))["hits"]:
        assert time.monotonic() < deadline, "the memory was never found by meaning"
    assert [h["id"] for h in found["hits"]] == [saved["memory_id"]]
    [hit] = found["hits"]
    assert hit["platforms"] == ["chatgpt", "claude"] and hit["type"] == "fact"
    assert isinstance(hit["score"], float) and hit["date"].startswith("20")

    status = host.ask({"type": "status"})
    assert status["memories"] == 1 and status["semantic_search"] is True and status["paused"] == []


def test_a_long_draft_is_recalled_by_its_end(host: NativeHost) -> None:
    _save(host, "The staging server is called bluefin")
    draft = "filler words " * 600 + "what is the staging server called"
    recalled = host.ask({"type": "recall", "platform": "claude", "draft": draft[:8_000]})
    assert recalled["ok"] is True and "bluefin" in recalled["block"]


def test_a_memory_type_given_wins_over_the_detected_one(host: NativeHost) -> None:
    saved = _save(host, "The deploy broke on Friday", memory_type="lesson")
    assert saved["type"] == "lesson"


def test_only_a_recall_in_use_counts(host: NativeHost, host_env: dict[str, str]) -> None:
    saved = _save(host, "I prefer green tea in the afternoon", platform="gemini")
    for _ in range(3):
        assert host.ask({"type": "recall", "platform": "gemini", "draft": "tea", "use": False})["count"] == 1
    assert host.ask({"type": "search", "query": "tea"})["ok"] is True
    assert host.finish() == 0
    assert _reference_count(host_env, str(saved["memory_id"])) == 1

    with NativeHost(host_env, Path(host_env["TALLEI_LOG_DIR"]) / "second.log") as second:
        assert second.ask({"type": "recall", "platform": "gemini", "draft": "tea", "use": True})["count"] == 1
        assert second.finish() == 0
    assert _reference_count(host_env, str(saved["memory_id"])) == 2


def _reference_count(env: dict[str, str], memory_id: str) -> int:
    settings = load_settings(environ=env, config_path=Path(env["TALLEI_CONFIG"]))
    no_keyring = keyring.backends.null.Keyring()  # type: ignore[no-untyped-call]
    secrets = SecretStore(settings.data_dir, passphrase=settings.passphrase, backend=no_keyring)
    service = build_service(settings, secrets=secrets, background=False, preload_model=False)
    try:
        return service.get(memory_id).reference_count
    finally:
        service.close()


def test_recent_lists_what_that_site_saved_newest_first(host: NativeHost) -> None:
    first = _save(host, "The team offsite is in Lisbon")
    second = _save(host, "We decided to ship the beta in March")
    _save(host, "I live in Ghent", platform="claude")
    recent = host.ask({"type": "recent", "platform": "chatgpt", "limit": 5})
    assert [m["id"] for m in recent["memories"]] == [second["memory_id"], first["memory_id"]]
    assert recent["memories"][0]["type"] == "decision"
    assert len(host.ask({"type": "recent", "platform": "chatgpt", "limit": 1})["memories"]) == 1


def test_a_paused_site_is_refused_and_resumed(host: NativeHost) -> None:
    _save(host, "I take the train to work")
    paused = host.ask({"type": "pause", "platform": "chatgpt", "paused": True})
    assert paused["paused"] == ["chatgpt"]
    for message in (
        {"type": "recall", "platform": "chatgpt", "draft": "commute"},
        {"type": "save", "platform": "chatgpt", "content": "I cycle now", "source": "capture"},
        {"type": "recent", "platform": "chatgpt"},
        {"type": "import", "platform": "chatgpt", "items": ["I cycle now"]},
    ):
        got = host.ask(message)
        assert got["ok"] is False and got["error"]["code"] == "paused", got
        assert "chatgpt is paused in Tallei" in got["error"]["message"]
        assert "Assistants page" in got["error"]["message"]
    assert host.ask({"type": "status"})["paused"] == ["chatgpt"]
    assert host.ask({"type": "recall", "platform": "claude", "draft": "commute"})["count"] == 1
    assert host.ask({"type": "pause", "platform": "chatgpt", "paused": False})["paused"] == []
    assert host.ask({"type": "recall", "platform": "chatgpt", "draft": "commute"})["count"] == 1
    assert host.ask({"type": "status"})["memories"] == 1


def test_import_saves_each_item_under_the_site(host: NativeHost) -> None:
    _save(host, "I like jazz", platform="claude")
    got = host.ask(
        {
            "type": "import",
            "platform": "gemini",
            "items": ["I like jazz", "My cat is Pixel", "My cat is Pixel"],
        }
    )
    assert got == {"id": got["id"], "ok": True, "added": 1, "confirmed": 2, "skipped": 0}
    recent = host.ask({"type": "recent", "platform": "gemini"})
    assert [m["content"] for m in recent["memories"]] == ["My cat is Pixel"]


@pytest.mark.parametrize(
    ("text", "kind", "worth"),
    [
        ("I prefer dark mode in every editor", "preference", True),
        ("We decided to use Postgres for billing", "decision", True),
        ("What is the capital of Peru?", None, False),
        ("how do I undo a git rebase", None, False),
        ("thanks!", None, False),
        ("The meeting with Sam was yesterday at noon", "event", False),
    ],
)
def test_classify_keeps_lasting_statements_only(
    host: NativeHost, text: str, kind: str | None, worth: bool
) -> None:
    got = host.ask({"type": "classify", "text": text})
    assert got["ok"] is True and got["worth_keeping"] is worth
    if kind is not None:
        assert got["type"] == kind


def test_classify_answers_after_the_store_has_opened(host: NativeHost) -> None:
    # Opening the store imports the classifier's module; the function must still be what answers.
    assert host.ask({"type": "status"})["ok"] is True
    _save(host, "I prefer tea")
    got = host.ask({"type": "classify", "text": "I prefer dark mode in every editor"})
    assert got["ok"] is True, got
    assert got["type"] == "preference" and got["worth_keeping"] is True


def test_a_locked_store_says_so_until_the_app_unlocks_it(host: NativeHost, host_env: dict[str, str]) -> None:
    _save(host, "I prefer tea")
    assert host.finish() == 0
    runtime = Path(tempfile.mkdtemp(prefix="ta-"))
    os.chmod(runtime, 0o700)
    locked_env = {k: v for k, v in host_env.items() if k != "TALLEI_PASSPHRASE"}
    locked_env["TALLEI_RUNTIME_DIR"] = str(runtime)
    with NativeHost(locked_env, Path(host_env["TALLEI_LOG_DIR"]) / "locked.log") as locked:
        for message in ({"type": "status"}, {"type": "recall", "platform": "claude", "draft": "tea"}):
            got = locked.ask(message)
            assert got["ok"] is False and got["error"] == {"code": "locked", "message": NOT_RUNNING_MESSAGE}
        # The app starts and is unlocked: the very next message opens the store.
        settings = load_settings(environ=host_env, config_path=Path(host_env["TALLEI_CONFIG"]))
        no_keyring = keyring.backends.null.Keyring()  # type: ignore[no-untyped-call]
        key = SecretStore(settings.data_dir, passphrase=PASSPHRASE, backend=no_keyring).store_key(
            create=False
        )
        agent = KeyAgent(runtime, settings.data_dir).start()
        try:
            agent.unlock(key)
            got = locked.ask({"type": "recall", "platform": "claude", "draft": "tea"})
            assert got["ok"] is True and "I prefer tea" in got["block"]
            assert locked.finish() == 0
        finally:
            agent.stop()
