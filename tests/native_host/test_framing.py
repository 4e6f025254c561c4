"""The browser's framing against a real host process: every message gets one reply and the host keeps going."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tallei_desktop.native_host.framing import MAX_MESSAGE
from tests.native_host.host import NativeHost, frame

pytestmark = pytest.mark.slow


def _status(request_id: int) -> bytes:
    return frame(json.dumps({"id": request_id, "type": "status"}).encode())


def test_a_message_split_across_reads_is_answered_once_whole(host: NativeHost) -> None:
    data = _status(7)
    host.write(data[:2])
    with pytest.raises(pytest.fail.Exception):
        host.reply(timeout=0.3)  # half a header: nothing to answer yet
    host.write(data[2:9])
    host.write(data[9:])
    got = host.reply()
    assert got["id"] == 7 and got["ok"] is True and got["memories"] == 0


def test_two_messages_in_one_write_get_two_replies_in_order(host: NativeHost) -> None:
    host.write(_status(1) + _status(2))
    assert [host.reply()["id"], host.reply()["id"]] == [1, 2]


def test_a_message_over_the_limit_is_refused_skipped_and_the_next_one_answered(host: NativeHost) -> None:
    size = MAX_MESSAGE + 1
    host.write(struct.pack("=I", size) + b"x" * size + _status(3))
    refused = host.reply()
    assert refused["ok"] is False and refused["id"] is None
    assert refused["error"]["code"] == "invalid" and "1,048,577 bytes" in refused["error"]["message"]
    assert host.reply()["id"] == 3


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[1, 2]", "JSON object"),
        (b'{"type": "status"}', '"id"'),
        (b'{"id": true, "type": "status"}', '"id"'),
        (b'{"id": 1}', '"type"'),
    ],
)
def test_a_malformed_message_gets_an_invalid_reply_and_the_host_keeps_running(
    host: NativeHost, data: bytes, words: str
) -> None:
    host.write(frame(data))
    got = host.reply()
    assert got["ok"] is False and got["error"]["code"] == "invalid"
    assert words in got["error"]["message"]
    assert "\n" not in got["error"]["message"]
    assert host.ask({"type": "status"})["ok"] is True


def test_an_unknown_type_is_answered_under_its_id(host: NativeHost) -> None:
    got = host.ask({"type": "delete_everything"})
    assert got["ok"] is False and got["error"]["code"] == "unknown_type"
    assert "status" in got["error"]["message"]


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ({"type": "recall", "draft": "x"}, '"platform" is missing'),
        ({"type": "recall", "platform": "bing", "draft": "x"}, "chatgpt, claude, gemini"),
        ({"type": "recall", "platform": "claude", "draft": 5}, "must be text"),
        ({"type": "recall", "platform": "claude", "draft": "x" * 8_001}, "8,001 characters"),
        ({"type": "recall", "platform": "claude", "draft": "x", "use": "yes"}, "true or false"),
        ({"type": "save", "platform": "claude", "source": "selection"}, '"content" is missing'),
        ({"type": "save", "platform": "claude", "content": "  ", "source": "selection"}, "empty"),
        ({"type": "save", "platform": "claude", "content": "a" * 4_001, "source": "capture"}, "4,001"),
        ({"type": "save", "platform": "claude", "content": "hi there", "source": "web"}, '"source"'),
        (
            {"type": "save", "platform": "claude", "content": "x", "source": "capture", "memory_type": "x"},
            '"memory_type"',
        ),
        ({"type": "search", "query": ""}, "empty"),
        ({"type": "search", "query": "tea", "limit": 51}, "between 1 and 50"),
        ({"type": "search", "query": "tea", "limit": True}, "whole number"),
        ({"type": "recent", "platform": "gemini", "limit": "5"}, "whole number"),
        ({"type": "pause", "platform": "gemini"}, '"paused" is missing'),
        ({"type": "import", "platform": "gemini", "items": []}, "1 to 500"),
        ({"type": "import", "platform": "gemini", "items": ["ok", 3]}, "Item 1"),
        ({"type": "classify", "text": None}, "must be text"),
    ],
)
def test_a_missing_or_ill_typed_field_gets_an_invalid_reply_naming_it(
    host: NativeHost, message: dict[str, object], words: str
) -> None:
    got = host.ask(message)
    assert got["ok"] is False and got["error"]["code"] == "invalid", got
    assert words in got["error"]["message"]


def test_input_ending_in_the_middle_of_a_message_ends_the_host_cleanly(host: NativeHost) -> None:
    assert host.ask({"type": "status"})["ok"] is True
    host.write(struct.pack("=I", 100) + b'{"id": 1, "ty')
    assert host.finish() == 0
    assert host.output_ended(timeout=5)


def test_nothing_but_replies_reaches_stdout(host: NativeHost) -> None:
    """Every byte on stdout belongs to a frame: the reader would fail on anything else."""
    for _ in range(3):
        assert host.ask({"type": "status"})["ok"] is True
    assert host.finish() == 0
    assert host.output_ended(timeout=5)


@pytest.mark.parametrize(
    "caller",
    [
        ["chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"],
        [],
        ["/home/x/.mozilla/native-messaging-hosts/app.tallei.desktop.json", "other@example.org"],
    ],
)
def test_a_caller_other_than_our_extension_is_refused_before_the_store_opens(
    host_env: dict[str, str], tmp_path: Path, caller: list[str]
) -> None:
    with NativeHost(host_env, tmp_path / "stderr.log", caller=caller) as refused:
        code = refused.finish()
        assert code == 2
        assert refused.output_ended(timeout=5)
        lines = refused.stderr_tail().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tallei-desktop native-host: refused: started by")
    assert "not by Tallei's browser extension" in lines[0]
    assert not (tmp_path / "data" / "tallei.db").exists()


def test_firefox_arguments_naming_our_extension_are_accepted(
    host_env: dict[str, str], tmp_path: Path
) -> None:
    manifest = str(tmp_path / "app.tallei.desktop.json")
    with NativeHost(host_env, tmp_path / "stderr.log", caller=[manifest, "tallei@tallei.app"]) as firefox:
        assert firefox.ask({"type": "status"})["ok"] is True
        assert firefox.finish() == 0


def test_chrome_on_windows_arguments_are_accepted(host_env: dict[str, str], tmp_path: Path) -> None:
    caller = ["chrome-extension://blbpjdkgbfodmafkifaaoojhbdmeipjp/", "--parent-window=0"]
    with NativeHost(host_env, tmp_path / "stderr.log", caller=caller) as chrome:
        assert chrome.ask({"type": "status"})["ok"] is True
        assert chrome.finish() == 0
