"""The tray app's start inside its qasync loop: a cancelled setup says so; a start in the tray says where."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import keyring.backends.null as keyring_backends_null
import pytest
import qasync
from PySide6.QtWidgets import QApplication

from tallei_desktop.config import Settings, load_settings
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.gui.app import TrayApp
from tallei_desktop.gui.unlock import PassphraseDialog, open_store
from tests.gui.conftest import PASSPHRASE, TIMEOUT_S, free_port


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    qapp.setQuitOnLastWindowClosed(False)  # as run_gui sets it: a closed dialog must not end the loop
    event_loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    event_loop.close()
    asyncio.set_event_loop(None)
    qapp.setQuitOnLastWindowClosed(True)


def _settings(tmp_path: Path, passphrase: str | None) -> Settings:
    env = {
        "TALLEI_DATA_DIR": str(tmp_path / "data"),
        "TALLEI_MODEL_DIR": str(tmp_path / "no-model"),
        "TALLEI_ALLOW_MODEL_DOWNLOAD": "false",
        "TALLEI_HTTP_PORT": str(free_port()),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }
    if passphrase:
        env["TALLEI_PASSPHRASE"] = passphrase
    return load_settings(environ=env, config_path=tmp_path / "absent.toml")


async def _dialog(app: TrayApp) -> PassphraseDialog:
    await asyncio.sleep(0)  # run() goes as far as asking
    unlocker = app.unlocker
    assert unlocker is not None
    if unlocker.dialog is not None:
        return unlocker.dialog
    asked: asyncio.Future[PassphraseDialog] = asyncio.get_running_loop().create_future()
    unlocker.asking.connect(lambda dialog: asked.done() or asked.set_result(dialog))
    return await asyncio.wait_for(asked, TIMEOUT_S)


def test_cancelling_the_first_run_says_nothing_was_created(
    loop: asyncio.AbstractEventLoop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = _settings(tmp_path, None)
    app = TrayApp(settings)

    async def cancel() -> int:
        running = asyncio.ensure_future(app.run())
        dialog = await _dialog(app)
        assert dialog.creating
        dialog.reject()
        return await asyncio.wait_for(running, TIMEOUT_S)

    assert loop.run_until_complete(cancel()) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        "tallei-desktop: Setup was cancelled; nothing was created. Start Tallei again to set it up."
    ]
    assert not settings.db_path.exists()


# Offscreen Qt has no tray host, so the tray icon warns that it cannot follow one.
@pytest.mark.qt_log_ignore("systemTrayWindowChanged")
def test_a_later_start_in_the_tray_says_once_where_tallei_is(
    loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    settings = _settings(tmp_path, PASSPHRASE)
    no_keyring = keyring_backends_null.Keyring()  # type: ignore[no-untyped-call]
    open_store(
        settings, SecretStore(settings.data_dir, passphrase=PASSPHRASE, backend=no_keyring)
    ).service.close()
    app = TrayApp(settings, has_tray=True)

    balloons: list[tuple[str, str]] = []

    async def start() -> int:
        running = asyncio.ensure_future(app.run())
        while app.window is None or app.tray is None:
            await asyncio.sleep(0.01)
        app.tray.balloon_shown.connect(lambda title, text: balloons.append((title, text)))
        # The balloon waits for the tray host to embed the icon, then is really asked for.
        deadline = loop.time() + TIMEOUT_S
        while not balloons and loop.time() < deadline:
            await asyncio.sleep(0.05)
        app.quit()
        return await asyncio.wait_for(running, TIMEOUT_S)

    assert loop.run_until_complete(start()) == 0
    assert app.greeting == "Tallei is running in the tray: click the icon to see your memories."
    assert balloons == [("Tallei", app.greeting)]
    assert app.window is not None and not app.window.isVisible()


@pytest.mark.qt_log_ignore("systemTrayWindowChanged")
def test_the_first_start_in_the_tray_opens_the_window_and_needs_no_balloon(
    loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    app = TrayApp(_settings(tmp_path, PASSPHRASE), has_tray=True)

    async def start() -> bool:
        running = asyncio.ensure_future(app.run())
        while app.window is None or app.tray is None:
            await asyncio.sleep(0.01)
        shown = app.window.isVisible()
        app.quit()
        await asyncio.wait_for(running, TIMEOUT_S)
        return shown

    assert loop.run_until_complete(start())
    assert app.greeting is None
