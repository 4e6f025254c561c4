"""Assistants: usage per platform, and Connect writing a client's settings through the core's connect."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

from PySide6.QtGui import QPalette
from pytestqt.qtbot import QtBot

from tallei_desktop.app.clients import CLIENT_NAMES, ConnectResult, connect, detected_clients, tunnel_command
from tallei_desktop.app.key_agent import connect_note
from tallei_desktop.config import load_settings
from tallei_desktop.core import KEY_FILE_NAME
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
    (home / ".cursor" / "argv.json").write_text("{}", encoding="utf-8")  # Cursor has run here
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


def _rows(page: AssistantsPage) -> list[str]:
    return [page.usage.topLevelItem(i).text(0) for i in range(page.usage.topLevelItemCount())]


def test_a_paused_row_says_so_and_is_greyed(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("I prefer metric units", platform="claude")
    service.save("The shed is blue", type="fact", platform="chatgpt")
    page = AssistantsPage(backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.show()
    assert page.pause_boxes["chatgpt"].text() == "Pause access"
    normal = page.usage.topLevelItem(_rows(page).index("chatgpt")).foreground(0).color()
    with qtbot.waitSignals([page.access_changed, page.loaded], timeout=WAIT_MS):
        page.pause_boxes["chatgpt"].click()
    assert page.pause_boxes["chatgpt"].text() == "Paused — click to resume"
    assert page.pause_boxes["claude"].text() == "Pause access"
    paused_item = page.usage.topLevelItem(_rows(page).index("chatgpt"))
    assert paused_item.foreground(0).color() != normal
    assert paused_item.foreground(0).color() == page.palette().color(
        QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text
    )


def test_rows_keep_their_order_by_name_as_assistants_work(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("The shed is blue", type="fact", platform="gemini")
    service.save("The gate is green", type="fact", platform="chatgpt")
    service.save("The door is red", type="fact", platform="claude")
    page = AssistantsPage(backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.show()
    assert _rows(page) == ["chatgpt", "claude", "gemini"]
    service.save("The roof is grey", type="fact", platform="gemini")  # gemini is now seen last
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()
    assert _rows(page) == ["chatgpt", "claude", "gemini"]


def test_with_no_assistant_yet_a_sentence_shows_instead_of_the_table(
    qtbot: QtBot, backend: Backend, ops: Ops
) -> None:
    page = AssistantsPage(backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.show()
    assert page.usage.isHidden() and page.usage.topLevelItemCount() == 0
    assert page.empty.isVisible() and page.empty.text().startswith("No assistant has saved a memory yet.")
    assert page.empty.height() >= page.empty.heightForWidth(page.empty.width())


def test_at_the_smallest_window_the_assistants_table_needs_no_sideways_scrolling(
    qtbot: QtBot, tmp_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    from tallei_desktop.gui.main_window import MainWindow, PageName

    service.save("I prefer metric units", platform="claude-desktop-with-a-long-name")
    service.save("The shed is blue", type="fact", platform="chatgpt")
    service.set_platform_paused("chatgpt", True)
    settings = load_settings(
        environ={"TALLEI_DATA_DIR": str(tmp_path / "data")}, config_path=tmp_path / "a.toml"
    )
    window = MainWindow(settings, backend, ops, has_tray=True)
    qtbot.addWidget(window)
    page = window.assistants_page
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        window.show_page(PageName.ASSISTANTS)
    window.resize(window.minimumSizeHint())
    qtbot.waitExposed(window)

    def fits() -> bool:
        header = page.usage.header()
        width = sum(header.sectionSize(c) for c in range(header.count()))
        box = page.pause_boxes["chatgpt"]
        return width <= page.usage.viewport().width() and box.width() >= box.sizeHint().width()

    qtbot.waitUntil(fits, timeout=WAIT_MS)


def test_connecting_on_a_passphrase_store_says_what_the_assistant_needs(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    layout = {"home": home, "platform": "linux", "environ": {}}
    settings = load_settings(
        environ={"TALLEI_DATA_DIR": str(tmp_path / "data")}, config_path=tmp_path / "absent.toml"
    )
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / KEY_FILE_NAME).write_bytes(b"a key file")  # a passphrase-guarded store
    page = AssistantsPage(
        backend,
        ops,
        connect=lambda client: connect(settings, client, **layout),  # type: ignore[arg-type]
        settings=settings,
    )
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.connected, timeout=WAIT_MS):
        page.connect_buttons["gemini"].click()
    note = connect_note(settings)
    assert note is not None and note in page.connect_result.text()
    assert "Restart Gemini CLI" in page.connect_result.text()


def test_every_client_has_a_button_and_connect_all_connects_only_those_found(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    home = tmp_path / "home"
    for folder in (".cursor", ".codex"):
        (home / folder).mkdir(parents=True)
        (home / folder / "state.json").write_text("{}", encoding="utf-8")  # each has run here
    layout = {"home": home, "platform": "linux", "environ": {}}
    settings = load_settings(
        environ={"TALLEI_DATA_DIR": str(tmp_path / "data")}, config_path=tmp_path / "absent.toml"
    )
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / KEY_FILE_NAME).write_bytes(b"a key file")  # a passphrase-guarded store
    page = AssistantsPage(
        backend,
        ops,
        connect=lambda client: connect(settings, client, **layout),  # type: ignore[arg-type]
        detect=lambda: detected_clients(**layout),  # type: ignore[arg-type]
        settings=settings,
    )
    qtbot.addWidget(page)
    assert set(page.connect_buttons) == set(CLIENT_NAMES)
    assert not page.connect_all_button.isEnabled()  # nothing looked for yet
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.show()
    qtbot.waitUntil(page.connect_all_button.isEnabled, timeout=WAIT_MS)
    assert [n for n, label in page.installed.items() if label.text()] == ["codex", "cursor"]

    with qtbot.waitSignal(page.connected_all, timeout=WAIT_MS) as done:
        page.connect_all_button.click()

    assert done.args[0] == ["codex", "cursor"]
    assert tomllib.loads((home / ".codex" / "config.toml").read_text(encoding="utf-8"))["mcp_servers"][
        "tallei"
    ]
    assert "tallei" in json.loads((home / ".cursor" / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert sorted(p.name for p in home.iterdir()) == [".codex", ".cursor"]  # nothing for the others
    text = page.connect_result.text()
    assert text.startswith("Codex: Created") and "\nCursor: Created" in text
    note = connect_note(settings)
    assert note is not None and text.endswith(note)


def test_chatgpt_is_offered_the_tunnel_and_never_a_loopback_address_or_a_token(
    qtbot: QtBot, backend: Backend, ops: Ops
) -> None:
    page = AssistantsPage(backend, ops)
    qtbot.addWidget(page)
    page.set_endpoint("http://127.0.0.1:8765/mcp", "secret-token", "The endpoint is serving.")

    assert page.tunnel_command.text() == tunnel_command()
    argv = shlex.split(page.tunnel_command.text())
    assert (
        argv[:2] == ["tunnel-client", "run"]
        and shlex.split(argv[argv.index("--mcp.command") + 1])[-1] == "mcp"
    )
    said = page.chatgpt_steps.text() + page.chatgpt_caution.text()
    assert "Secure MCP Tunnel" in said and "tunnel id" in said and "Connection: Tunnel" in said
    assert "Connect</i> Codex" in said and "OAuth" in said and "browser extension" in said
    for wrong in ("127.0.0.1", "Bearer", "token", "/mcp"):
        assert wrong not in said, wrong
    # The address and token are for other programs on this computer, in a box of their own.
    assert page.address.text() == "http://127.0.0.1:8765/mcp" and page.copy_token.isEnabled()
    box = page.address.parentWidget()
    assert box is not None and "ChatGPT" not in box.title()  # type: ignore[attr-defined]
