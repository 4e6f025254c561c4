"""Registering the native host with each browser, on a temporary home laid out as Linux, macOS or Windows."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tallei_desktop.app.browsers import (
    BROWSER_NAMES,
    CHROMIUM_ORIGIN,
    FIREFOX_EXTENSION_ID,
    HOST_NAME,
    browser_states,
    connect_browser,
    disconnect_browser,
    write_host_manifest,
)
from tallei_desktop.config import load_settings


class FakeRegistry:
    """HKCU as a dict: the port a test on Linux stands in for."""

    def __init__(self) -> None:
        self.keys: dict[str, str] = {}

    def get_default(self, key: str) -> str | None:
        return self.keys.get(key)

    def set_default(self, key: str, value: str) -> None:
        self.keys[key] = value

    def delete(self, key: str) -> None:
        self.keys.pop(key, None)


LINUX = {
    "chrome": ".config/google-chrome/NativeMessagingHosts",
    "chromium": ".config/chromium/NativeMessagingHosts",
    "edge": ".config/microsoft-edge/NativeMessagingHosts",
    "brave": ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
    "firefox": ".mozilla/native-messaging-hosts",
}
MAC = {
    "chrome": "Library/Application Support/Google/Chrome/NativeMessagingHosts",
    "chromium": "Library/Application Support/Chromium/NativeMessagingHosts",
    "edge": "Library/Application Support/Microsoft Edge/NativeMessagingHosts",
    "brave": "Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
    "firefox": "Library/Application Support/Mozilla/NativeMessagingHosts",
}
WINDOWS_KEYS = {
    "chrome": r"Software\Google\Chrome\NativeMessagingHosts\app.tallei.desktop",
    "chromium": r"Software\Chromium\NativeMessagingHosts\app.tallei.desktop",
    "edge": r"Software\Microsoft\Edge\NativeMessagingHosts\app.tallei.desktop",
    "brave": r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\app.tallei.desktop",
    "firefox": r"Software\Mozilla\NativeMessagingHosts\app.tallei.desktop",
}


def _check_shape(path: Path, browser: str) -> dict[str, object]:
    manifest = json.loads(path.read_text(encoding="utf-8"))
    assert manifest["name"] == HOST_NAME and manifest["type"] == "stdio"
    assert Path(manifest["path"]).is_absolute() and Path(manifest["path"]).is_file()
    assert manifest["description"]
    if browser == "firefox":
        assert manifest["allowed_extensions"] == [FIREFOX_EXTENSION_ID] and "allowed_origins" not in manifest
    else:
        assert manifest["allowed_origins"] == [CHROMIUM_ORIGIN] and "allowed_extensions" not in manifest
    return manifest


@pytest.mark.parametrize("browser", BROWSER_NAMES)
@pytest.mark.parametrize(("system", "folders"), [("linux", LINUX), ("darwin", MAC)])
def test_connect_writes_the_manifest_where_the_browser_looks(
    tmp_path: Path, browser: str, system: str, folders: dict[str, str]
) -> None:
    result = connect_browser(None, browser, home=tmp_path, platform=system, environ={})
    assert result.path == tmp_path / folders[browser] / f"{HOST_NAME}.json"
    assert result.changed and result.backup is None
    manifest = _check_shape(result.path, browser)
    launcher = Path(str(manifest["path"]))
    assert launcher.parent == result.path.parent
    assert stat.S_IMODE(launcher.stat().st_mode) & stat.S_IXUSR
    again = connect_browser(None, browser, home=tmp_path, platform=system, environ={})
    assert not again.changed and "nothing changed" in again.message
    [state] = [s for s in browser_states(home=tmp_path, platform=system, environ={}) if s.browser == browser]
    assert state.connected and not state.installed  # only Tallei's files are there


@pytest.mark.parametrize("browser", BROWSER_NAMES)
def test_on_windows_the_registry_key_names_the_manifest(tmp_path: Path, browser: str) -> None:
    registry = FakeRegistry()
    env = {"APPDATA": str(tmp_path / "Roaming"), "LOCALAPPDATA": str(tmp_path / "Local")}
    result = connect_browser(None, browser, home=tmp_path, platform="win32", environ=env, registry=registry)
    assert registry.keys == {WINDOWS_KEYS[browser]: str(result.path)}
    assert result.path.is_relative_to(tmp_path / "Local") and result.path.name == f"{HOST_NAME}.json"
    manifest = _check_shape(result.path, browser)
    assert str(manifest["path"]).endswith(".bat")
    states = browser_states(home=tmp_path, platform="win32", environ=env, registry=registry)
    assert [s.browser for s in states if s.connected] == [browser]
    gone = disconnect_browser(browser, home=tmp_path, platform="win32", environ=env, registry=registry)
    assert gone.changed and registry.keys == {} and not result.path.exists()


def test_a_different_manifest_there_is_backed_up_and_disconnect_leaves_others_alone(tmp_path: Path) -> None:
    folder = tmp_path / LINUX["chrome"]
    folder.mkdir(parents=True)
    theirs = json.dumps({"name": HOST_NAME, "path": "/opt/other/host", "type": "stdio"})
    (folder / f"{HOST_NAME}.json").write_text(theirs)
    result = connect_browser(None, "chrome", home=tmp_path, platform="linux", environ={})
    assert result.backup is not None and result.backup.read_text() == theirs
    _check_shape(result.path, "chrome")
    assert disconnect_browser("chrome", home=tmp_path, platform="linux", environ={}).changed
    assert not result.path.exists() and not (folder / "tallei-native-host").exists()
    assert result.backup.exists()

    result.path.write_text(theirs)
    kept = disconnect_browser("chrome", home=tmp_path, platform="linux", environ={})
    assert not kept.changed and "not written by Tallei" in kept.message and result.path.read_text() == theirs
    not_there = disconnect_browser("edge", home=tmp_path, platform="linux", environ={})
    assert not not_there.changed and "not connected" in not_there.message


def test_print_shows_the_manifest_and_writes_nothing(tmp_path: Path) -> None:
    result = connect_browser(None, "firefox", dry_run=True, home=tmp_path, platform="linux", environ={})
    assert json.loads(result.message.split("\nThis goes in")[0])["allowed_extensions"] == [
        FIREFOX_EXTENSION_ID
    ]
    assert not (tmp_path / ".mozilla").exists()


def test_a_browser_is_installed_by_its_program_or_its_own_profile_folder(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "chromium"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    (tmp_path / ".mozilla" / "firefox").mkdir(parents=True)
    (tmp_path / ".mozilla" / "firefox" / "profiles.ini").write_text("[General]\n")
    (tmp_path / ".config" / "microsoft-edge").mkdir(parents=True)
    (tmp_path / ".config" / "microsoft-edge" / "Local State").write_text("{}")
    connect_browser(None, "brave", home=tmp_path, platform="linux", environ={})
    states = browser_states(home=tmp_path, platform="linux", environ={"PATH": str(bin_dir)})
    assert {s.browser for s in states if s.installed} == {"chromium", "firefox", "edge"}
    assert {s.browser for s in states if s.connected} == {"brave"}


def test_the_launcher_carries_the_data_folder_and_starts_the_host(tmp_path: Path, model_dir: Path) -> None:
    env = {"TALLEI_DATA_DIR": str(tmp_path / "data"), "TALLEI_MODEL_DIR": str(model_dir)}
    settings = load_settings(environ=env, config_path=tmp_path / "absent.toml")
    manifest_path = write_host_manifest(
        tmp_path / "profile" / "NativeMessagingHosts", "chromium", settings=settings
    )
    manifest = _check_shape(manifest_path, "chromium")
    launcher = Path(str(manifest["path"]))
    text = launcher.read_text()
    assert f"export TALLEI_DATA_DIR='{tmp_path / 'data'}'" in text and "native-host" in text
    assert write_host_manifest(manifest_path.parent, "chromium", settings=settings) == manifest_path
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    clean["TALLEI_LOG_DIR"] = str(tmp_path / "logs")
    refused = subprocess.run(
        [str(launcher), "chrome-extension://x/"], env=clean, capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 2 and "refused" in refused.stderr and refused.stdout == ""


def test_the_command_line_connects_prints_and_disconnects_a_browser(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TALLEI_", "XDG_"))}
    env.update(
        HOME=str(tmp_path), TALLEI_CONFIG=str(tmp_path / "absent.toml"), TALLEI_LOG_DIR=str(tmp_path / "logs")
    )

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "tallei_desktop", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    printed = run("connect", "chromium", "--print")
    assert json.loads(printed.split("\nThis goes in")[0])["allowed_origins"] == [CHROMIUM_ORIGIN]
    path = tmp_path / LINUX["chromium"] / f"{HOST_NAME}.json"
    assert not path.exists()
    assert "Connected Chromium" in run("connect", "chromium")
    _check_shape(path, "chromium")
    assert "nothing changed" in run("connect", "chromium")
    assert "Disconnected Chromium" in run("disconnect", "chromium")
    assert not path.exists()
