"""`connect` says, when it connects an assistant, what that assistant needs on a passphrase store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tallei_desktop.app import clients
from tallei_desktop.app.clients import ConnectResult
from tallei_desktop.cli import main
from tallei_desktop.config import Settings
from tallei_desktop.core import KEY_FILE_NAME


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    real_connect = clients.connect

    def connect_at_home(settings: Settings, client: str, *, dry_run: bool = False) -> ConnectResult:
        return real_connect(settings, client, dry_run=dry_run, home=folder, platform="linux", environ={})

    monkeypatch.setattr(clients, "connect", connect_at_home)
    return folder


def _connect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    data = tmp_path / "data"
    code = main(
        ["--config", str(tmp_path / "absent.toml"), "--data-dir", str(data), "connect", "claude", "--print"]
    )
    assert code == 0
    return capsys.readouterr().out


def test_a_passphrase_store_is_reached_through_the_running_app(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / KEY_FILE_NAME).write_text("{}")
    out = _connect(tmp_path, capsys)
    assert "while the Tallei app is running and unlocked" in out
    assert "TALLEI_PASSPHRASE" not in out  # the passphrase is never written into an assistant's settings


def test_a_keyring_store_needs_no_note(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _connect(tmp_path, capsys)
    assert "running and unlocked" not in out
