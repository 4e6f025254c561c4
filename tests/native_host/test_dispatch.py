"""The dispatcher in-process, where a port is the point: the app starter, and replies cut to fit."""

from __future__ import annotations

import json
import sys

from tallei_desktop.core import MemoryService
from tallei_desktop.native_host.dispatch import Dispatcher, fit
from tallei_desktop.native_host.entry import allowed_caller, app_command
from tallei_desktop.native_host.framing import MAX_MESSAGE


def _no_store() -> MemoryService:
    raise AssertionError("this message needs no store")


def test_open_app_starts_the_app_and_answers_without_the_store() -> None:
    started: list[bool] = []
    dispatcher = Dispatcher(_no_store, start_app=lambda: started.append(True) or True)
    assert dispatcher.handle({"id": "a", "type": "open_app"}) == {"id": "a", "ok": True, "started": True}
    assert started == [True]


def test_the_first_reply_starts_the_model_load_once() -> None:
    calls: list[int] = []
    dispatcher = Dispatcher(_no_store, start_app=lambda: False, after_first=lambda: calls.append(1))
    dispatcher.handle({"id": 1, "type": "nope"})
    dispatcher.handle({"id": 2, "type": "open_app"})
    assert calls == [1]


def test_from_source_the_app_is_this_python_running_the_gui() -> None:
    assert app_command() == [sys.executable, "-m", "tallei_desktop", "gui"]


def test_only_our_origin_or_firefox_id_is_allowed() -> None:
    assert allowed_caller(["chrome-extension://blbpjdkgbfodmafkifaaoojhbdmeipjp/", "--parent-window=5"])
    assert allowed_caller(["/x/app.tallei.desktop.json", "tallei@tallei.app"]) == "tallei@tallei.app"
    assert allowed_caller(["chrome-extension://blbpjdkgbfodmafkifaaoojhbdmeipjq/"]) is None
    assert allowed_caller(["chrome-extension://blbpjdkgbfodmafkifaaoojhbdmeipjp"]) is None


def _size(reply: dict[str, object]) -> int:
    return len(json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode())


def test_a_list_too_large_for_the_browser_is_cut_and_says_so() -> None:
    hits = [{"id": f"{i:012x}", "content": "é" * 16_000} for i in range(50)]
    reply = fit({"id": 1, "ok": True, "hits": hits})
    assert _size(reply) <= MAX_MESSAGE and reply["truncated"] is True
    assert 0 < len(reply["hits"]) < 50 and reply["hits"][0] == hits[0]


def test_a_block_too_large_is_cut_and_a_small_reply_left_alone() -> None:
    reply = fit({"id": 1, "ok": True, "block": "x" * (2 * MAX_MESSAGE), "count": 3})
    assert _size(reply) <= MAX_MESSAGE and reply["truncated"] is True and reply["count"] == 3
    small = {"id": 1, "ok": True, "hits": []}
    assert fit(small) is small
