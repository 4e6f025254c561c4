"""Settings: written through the core's settings writer, the passphrase changed, the model's state shown."""

from __future__ import annotations

from pathlib import Path

import keyring.backends.null as keyring_backends_null
import pytest
from pytestqt.qtbot import QtBot

from tallei_desktop.config import Settings, load_settings, save_settings
from tallei_desktop.core.embeddings import ModelState, ModelStatus
from tallei_desktop.core.errors import WrongKey
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.settings import SettingsPage
from tallei_desktop.gui.unlock import open_store
from tests.gui.conftest import PASSPHRASE, WAIT_MS


def _settings(tmp_path: Path) -> Settings:
    env = {
        "TALLEI_DATA_DIR": str(tmp_path / "data"),
        "TALLEI_MODEL_DIR": str(tmp_path / "no-model"),
        "TALLEI_ALLOW_MODEL_DOWNLOAD": "false",
        "TALLEI_PASSPHRASE": PASSPHRASE,
    }
    return load_settings(environ=env, config_path=tmp_path / "config.toml")


def test_saved_settings_reach_the_file_and_load_again(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model_name = "sentence-transformers/all-MiniLM-L6-v2"\n', encoding="utf-8")
    settings = _settings(tmp_path)
    page = SettingsPage(
        settings, backend, ops, save=lambda changes: save_settings(changes, config_path=config)
    )
    qtbot.addWidget(page)
    page.short_term_days.setValue(30)
    page.http_port.setValue(9123)
    page.notify_conflicts.setChecked(False)
    assert page.changes() == {"short_term_days": 30, "http_port": 9123, "notify_conflicts": False}
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
        page.save_button.click()
    assert "next time Tallei starts" in said.args[0]
    again = load_settings(environ={}, config_path=config)
    assert (again.short_term_days, again.http_port, again.notify_conflicts) == (30, 9123, False)
    assert again.model_name == "sentence-transformers/all-MiniLM-L6-v2"  # kept


def test_changing_the_passphrase(qtbot: QtBot, tmp_path: Path, ops: Ops) -> None:
    settings = _settings(tmp_path)
    secrets = SecretStore(settings.data_dir, passphrase=PASSPHRASE, backend=keyring_backends_null.Keyring())  # type: ignore[no-untyped-call]
    opened = open_store(settings, secrets)
    try:
        page = SettingsPage(settings, Backend(opened.service), ops, secrets=opened.secrets)
        qtbot.addWidget(page)
        qtbot.waitUntil(lambda: page.change_passphrase.isVisibleTo(page), timeout=WAIT_MS)
        with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
            page.change("not it", "new one")
        assert "not changed" in said.args[0]
        with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
            page.change(PASSPHRASE, "a brand new passphrase")
        assert said.args[0] == "The passphrase is changed."
    finally:
        opened.service.close()
    fresh = SecretStore(settings.data_dir, passphrase=PASSPHRASE, backend=keyring_backends_null.Keyring())  # type: ignore[no-untyped-call]
    with pytest.raises(WrongKey):
        fresh.store_key(create=False)
    renewed = SecretStore(
        settings.data_dir,
        passphrase="a brand new passphrase",
        backend=keyring_backends_null.Keyring(),  # type: ignore[no-untyped-call]
    )
    assert renewed.store_key(create=False).key


def test_a_download_shows_its_progress(qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops) -> None:
    page = SettingsPage(_settings(tmp_path), backend, ops)
    qtbot.addWidget(page)
    page.show()  # asks the service for the model's state
    qtbot.waitUntil(lambda: page.model_state.text() == backend.service.model_status().detail, timeout=WAIT_MS)
    page.show_model(ModelStatus(ModelState.DOWNLOADING, "Downloading the model.", 0.25, 25, 100))
    assert page.model_progress.isVisibleTo(page) and page.model_progress.value() == 250
    page.show_model(ModelStatus(ModelState.READY, "Semantic search is on.", None, None, None))
    assert not page.model_progress.isVisibleTo(page)
    assert page.model_state.text() == "Semantic search is on."


def test_start_at_login_adds_and_removes_the_autostart_entry(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    config = tmp_path / "config.toml"
    folder = tmp_path / "xdg" / "autostart"
    page = SettingsPage(
        _settings(tmp_path),
        backend,
        ops,
        save=lambda changes: save_settings(changes, config_path=config),
        config_home=tmp_path / "xdg",
    )
    qtbot.addWidget(page)
    page.start_at_login.setChecked(True)
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS):
        page.save_button.click()
    entry = (folder / "tallei-desktop.desktop").read_text(encoding="utf-8")
    assert entry.startswith("[Desktop Entry]") and "tallei_desktop gui" in entry
    assert load_settings(environ={}, config_path=config).start_at_login
    page.start_at_login.setChecked(False)
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS):
        page.save_button.click()
    assert not (folder / "tallei-desktop.desktop").exists()


def test_back_up_now_writes_a_backup_and_lists_it(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    settings = _settings(tmp_path)
    backend.service.save("Something worth keeping", type="fact", platform="claude")
    page = SettingsPage(settings, backend, ops)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.backups_state.text().startswith("No backups yet"), timeout=WAIT_MS)
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
        page.backup_button.click()
    [made] = list((settings.data_dir / "backups").glob("tallei-*.db"))
    assert said.args == [f"Backed up to {made}."]
    qtbot.waitUntil(lambda: page.backups_state.text().startswith("1 backup in"), timeout=WAIT_MS)
