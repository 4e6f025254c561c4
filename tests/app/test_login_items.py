"""Start at login: the files (and registry value) each system would get, written into temp folders."""

from __future__ import annotations

import configparser
import plistlib
import sys
from pathlib import Path

import pytest

from tallei_desktop.app.login_items import (
    apply_start_at_login,
    autostart_entry,
    desktop_exec,
    login_command,
    run_value,
)
from tallei_desktop.core import KnownError

COMMAND = ["/opt/Tallei desktop/Tallei"]


class FakeRunKey:
    """The Windows Run key as a dict: the port ``apply_start_at_login`` writes through."""

    def __init__(self, values: dict[str, str] | None = None) -> None:
        self.values = dict(values or {})

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str) -> None:
        self.values[name] = value

    def delete(self, name: str) -> bool:
        return self.values.pop(name, None) is not None


def _desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def _unescape_exec(value: str) -> list[str]:
    """Read an ``Exec`` value back as the Desktop Entry Specification says a launcher does."""
    text = value.replace("\\\\", "\\").replace("%%", "%")  # the string escape first
    words: list[str] = []
    word: list[str] | None = None
    quoted = False
    chars = iter(text)
    for ch in chars:
        if quoted:
            if ch == "\\":
                escaped = next(chars)
                assert escaped in '"`$\\', f"stray backslash before {escaped!r}"
                word.append(escaped)  # type: ignore[union-attr]
            elif ch == '"':
                quoted = False
            else:
                word.append(ch)  # type: ignore[union-attr]
        elif ch == " ":
            if word is not None:
                words.append("".join(word))
                word = None
        elif ch == '"':
            word = word if word is not None else []
            quoted = True
        else:
            assert ch not in '\\"$`', f"reserved {ch!r} outside quotes"
            word = (word if word is not None else []) + [ch]
    assert not quoted, "unterminated quote"
    if word is not None:
        words.append("".join(word))
    return words


def test_linux_autostart_entry_is_written_and_removed(tmp_path: Path) -> None:
    config_home = tmp_path / "config"

    said = apply_start_at_login(True, command=COMMAND, platform="linux", config_home=config_home)
    path = config_home / "autostart" / "tallei-desktop.desktop"
    entry = _desktop_entry(path)

    assert str(path) in said
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Tallei"
    assert _unescape_exec(entry["Exec"]) == COMMAND
    assert entry["X-GNOME-Autostart-enabled"] == "true"
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    assert [p.name for p in path.parent.iterdir()] == ["tallei-desktop.desktop"]  # no temp file left

    assert apply_start_at_login(False, platform="linux", config_home=config_home).startswith("Tallei will no")
    assert not path.exists()
    assert "was not set" in apply_start_at_login(False, platform="linux", config_home=config_home)


def test_enabling_twice_leaves_one_entry_with_the_newest_command(tmp_path: Path) -> None:
    apply_start_at_login(True, command=["/old/Tallei"], platform="linux", config_home=tmp_path)
    apply_start_at_login(True, command=COMMAND, platform="linux", config_home=tmp_path)

    [path] = (tmp_path / "autostart").iterdir()
    assert _unescape_exec(_desktop_entry(path)["Exec"]) == COMMAND


@pytest.mark.parametrize(
    "command",
    [
        ["/usr/bin/tallei-desktop", "gui"],
        ["/home/sam/My Apps/Tallei"],
        ['/tmp/we"ird $dir/100%/back\\slash/Tallei', "gui"],
    ],
    ids=["plain", "space", "quotes-dollar-percent-backslash"],
)
def test_exec_values_round_trip_through_the_desktop_entry_quoting(command: list[str]) -> None:
    value = desktop_exec(command)

    assert _unescape_exec(value) == command
    assert "\n" not in value


def test_macos_launch_agent_is_written_and_removed(tmp_path: Path) -> None:
    said = apply_start_at_login(True, command=COMMAND, platform="darwin", home=tmp_path)
    path = tmp_path / "Library" / "LaunchAgents" / "app.tallei.desktop.plist"
    agent = plistlib.loads(path.read_bytes())

    assert str(path) in said
    assert agent["Label"] == "app.tallei.desktop"
    assert agent["ProgramArguments"] == COMMAND
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] is False

    apply_start_at_login(False, platform="darwin", home=tmp_path)
    assert not path.exists()


def test_windows_run_value_is_set_and_removed_leaving_other_programs_values() -> None:
    key = FakeRunKey({"OneDrive": '"C:\\OneDrive\\OneDrive.exe" /background'})
    command = ["C:\\Program Files\\Tallei\\Tallei.exe"]

    said = apply_start_at_login(True, command=command, platform="win32", run_key=key)

    assert key.get("Tallei") == '"C:\\Program Files\\Tallei\\Tallei.exe"'
    assert key.get("Tallei") in said
    apply_start_at_login(False, platform="win32", run_key=key)
    assert key.values == {"OneDrive": '"C:\\OneDrive\\OneDrive.exe" /background'}
    assert "was not set" in apply_start_at_login(False, platform="win32", run_key=key)


def test_run_value_quotes_only_what_needs_it() -> None:
    assert run_value(["C:\\Tallei\\Tallei.exe"]) == "C:\\Tallei\\Tallei.exe"
    assert run_value(["C:\\My Apps\\python.exe", "-m", "tallei_desktop", "gui"]) == (
        '"C:\\My Apps\\python.exe" -m tallei_desktop gui'
    )


def test_from_source_the_login_command_runs_this_python_on_the_gui(tmp_path: Path) -> None:
    assert login_command() == [str(Path(sys.executable).absolute()), "-m", "tallei_desktop", "gui"]


def test_from_a_bundle_the_login_command_is_its_windowed_executable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "_internal"), raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "tallei-desktop"))

    assert login_command() == [str(tmp_path / "Tallei")]


def test_an_unwritable_folder_raises_and_leaves_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "config"
    blocker.write_text("a file where the folder should be", encoding="utf-8")

    with pytest.raises(KnownError, match="Cannot change whether Tallei starts at login"):
        apply_start_at_login(True, command=COMMAND, platform="linux", config_home=blocker)
    assert blocker.read_text(encoding="utf-8") == "a file where the folder should be"


def test_the_autostart_entry_text_names_the_icon_and_stays_out_of_terminals() -> None:
    text = autostart_entry(COMMAND)

    assert "Icon=tallei-desktop\n" in text
    assert "Terminal=false\n" in text
