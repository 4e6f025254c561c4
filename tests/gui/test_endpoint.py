"""The HTTP endpoint inside the app's qasync loop: serving, paused, resumed, and a port already taken."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import keyring.backends.null as keyring_backends_null
import pytest
import qasync
from PySide6.QtWidgets import QApplication

from tallei_desktop.config import Settings, load_settings
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.gui.app import TrayApp
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.main_window import MainWindow
from tallei_desktop.gui.unlock import Opened, open_store
from tests.gui.conftest import PASSPHRASE, free_port


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    event_loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    event_loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[TrayApp]:
    env = {
        "TALLEI_DATA_DIR": str(tmp_path / "data"),
        "TALLEI_MODEL_DIR": str(tmp_path / "no-model"),
        "TALLEI_ALLOW_MODEL_DOWNLOAD": "false",
        "TALLEI_PASSPHRASE": PASSPHRASE,
        "TALLEI_HTTP_PORT": str(free_port()),
    }
    settings: Settings = load_settings(environ=env, config_path=tmp_path / "absent.toml")
    no_keyring = keyring_backends_null.Keyring()  # type: ignore[no-untyped-call]
    opened: Opened = open_store(
        settings, SecretStore(settings.data_dir, passphrase=PASSPHRASE, backend=no_keyring)
    )
    tray_app = TrayApp(settings)
    tray_app.opened = opened
    tray_app.window = MainWindow(settings, Backend(opened.service), tray_app.ops, has_tray=True)
    yield tray_app
    tray_app.ops.shutdown()
    opened.service.close()


async def _status(url: str, token: str | None) -> int | None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(timeout=10) as client:
        try:
            response = await client.post(url, json={}, headers=headers)
        except httpx.ConnectError:
            return None
    return response.status_code


def test_pause_and_resume_the_endpoint(loop: asyncio.AbstractEventLoop, app: TrayApp) -> None:
    async def scenario() -> None:
        await app._start_endpoint()
        assert app.endpoint is not None and app.endpoint.running
        url = app.url()
        assert await _status(url, None) == 401
        assert await _status(url, "wrong") == 401
        await app._toggle_pause()
        assert app.paused and app.endpoint is None
        assert await _status(url, app.opened.token if app.opened else None) is None
        assert app.window is not None
        assert "paused" in app.window.assistants_page.endpoint_state.text()
        await app._toggle_pause()
        assert app.endpoint is not None and not app.paused
        assert await _status(app.url(), None) == 401
        await app.endpoint.stop()

    loop.run_until_complete(scenario())


def test_a_taken_port_is_a_notice_and_nothing_stops(loop: asyncio.AbstractEventLoop, app: TrayApp) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", app.settings.http_port))
        squatter.listen()
        loop.run_until_complete(app._start_endpoint())
    assert app.endpoint is None
    assert app.window is not None
    assert not app.window.banner.isHidden()
    assert f"Cannot listen on 127.0.0.1:{app.settings.http_port}" in app.window.banner.text()
    assert "not serving" in app.window.assistants_page.endpoint_state.text()
    app.window.set_notice("http", None)
    assert app.window.banner.isHidden()
