"""Client configuration: the settings writers, against fixture files in a fake home folder."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from tallei_desktop.app import clients
from tallei_desktop.app.clients import ClientConfigError, ConnectResult, connect, detected_clients
from tallei_desktop.cli import main
from tallei_desktop.config import APP_NAME, Settings
from tallei_desktop.core import InvalidInput, KnownError

SCRIPT_NAME = "tallei-desktop.exe" if os.name == "nt" else "tallei-desktop"
BACKUP = re.compile(r"\.bak-\d{8}-\d{6}(-\d+)?$")

#: Where each client keeps its settings, relative to the home folder (or to APPDATA on Windows).
LOCATIONS: dict[tuple[str, str], str] = {
    ("claude", "darwin"): "Library/Application Support/Claude/claude_desktop_config.json",
    ("claude", "win32"): "APPDATA/Claude/claude_desktop_config.json",
    ("claude", "linux"): ".config/Claude/claude_desktop_config.json",
    ("vscode", "darwin"): "Library/Application Support/Code/User/mcp.json",
    ("vscode", "win32"): "APPDATA/Code/User/mcp.json",
    ("vscode", "linux"): ".config/Code/User/mcp.json",
    **{("cursor", p): ".cursor/mcp.json" for p in ("darwin", "win32", "linux")},
    **{("gemini", p): ".gemini/settings.json" for p in ("darwin", "win32", "linux")},
}
SERVERS_KEY = {"claude": "mcpServers", "cursor": "mcpServers", "gemini": "mcpServers", "vscode": "servers"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def appdata(tmp_path: Path) -> Path:
    """A roaming AppData folder deliberately outside ``home``, so a test sees whether APPDATA was used."""
    return tmp_path / "Roaming"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    default_data = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    return Settings(data_dir=default_data, log_dir=tmp_path / "logs")


@pytest.fixture(autouse=True)
def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed ``tallei-desktop`` console script beside a stand-in interpreter."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_bytes(b"")
    launcher = bin_dir / SCRIPT_NAME
    launcher.write_bytes(b"#!/bin/sh\n")
    launcher.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(python))
    return launcher


def config_file(client: str, platform: str, home: Path, appdata: Path) -> Path:
    relative = LOCATIONS[(client, platform)]
    if relative.startswith("APPDATA/"):
        return appdata / relative.removeprefix("APPDATA/")
    return home / relative


def run(
    settings: Settings,
    client: str,
    home: Path,
    *,
    platform: str = "linux",
    environ: Mapping[str, str] | None = None,
    print_only: bool = False,
) -> str:
    """The message a person reads after connecting ``client``."""
    return connect(
        settings, client, dry_run=print_only, home=home, platform=platform, environ=environ or {}
    ).message


def backups(path: Path) -> list[Path]:
    return sorted(p for p in path.parent.iterdir() if BACKUP.search(p.name) and p.name.startswith(path.name))


def claude_file(home: Path) -> Path:
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def write(path: Path, content: str | bytes) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = content.encode() if isinstance(content, str) else content
    path.write_bytes(raw)
    return raw


EXISTING = {
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ana"],
        },
        "weather": {"command": "uvx", "args": ["weather"], "env": {"API_KEY": "k-123", "UNITS": "°C"}},
    },
    "preferences": {"zeta": 1, "alpha": [1.5, None, True, {"b": 2, "a": 1}], "émoji": "✓"},
}


@pytest.mark.parametrize("platform", ["darwin", "win32", "linux"])
@pytest.mark.parametrize("client", ["claude", "cursor", "gemini", "vscode"])
def test_fresh_settings_file_is_created_at_the_clients_own_location(
    client: str, platform: str, home: Path, appdata: Path, settings: Settings, script: Path
) -> None:
    output = run(settings, client, home, platform=platform, environ={"APPDATA": str(appdata)})

    path = config_file(client, platform, home, appdata)
    entry: dict[str, Any] = {"command": str(script), "args": ["mcp"]}
    if client == "vscode":
        entry = {"type": "stdio", **entry}
    expected = {SERVERS_KEY[client]: {"tallei": entry}}
    assert path.read_text(encoding="utf-8") == json.dumps(expected, indent=2) + "\n"
    assert backups(path) == []
    assert str(path) in output
    assert "restart" in output.lower()


def test_windows_without_appdata_uses_the_roaming_folder_under_home(home: Path, settings: Settings) -> None:
    run(settings, "claude", home, platform="win32", environ={})

    assert (home / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json").is_file()


def test_linux_honours_xdg_config_home(home: Path, tmp_path: Path, settings: Settings) -> None:
    xdg = tmp_path / "xdg"
    run(settings, "vscode", home, platform="linux", environ={"XDG_CONFIG_HOME": str(xdg)})

    assert (xdg / "Code" / "User" / "mcp.json").is_file()
    assert not (home / ".config").exists()


def test_other_entries_and_keys_keep_their_values_and_order(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    write(path, json.dumps(EXISTING, indent=4, ensure_ascii=False))

    run(settings, "claude", home)

    after = json.loads(path.read_text(encoding="utf-8"))
    tallei = after["mcpServers"].pop("tallei")
    assert tallei["args"] == ["mcp"]
    # json.dumps keeps insertion order, so equal dumps mean equal values in the same order, all the way down.
    assert json.dumps(after, ensure_ascii=False) == json.dumps(EXISTING, ensure_ascii=False)
    assert list(json.loads(path.read_text(encoding="utf-8"))["mcpServers"]) == [
        "filesystem",
        "weather",
        "tallei",
    ]


def test_written_file_uses_two_space_indent_and_a_trailing_newline(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    write(path, json.dumps(EXISTING, ensure_ascii=False))

    run(settings, "claude", home)

    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    assert "°C" in text  # not escaped to \u00b0


def test_backup_holds_the_previous_bytes_and_is_reported(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    old = write(path, '{"mcpServers": {"weather": {"command": "uvx"}}}')

    output = run(settings, "claude", home)

    [backup] = backups(path)
    assert backup.parent == path.parent
    assert backup.read_bytes() == old
    assert str(backup) in output
    assert "restart claude desktop to load it" in output.lower()


def test_second_run_changes_nothing_and_makes_no_new_backup(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    write(path, json.dumps(EXISTING))
    run(settings, "claude", home)
    content, stamp, made = path.read_bytes(), path.stat().st_mtime_ns, backups(path)

    output = run(settings, "claude", home)

    assert "already connected" in output
    assert path.read_bytes() == content
    assert path.stat().st_mtime_ns == stamp
    assert backups(path) == made


def test_same_entry_in_other_formatting_counts_as_connected(
    home: Path, settings: Settings, script: Path
) -> None:
    path = home / ".cursor" / "mcp.json"
    raw = write(path, '{"mcpServers":{"tallei":{"args":["mcp"],"command":' + json.dumps(str(script)) + "}}}")

    output = run(settings, "cursor", home)

    assert "already connected" in output
    assert path.read_bytes() == raw
    assert backups(path) == []


def test_stale_entry_is_updated_in_place_keeping_the_persons_additions(
    home: Path, settings: Settings, script: Path
) -> None:
    path = home / ".gemini" / "settings.json"
    stale = {
        "theme": "Dracula",
        "mcpServers": {
            "tallei": {
                "command": "/old/venv/bin/tallei-desktop",
                "args": ["mcp", "--verbose"],
                "type": "http",
                "url": "http://127.0.0.1:8765/mcp",
                "env": {"TALLEI_DATA_DIR": "/old/data", "TALLEI_PASSPHRASE": "set-by-hand"},
                "trust": True,
            },
            "git": {"command": "uvx", "args": ["mcp-server-git"]},
        },
    }
    old = write(path, json.dumps(stale))

    output = run(settings, "gemini", home)

    after = json.loads(path.read_text(encoding="utf-8"))
    assert after["mcpServers"]["tallei"] == {
        "command": str(script),
        "args": ["mcp"],
        "env": {"TALLEI_PASSPHRASE": "set-by-hand"},  # the person's own variable; the stale data dir is gone
        "trust": True,
    }
    assert list(after["mcpServers"]) == ["tallei", "git"]
    assert after["theme"] == "Dracula"
    assert [b.read_bytes() for b in backups(path)] == [old]
    assert "Updated" in output


def test_two_changes_within_a_second_keep_both_backups(
    home: Path, tmp_path: Path, settings: Settings
) -> None:
    path = claude_file(home)
    first = write(path, "{}")
    run(settings, "claude", home)
    second = path.read_bytes()

    moved = Settings(data_dir=tmp_path / "elsewhere", log_dir=settings.log_dir)
    run(moved, "claude", home)

    assert sorted(b.read_bytes() for b in backups(path)) == sorted([first, second])


def test_file_saved_by_the_client_meanwhile_is_not_overwritten(
    home: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = claude_file(home)
    write(path, json.dumps(EXISTING))
    theirs = b'{"mcpServers": {}, "savedBy": "Claude Desktop"}'
    real_mkstemp = tempfile.mkstemp

    def client_saves_first(*, dir: Path, prefix: str, suffix: str) -> tuple[int, str]:
        path.write_bytes(theirs)  # the client rewrites its settings while ours are being prepared
        return real_mkstemp(dir=dir, prefix=prefix, suffix=suffix)

    monkeypatch.setattr(tempfile, "mkstemp", client_saves_first)

    with pytest.raises(ClientConfigError, match="changed while"):
        run(settings, "claude", home)

    assert path.read_bytes() == theirs
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_empty_file_is_treated_as_an_empty_object(home: Path, settings: Settings) -> None:
    path = home / ".cursor" / "mcp.json"
    write(path, "\n")

    run(settings, "cursor", home)

    assert "tallei" in json.loads(path.read_text(encoding="utf-8"))["mcpServers"]
    assert [b.read_bytes() for b in backups(path)] == [b"\n"]


def test_byte_order_mark_is_accepted(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    write(path, b"\xef\xbb\xbf" + json.dumps(EXISTING).encode())

    run(settings, "claude", home)

    after = json.loads(path.read_text(encoding="utf-8"))
    assert after["mcpServers"]["weather"] == EXISTING["mcpServers"]["weather"]  # type: ignore[index]


MALFORMED: dict[str, tuple[bytes, str]] = {
    "truncated": (b'{"mcpServers": {"weather": {"command": "uvx"}', "not valid JSON"),
    "trailing comma": (b'{"mcpServers": {},}', "not valid JSON"),
    "top-level array": (b'[{"mcpServers": {}}]', "top level"),
    "top-level string": (b'"mcpServers"', "top level"),
    "servers is a list": (b'{"mcpServers": [{"name": "weather"}]}', '"mcpServers" must be an object'),
    "servers is null": (b'{"mcpServers": null}', '"mcpServers" must be an object'),
    "duplicate key": (b'{"mcpServers": {}, "mcpServers": {"weather": {}}}', "twice"),
    "not utf-8": (b'{"name": "\xff\xfe"}', "not UTF-8"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_unreadable_file_is_left_untouched_with_a_one_line_error(
    case: str, home: Path, settings: Settings
) -> None:
    path = claude_file(home)
    raw, expected = MALFORMED[case]
    write(path, raw)

    with pytest.raises(ClientConfigError) as caught:
        run(settings, "claude", home)

    message = str(caught.value)
    assert isinstance(caught.value, KnownError)
    assert "\n" not in message
    assert str(path) in message
    assert expected in message
    assert path.read_bytes() == raw
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no backup, no temp file


def test_slashes_inside_strings_are_not_mistaken_for_comments(home: Path, settings: Settings) -> None:
    path = home / ".cursor" / "mcp.json"
    raw = write(path, b'{"mcpServers": {"web": {"url": "https://example.com/mcp"}}')  # missing brace

    with pytest.raises(ClientConfigError, match="not valid JSON") as caught:
        run(settings, "cursor", home)

    assert "comments" not in str(caught.value)
    assert path.read_bytes() == raw


def test_vscode_file_with_comments_is_refused_with_the_snippet_to_paste(
    home: Path, settings: Settings, script: Path
) -> None:
    path = home / ".config" / "Code" / "User" / "mcp.json"
    raw = write(path, '{\n  // my servers\n  "servers": {\n    /* none yet */\n  }\n}\n')

    with pytest.raises(ClientConfigError) as caught:
        run(settings, "vscode", home)

    message = str(caught.value)
    assert "\n" not in message
    assert "comments" in message and "not support" in message
    snippet = json.loads(message[message.index("{") :])
    assert snippet == {"servers": {"tallei": {"type": "stdio", "command": str(script), "args": ["mcp"]}}}
    assert path.read_bytes() == raw
    assert backups(path) == []


def test_command_line_exits_2_and_prints_one_line_for_a_malformed_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = claude_file(home)
    raw = write(path, b'{"mcpServers": ')

    def connect_at_home(settings: Settings, client: str, *, dry_run: bool = False) -> ConnectResult:
        return connect(settings, client, dry_run=dry_run, home=home, platform="linux", environ={})

    # Point the command line's connect() at the fake home, so the real CLI error handling decides the exit code.
    monkeypatch.setattr(clients, "connect", connect_at_home)

    code = main(
        ["--config", str(tmp_path / "absent.toml"), "--data-dir", str(tmp_path / "data"), "connect", "claude"]
    )

    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert str(path) in err
    assert path.read_bytes() == raw


def test_print_shows_the_snippet_and_creates_nothing(home: Path, settings: Settings, script: Path) -> None:
    output = run(settings, "vscode", home, print_only=True)

    snippet = json.loads(output[output.index("{") : output.rindex("}") + 1])
    assert snippet == {"servers": {"tallei": {"type": "stdio", "command": str(script), "args": ["mcp"]}}}
    assert str(home / ".config" / "Code" / "User" / "mcp.json") in output
    assert list(home.iterdir()) == []


def test_print_leaves_an_existing_file_alone(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    raw = write(path, json.dumps(EXISTING))

    output = run(settings, "claude", home, print_only=True)

    assert '"mcpServers"' in output
    assert path.read_bytes() == raw
    assert backups(path) == []


def test_print_works_even_when_the_file_is_malformed(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    raw = write(path, b"{oops")

    output = run(settings, "claude", home, print_only=True)

    assert '"tallei"' in output
    assert path.read_bytes() == raw


def test_chatgpt_gets_the_url_header_and_tunnel_note_and_nothing_is_written(
    home: Path, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", log_dir=tmp_path / "logs", http_port=9123)

    output = run(settings, "chatgpt", home)

    assert "http://127.0.0.1:9123/mcp" in output
    assert "Authorization: Bearer <token>" in output
    assert "tallei-desktop token" in output
    assert "tunnel" in output and "loopback" in output
    assert list(home.iterdir()) == []


def test_chatgpt_url_brackets_an_ipv6_host(home: Path, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", log_dir=tmp_path / "logs", http_host="::1")

    assert "http://[::1]:8765/mcp" in run(settings, "chatgpt", home)


def test_unknown_client_is_refused(home: Path, settings: Settings) -> None:
    with pytest.raises(InvalidInput, match="claude, cursor, gemini, vscode, chatgpt"):
        run(settings, "copilot", home)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_file_mode_is_kept_and_the_backup_is_no_wider(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    write(path, json.dumps(EXISTING))
    path.chmod(0o640)

    run(settings, "claude", home)

    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    [backup] = backups(path)
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_new_file_is_private_to_its_owner(home: Path, settings: Settings) -> None:
    run(settings, "cursor", home)

    assert stat.S_IMODE((home / ".cursor" / "mcp.json").stat().st_mode) == 0o600


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_symlinked_file_is_written_through_and_the_link_kept(
    home: Path, tmp_path: Path, settings: Settings
) -> None:
    real = tmp_path / "dotfiles" / "cursor-mcp.json"
    old = write(real, json.dumps({"mcpServers": {}}))
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(real)

    run(settings, "cursor", home)

    assert link.is_symlink()
    assert "tallei" in json.loads(real.read_text(encoding="utf-8"))["mcpServers"]
    assert [b.read_bytes() for b in backups(link)] == [old]


def test_non_default_data_dir_and_model_dir_go_into_env_as_absolute_paths(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(data_dir=Path("store"), log_dir=tmp_path / "logs", model_dir=Path("models/minilm"))

    run(settings, "claude", home)

    env = json.loads(claude_file(home).read_text(encoding="utf-8"))["mcpServers"]["tallei"]["env"]
    assert env == {
        "TALLEI_DATA_DIR": str(tmp_path / "store"),
        "TALLEI_MODEL_DIR": str(tmp_path / "models" / "minilm"),
    }


def test_default_data_dir_adds_no_env(home: Path, settings: Settings) -> None:
    run(settings, "claude", home)

    assert "env" not in json.loads(claude_file(home).read_text(encoding="utf-8"))["mcpServers"]["tallei"]


def test_passphrase_is_never_written_and_the_person_is_warned(home: Path, tmp_path: Path) -> None:
    secret = "correct horse battery staple"
    settings = Settings(data_dir=tmp_path / "data", log_dir=tmp_path / "logs", passphrase=secret)

    output = run(settings, "cursor", home)
    printed = run(settings, "cursor", home, print_only=True)

    assert secret not in (home / ".cursor" / "mcp.json").read_text(encoding="utf-8")
    for text in (output, printed):
        assert secret not in text
        [warning] = [line for line in text.splitlines() if "TALLEI_PASSPHRASE" in line]
        assert "Cursor" in warning


def test_without_a_console_script_the_interpreter_runs_the_package(
    home: Path, tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = tmp_path / "bare" / "python3"
    bare.parent.mkdir()
    bare.write_bytes(b"")
    monkeypatch.setattr(sys, "executable", str(bare))

    run(settings, "cursor", home)

    entry = json.loads((home / ".cursor" / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]["tallei"]
    assert entry["command"] == str(bare)
    assert entry["args"] == ["-m", "tallei_desktop", "mcp"]


@pytest.mark.parametrize(
    ("make_script", "uses_script"),
    [(lambda p: p.chmod(0o644), False), (lambda p: None, True)],
    ids=["not executable", "executable"],
)
@pytest.mark.skipif(os.name != "posix", reason="POSIX execute bits")
def test_console_script_is_used_only_when_it_can_run(
    make_script: Callable[[Path], None], uses_script: bool, home: Path, settings: Settings, script: Path
) -> None:
    make_script(script)

    run(settings, "cursor", home)

    entry = json.loads((home / ".cursor" / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]["tallei"]
    assert (entry["command"] == str(script)) is uses_script


@pytest.mark.parametrize("running", ["tallei-desktop", "Tallei"], ids=["console", "windowed"])
def test_bundled_build_launches_its_own_console_executable(
    running: str, home: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A bundle holds both executables side by side; a client needs the console one, which has stdio.
    bundle = tmp_path / "Tallei desktop"
    console = bundle / ("tallei-desktop.exe" if sys.platform == "win32" else "tallei-desktop")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle / "_internal"), raising=False)
    monkeypatch.setattr(sys, "executable", str(bundle / running))

    run(settings, "cursor", home)

    entry = json.loads((home / ".cursor" / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]["tallei"]
    assert entry == {"command": str(console), "args": ["mcp"]}


def test_result_names_the_file_the_backup_and_the_entry_written(home: Path, settings: Settings) -> None:
    path = claude_file(home)
    old = write(path, json.dumps(EXISTING))

    first = connect(settings, "claude", home=home, platform="linux", environ={})
    again = connect(settings, "claude", home=home, platform="linux", environ={})

    written = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["tallei"]
    assert (first.client, first.path, first.changed) == ("claude", path, True)
    assert first.backup is not None and first.backup.read_bytes() == old
    assert first.entry == written
    assert (again.changed, again.backup, again.entry) == (False, None, written)


def test_dry_run_result_carries_the_entry_and_changes_nothing(
    home: Path, settings: Settings, script: Path
) -> None:
    result = connect(settings, "cursor", dry_run=True, home=home, platform="darwin", environ={})

    assert result.path == home / ".cursor" / "mcp.json"
    assert (result.changed, result.backup) == (False, None)
    assert result.entry == {"command": str(script), "args": ["mcp"]}
    assert list(home.iterdir()) == []


def test_chatgpt_result_has_no_file_and_gives_the_url_and_header(home: Path, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", log_dir=tmp_path / "logs", http_port=9123)

    result = connect(settings, "chatgpt", home=home, platform="linux", environ={})

    assert (result.path, result.changed, result.backup) == (None, False, None)
    assert result.entry == {
        "url": "http://127.0.0.1:9123/mcp",
        "headers": {"Authorization": "Bearer <token>"},
    }


@pytest.mark.parametrize(
    ("platform", "folders", "expected"),
    [
        ("linux", [], []),
        ("linux", [".cursor", ".config/Code"], ["cursor", "vscode"]),
        ("darwin", ["Library/Application Support/Claude", ".gemini"], ["claude", "gemini"]),
        ("win32", ["APPDATA/Claude", "APPDATA/Code", ".cursor"], ["claude", "cursor", "vscode"]),
        # A client's settings folder in another OS's place does not count.
        ("win32", [".config/Claude"], []),
    ],
)
def test_detected_clients_are_those_whose_own_folder_holds_what_they_wrote(
    home: Path, appdata: Path, platform: str, folders: list[str], expected: list[str]
) -> None:
    for folder in folders:
        place = appdata / folder.removeprefix("APPDATA/") if folder.startswith("APPDATA/") else home / folder
        place.mkdir(parents=True)
        (place / "Preferences").write_text("{}")  # what the client itself keeps there once it has run

    found = detected_clients(home=home, platform=platform, environ={"APPDATA": str(appdata)})

    assert found == expected


def test_a_file_where_the_folder_should_be_is_not_a_detected_client(home: Path) -> None:
    (home / ".gemini").write_text("not a folder")

    assert detected_clients(home=home, platform="linux", environ={}) == []


@pytest.mark.parametrize("client", ["claude", "cursor", "gemini", "vscode"])
def test_the_settings_file_tallei_wrote_does_not_make_a_client_installed(
    home: Path, tmp_path: Path, client: str
) -> None:
    settings = Settings(data_dir=tmp_path / "data", log_dir=tmp_path / "logs")
    layout: dict[str, Any] = {"home": home, "platform": "linux", "environ": {}}
    first = connect(settings, client, **layout)
    assert first.path is not None
    first.path.write_text("{}", encoding="utf-8")  # so the second connect leaves a backup too
    assert connect(settings, client, **layout).backup is not None

    assert detected_clients(**layout) == []


def test_a_client_whose_program_is_on_the_path_is_installed(home: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "gemini"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)

    found = detected_clients(home=home, platform="linux", environ={"PATH": str(bin_dir)})

    assert found == ["gemini"]


def test_command_line_prints_the_message(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def connect_at_home(settings: Settings, client: str, *, dry_run: bool = False) -> ConnectResult:
        return connect(settings, client, dry_run=dry_run, home=home, platform="linux", environ={})

    monkeypatch.setattr(clients, "connect", connect_at_home)

    code = main(["connect", "gemini", "--config", str(tmp_path / "absent.toml"), "--data-dir", str(home)])

    out = capsys.readouterr().out
    path = home / ".gemini" / "settings.json"
    assert code == 0
    assert f"Created {path}" in out and "Restart Gemini CLI" in out
    assert json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["tallei"]["env"] == {
        "TALLEI_DATA_DIR": str(home)
    }
