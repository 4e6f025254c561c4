"""The Assistants page's browser box: browsers found, whether the host is connected, Connect writing the manifest."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from tallei_desktop.app.browsers import BrowserResult, browser_states, connect_browser
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.browsers import BrowsersBox
from tests.gui.conftest import WAIT_MS


def test_found_browsers_are_listed_and_connect_registers_the_host(
    qtbot: QtBot, tmp_path: Path, ops: Ops
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "chromium").mkdir(parents=True)
    (home / ".config" / "chromium" / "Local State").write_text(
        "{}", encoding="utf-8"
    )  # Chromium has run here
    layout = {"home": home, "platform": "linux", "environ": {}}
    box = BrowsersBox(
        ops,
        states=lambda: browser_states(**layout),  # type: ignore[arg-type]
        connect=lambda name: connect_browser(None, name, **layout),  # type: ignore[arg-type]
    )
    qtbot.addWidget(box)
    with qtbot.waitSignal(box.loaded, timeout=WAIT_MS):
        box.show()
    assert box.title() == "In your browser"
    assert list(box.buttons) == ["chromium"] and box.states["chromium"].text().endswith(": not connected")

    with (
        qtbot.waitSignal(box.connected, timeout=WAIT_MS) as done,
        qtbot.waitSignal(box.loaded, timeout=WAIT_MS),
    ):
        box.buttons["chromium"].click()
    result: BrowserResult = done.args[0]
    manifest = home / ".config" / "chromium" / "NativeMessagingHosts" / "app.tallei.desktop.json"
    assert result.changed and result.path == manifest
    assert json.loads(manifest.read_text(encoding="utf-8"))["name"] == "app.tallei.desktop"
    assert str(manifest) in box.result.text()
    assert box.states["chromium"].text().endswith(": connected")


def test_no_browser_found_says_so(qtbot: QtBot, tmp_path: Path, ops: Ops) -> None:
    layout = {"home": tmp_path, "platform": "linux", "environ": {}}
    box = BrowsersBox(ops, states=lambda: browser_states(**layout))  # type: ignore[arg-type]
    qtbot.addWidget(box)
    with qtbot.waitSignal(box.loaded, timeout=WAIT_MS):
        box.show()
    assert box.buttons == {}
    assert any(
        "No Chrome, Chromium, Edge, Brave or Firefox" in w.text() for w in box.findChildren(type(box.result))
    )
