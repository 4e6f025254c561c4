"""Assistants: usage per platform, and Connect writing a client's settings through the core's connect."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from tallei_desktop.app.clients import ConnectResult, connect, detected_clients
from tallei_desktop.config import load_settings
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.assistants import AssistantsPage
from tests.gui.conftest import WAIT_MS


def test_usage_and_connect_round_trip(
    qtbot: QtBot, tmp_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("I prefer metric units", platform="claude")
    service.save("I prefer metric units", platform="cursor")
    service.save("The shed is blue", type="fact", platform="claude")
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    layout = {"home": home, "platform": "linux", "environ": {}}
    settings = load_settings(
        environ={"TALLEI_DATA_DIR": str(tmp_path / "data")}, config_path=tmp_path / "absent.toml"
    )
    page = AssistantsPage(
        backend,
        ops,
        connect=lambda client: connect(settings, client, **layout),  # type: ignore[arg-type]
        detect=lambda: detected_clients(**layout),  # type: ignore[arg-type]
    )
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.show()
    rows = {
        page.usage.topLevelItem(i).text(0): page.usage.topLevelItem(i).text(1)
        for i in range(page.usage.topLevelItemCount())
    }
    assert rows == {"claude": "2", "cursor": "1"}
    qtbot.waitUntil(lambda: page.installed["cursor"].text() != "", timeout=WAIT_MS)
    assert page.installed["claude"].text() == ""

    with qtbot.waitSignal(page.connected, timeout=WAIT_MS) as done:
        page.connect_buttons["cursor"].click()
    result: ConnectResult = done.args[0]
    config = home / ".cursor" / "mcp.json"
    assert result.changed and result.path == config
    assert "tallei" in json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
    assert str(config) in page.connect_result.text()

    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}), encoding="utf-8")
    with qtbot.waitSignal(page.connected, timeout=WAIT_MS) as done:
        page.connect_buttons["cursor"].click()
    again: ConnectResult = done.args[0]
    assert again.backup is not None and again.backup.exists()
    assert str(again.backup) in page.connect_result.text()
    assert set(json.loads(config.read_text(encoding="utf-8"))["mcpServers"]) == {"other", "tallei"}


def test_pause_access_toggle_round_trip_through_the_store(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("I prefer metric units", platform="claude")
    service.save("The shed is blue", type="fact", platform="chatgpt")
    page = AssistantsPage(backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.show()
    assert set(page.pause_boxes) == {"claude", "chatgpt"}
    assert not any(box.isChecked() for box in page.pause_boxes.values())

    with qtbot.waitSignals([page.access_changed, page.loaded], timeout=WAIT_MS):
        page.pause_boxes["chatgpt"].click()
    assert service.paused_platforms() == {"chatgpt"}
    assert page.pause_boxes["chatgpt"].isChecked() and not page.pause_boxes["claude"].isChecked()

    # Resumed by another process: the page shows the store's state when it reloads.
    service.set_platform_paused("chatgpt", False)
    service.set_platform_paused("gemini", True)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()
    assert not page.pause_boxes["chatgpt"].isChecked()
    assert page.pause_boxes["gemini"].isChecked()  # paused with no memories: still listed

    with qtbot.waitSignal(page.access_changed, timeout=WAIT_MS) as changed:
        page.pause_boxes["gemini"].click()
    assert changed.args == ["gemini", False]
    qtbot.waitUntil(lambda: "gemini" not in page.pause_boxes, timeout=WAIT_MS)
    assert service.paused_platforms() == frozenset()
