"""Client configuration: the settings writers, against fixture files in a fake home folder.

Every written file is read back with its format's real parser (json, tomllib, PyYAML) and checked for
the shape its client documents, for each OS's paths.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import sys
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import platformdirs
import pytest
import yaml

from tallei_desktop.app import clients
from tallei_desktop.app.clients import (
    CLIENT_NAMES,
    ClientConfigError,
    ConnectResult,
    connect,
    detected_clients,
    disconnect,
)
from tallei_desktop.cli import _CLIENTS as CLI_CLIENTS
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
    ("zed", "darwin"): ".config/zed/settings.json",
    ("zed", "win32"): "APPDATA/Zed/settings.json",
    ("zed", "linux"): ".config/zed/settings.json",
    ("goose", "darwin"): ".config/goose/config.yaml",
    ("goose", "win32"): "APPDATA/Block/goose/config/config.yaml",
    ("goose", "linux"): ".config/goose/config.yaml",
    (
        "cline",
        "darwin",
    ): "Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/"
    "cline_mcp_settings.json",
    (
        "cline",
        "win32",
    ): "APPDATA/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    (
        "cline",
        "linux",
    ): ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    **{
        (client, p): relative
        for client, relative in {
            "claude-code": ".claude.json",
            "codex": ".codex/config.toml",
            "cursor": ".cursor/mcp.json",
            "windsurf": ".codeium/windsurf/mcp_config.json",
            "antigravity": ".gemini/config/mcp_config.json",
            "gemini": ".gemini/settings.json",
            "lmstudio": ".lmstudio/mcp.json",
            "copilot": ".copilot/mcp-config.json",
        }.items()
        for p in ("darwin", "win32", "linux")
    },
}
SERVERS_KEY = {
    **dict.fromkeys(CLIENT_NAMES, "mcpServers"),
    "vscode": "servers",
    "zed": "context_servers",
    "codex": "mcp_servers",
    "goose": "extensions",
}
FORMAT = {**dict.fromkeys(CLIENT_NAMES, "json"), "codex": "toml", "goose": "yaml"}
PLATFORMS = ("darwin", "win32", "linux")


def parse(client: str, path: Path) -> dict[str, Any]:
    """The whole file, read with the real parser of the client's format."""
    text = path.read_text(encoding="utf-8")
    if FORMAT[client] == "toml":
        return tomllib.loads(text)
    if FORMAT[client] == "yaml":
        loaded: dict[str, Any] = yaml.safe_load(text)
        return loaded
    document: dict[str, Any] = json.loads(text)
    return document


def entry_of(client: str, path: Path) -> Any:
    return parse(client, path)[SERVERS_KEY[client]]["tallei"]


def documented_entry(client: str, command: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The entry each client documents for a launched (stdio) server."""
    env = env or {}
    plain: dict[str, Any] = {"command": command, "args": ["mcp"], **({"env": env} if env else {})}
    if client == "vscode":
        return {"type": "stdio", **plain}
    if client == "claude-code":  # as `claude mcp add --scope user tallei -- COMMAND mcp` writes it
        return {"type": "stdio", "command": command, "args": ["mcp"], "env": env}
    if client == "copilot":
        return {"type": "local", "command": command, "args": ["mcp"], "env": env, "tools": ["*"]}
    if client == "goose":
        return {
            "name": "tallei",
            "type": "stdio",
            "cmd": command,
            "args": ["mcp"],
            "envs": env,
            "enabled": True,
            "timeout": 300,
        }
    return plain


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


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_fresh_settings_file_is_created_at_the_clients_own_location(
    client: str, platform: str, home: Path, appdata: Path, settings: Settings, script: Path
) -> None:
    output = run(settings, client, home, platform=platform, environ={"APPDATA": str(appdata)})

    path = config_file(client, platform, home, appdata)
    assert parse(client, path) == {SERVERS_KEY[client]: {"tallei": documented_entry(client, str(script))}}
    assert backups(path) == []
    assert str(path) in output
    assert "restart" in output.lower()


def test_json_is_written_with_two_space_indent(home: Path, settings: Settings, script: Path) -> None:
    run(settings, "cursor", home)

    expected = {"mcpServers": {"tallei": {"command": str(script), "args": ["mcp"]}}}
    assert (home / ".cursor" / "mcp.json").read_text(encoding="utf-8") == json.dumps(
        expected, indent=2
    ) + "\n"


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


def test_chatgpt_is_told_the_truth_and_nothing_is_written(home: Path, tmp_path: Path, script: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", log_dir=tmp_path / "logs", http_port=9123)

    result = connect(settings, "chatgpt", home=home, platform="linux", environ={})

    assert (result.path, result.changed, result.backup) == (None, False, None)
    output = result.message
    # The desktop app's local threads read Codex's settings.
    assert "ChatGPT desktop app" in output and "tallei-desktop connect codex" in output
    # The web app: OpenAI's Secure MCP Tunnel, run with this installation's own stdio server.
    [command_line] = [
        line.strip() for line in output.splitlines() if line.strip().startswith("tunnel-client ")
    ]
    assert command_line == result.entry["tunnel_command"]
    argv = shlex.split(command_line)
    assert argv[:2] == ["tunnel-client", "run"]
    assert argv[argv.index("--control-plane.tunnel-id") + 1] == "<YOUR_TUNNEL_ID>"
    assert argv[argv.index("--control-plane.api-key") + 1] == "env:CONTROL_PLANE_API_KEY"
    assert shlex.split(argv[argv.index("--mcp.command") + 1]) == [str(script), "mcp"]
    assert "tunnel id" in output and "runtime key" in output and "nothing listens" in output
    assert "Connection: Tunnel" in output
    # A public tunnel to the loopback endpoint is only ever described as unsafe.
    assert "Do not publish" in output and "OAuth" in output
    for wrong in ("Bearer", "9123", "127.0.0.1", "/mcp\n", "tallei-desktop token"):
        assert wrong not in output, wrong
    # Everyone else: the browser extension.
    assert "tallei-desktop connect chrome" in output
    assert list(home.iterdir()) == []


def test_the_tunnel_command_quotes_a_path_with_spaces() -> None:
    from tallei_desktop.app.clients import tunnel_command

    line = tunnel_command(["/Applications/Tallei desktop/tallei-desktop", "mcp"], windows=False)

    argv = shlex.split(line)
    assert shlex.split(argv[argv.index("--mcp.command") + 1]) == [
        "/Applications/Tallei desktop/tallei-desktop",
        "mcp",
    ]
    on_windows = tunnel_command([r"C:\Program Files\Tallei\tallei-desktop.exe", "mcp"], windows=True)
    assert on_windows.endswith(r' --mcp.command "\"C:\Program Files\Tallei\tallei-desktop.exe\" mcp"')


def test_unknown_client_is_refused(home: Path, settings: Settings) -> None:
    with pytest.raises(InvalidInput, match="claude, claude-code, codex, cursor, vscode, windsurf, zed"):
        run(settings, "notepad", home)


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


@pytest.mark.parametrize(
    ("platform", "folders", "expected"),
    [
        ("linux", [], []),
        ("linux", [".cursor", ".config/Code"], ["cursor", "vscode"]),
        ("darwin", ["Library/Application Support/Claude", ".gemini"], ["claude", "gemini"]),
        ("win32", ["APPDATA/Claude", "APPDATA/Code", ".cursor"], ["claude", "cursor", "vscode"]),
        # A client's settings folder in another OS's place does not count.
        ("win32", [".config/Claude"], []),
        (
            "linux",
            [
                ".claude",
                ".codex",
                ".codeium/windsurf",
                ".config/zed",
                ".lmstudio",
                ".config/goose",
                ".copilot",
            ],
            ["claude-code", "codex", "windsurf", "zed", "lmstudio", "goose", "copilot"],
        ),
        # Antigravity's folder sits inside Gemini CLI's: it does not make Gemini CLI installed.
        ("darwin", [".gemini/antigravity"], ["antigravity"]),
        # Cline is an extension inside VS Code: its own folder means both are there.
        ("win32", ["APPDATA/Code/User/globalStorage/saoudrizwan.claude-dev"], ["vscode", "cline"]),
        ("darwin", ["Library/Application Support/Zed", ".config/goose"], ["goose"]),
        ("win32", ["APPDATA/Zed", "APPDATA/Block/goose/config"], ["zed", "goose"]),
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


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_settings_files_tallei_wrote_do_not_make_any_client_installed(
    home: Path, appdata: Path, tmp_path: Path, platform: str
) -> None:
    settings = Settings(data_dir=tmp_path / "data", log_dir=tmp_path / "logs")
    layout: dict[str, Any] = {"home": home, "platform": platform, "environ": {"APPDATA": str(appdata)}}
    for client in CLIENT_NAMES:
        first = connect(settings, client, **layout)
        assert first.path is not None
        first.path.write_text("", encoding="utf-8")  # so the second connect leaves a backup too
        assert connect(settings, client, **layout).backup is not None

    assert detected_clients(**layout) == []


def test_the_command_line_knows_every_client() -> None:
    assert CLI_CLIENTS == CLIENT_NAMES


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


#: A Codex file as people keep them: comments, arrays, other servers with their own env tables, a
#: profile, an array of tables and a multi-line string that looks like a table header.
CODEX_TOML = """\
# Codex settings
model = "gpt-5.5"
approval_policy = "on-request"
notify = ["notify-send", "Codex"]

[mcp_servers.git]
command = "uvx"
args = ["mcp-server-git", "--repository", 'C:\\\\src\\\\app']
startup_timeout_sec = 20

[mcp_servers.git.env]
GIT_AUTHOR = "Ana"

# Profiles, one per mood
[profiles.fast]
model = "gpt-5.5-mini"
instructions = \"\"\"
[mcp_servers.tallei]
not a table: just text
\"\"\"

[[hooks]]
event = "start"
run = ["echo", "hi"]
"""

GOOSE_YAML = """\
# Goose settings
GOOSE_PROVIDER: openai
GOOSE_MODEL: gpt-5.5
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  memory:
    args: [-y, "@modelcontextprotocol/server-memory"]
    cmd: npx
    enabled: false
    envs: {MEMORY_FILE: /home/ana/memory.json}
    name: memory
    timeout: 120
    type: stdio
"""


def existing_file(client: str) -> str:
    """A file for ``client`` that already holds other servers and other settings."""
    if FORMAT[client] == "toml":
        return CODEX_TOML
    if FORMAT[client] == "yaml":
        return GOOSE_YAML
    document = json.loads(json.dumps(EXISTING))
    document[SERVERS_KEY[client]] = document.pop("mcpServers")
    return json.dumps(document, indent=4, ensure_ascii=False)


def parsed_text(client: str, text: str) -> dict[str, Any]:
    if FORMAT[client] == "toml":
        return tomllib.loads(text)
    if FORMAT[client] == "yaml":
        loaded: dict[str, Any] = yaml.safe_load(text)
        return loaded
    document: dict[str, Any] = json.loads(text)
    return document


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_connect_then_disconnect_keeps_everything_else_and_backs_up_each_change(
    client: str, platform: str, home: Path, appdata: Path, settings: Settings, script: Path
) -> None:
    layout: dict[str, Any] = {"home": home, "platform": platform, "environ": {"APPDATA": str(appdata)}}
    path = config_file(client, platform, home, appdata)
    original = write(path, existing_file(client))
    before = parsed_text(client, original.decode())

    connected = connect(settings, client, **layout)
    again = connect(settings, client, **layout)

    after = parse(client, path)
    assert after[SERVERS_KEY[client]].pop("tallei") == documented_entry(client, str(script))
    assert after == before
    assert connected.changed and [b.read_bytes() for b in backups(path)] == [original]
    assert not again.changed and "already connected" in again.message
    connected_bytes = path.read_bytes()

    removed = disconnect(client, **layout)

    assert removed.changed and "Removed" in removed.message
    assert parse(client, path) == before
    assert sorted(b.read_bytes() for b in backups(path)) == sorted([original, connected_bytes])
    if FORMAT[client] == "toml":  # edited as text: the person's file comes back byte for byte
        assert path.read_bytes() == original
    nothing = disconnect(client, **layout)
    assert not nothing.changed and "nothing changed" in nothing.message
    assert len(backups(path)) == 2


def test_codex_keeps_comments_and_layout_and_adds_only_its_own_tables(
    home: Path, tmp_path: Path, script: Path
) -> None:
    # A folder name with a quote and a backslash: both must be escaped in TOML.
    odd = tmp_path / 'my "data"\\store'
    settings = Settings(data_dir=odd, log_dir=tmp_path / "logs")
    path = home / ".codex" / "config.toml"
    write(path, CODEX_TOML)

    output = run(settings, "codex", home)

    text = path.read_text(encoding="utf-8")
    assert text.startswith(CODEX_TOML)  # every byte of the person's file, in place
    added = text.removeprefix(CODEX_TOML)
    # What `codex mcp add tallei --env TALLEI_DATA_DIR=… -- COMMAND mcp` writes: one table and its env.
    assert re.findall(r"(?m)^\[.*\]$", added) == ["[mcp_servers.tallei]", "[mcp_servers.tallei.env]"]
    assert tomllib.loads(text)["mcp_servers"]["tallei"] == {
        "command": str(script),
        "args": ["mcp"],
        "env": {"TALLEI_DATA_DIR": str(odd)},
    }
    assert "ChatGPT desktop app reads this file too" in output


def test_codex_entry_is_replaced_where_it_stands_keeping_the_persons_additions(
    home: Path, settings: Settings, script: Path
) -> None:
    path = home / ".codex" / "config.toml"
    head = '# mine\nmodel = "o5"\n\n'
    ours = (
        "[mcp_servers.tallei]\n"
        'command = "/old/venv/bin/tallei-desktop"\n'
        'args = ["mcp", "--verbose"]\n'
        "startup_timeout_sec = 30\n"
        'enabled_tools = ["recall_memories", "save_memory"]\n'
        "\n"
        "[mcp_servers.tallei.env]\n"
        'TALLEI_DATA_DIR = "/old/data"\n'
        'HTTPS_PROXY = "http://proxy:3128"\n'
        "\n"
    )
    tail = '# the next one is mine too\n[mcp_servers.git]\ncommand = "uvx"\n'
    write(path, head + ours + tail)

    run(settings, "codex", home)

    text = path.read_text(encoding="utf-8")
    assert text.startswith(head) and text.endswith("\n" + tail)
    assert text.index("[mcp_servers.tallei]") < text.index("[mcp_servers.git]")
    assert tomllib.loads(text)["mcp_servers"] == {
        "tallei": {
            "command": str(script),
            "args": ["mcp"],
            "startup_timeout_sec": 30,
            "enabled_tools": ["recall_memories", "save_memory"],
            "env": {"HTTPS_PROXY": "http://proxy:3128"},
        },
        "git": {"command": "uvx"},
    }
    assert "already connected" in run(settings, "codex", home)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('[mcp_servers]\ntallei = { command = "x" }\n', "in a form this command does not edit"),
        ('mcp_servers.tallei.command = "x"\n', "in a form this command does not edit"),
        ('model = "o5\n', "not valid TOML"),
        ('mcp_servers = "none"\n', '"mcp_servers" must be a table'),
    ],
    ids=["inline table", "dotted keys", "broken", "not a table"],
)
def test_codex_file_that_cannot_be_edited_safely_is_left_alone(
    content: str, expected: str, home: Path, settings: Settings
) -> None:
    path = home / ".codex" / "config.toml"
    raw = write(path, content)

    for attempt in (
        lambda: run(settings, "codex", home),
        lambda: disconnect("codex", home=home, platform="linux", environ={}),
    ):
        with pytest.raises(ClientConfigError) as caught:
            attempt()
        message = str(caught.value)
        assert expected in message and str(path) in message and "\n" not in message
        assert path.read_bytes() == raw
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_codex_print_shows_the_tables_to_add(home: Path, settings: Settings, script: Path) -> None:
    output = run(settings, "codex", home, print_only=True)

    table = output[output.index("[mcp_servers.tallei]") : output.index("\nMerge this")]
    assert tomllib.loads(table) == {"mcp_servers": {"tallei": {"command": str(script), "args": ["mcp"]}}}
    assert list(home.iterdir()) == []


def test_goose_keeps_the_persons_timeout_and_says_the_comments_went_to_the_backup(
    home: Path, settings: Settings, script: Path
) -> None:
    path = home / ".config" / "goose" / "config.yaml"
    text = GOOSE_YAML.replace(
        "extensions:\n",
        "extensions:\n  tallei:\n    cmd: /old/tallei-desktop\n    timeout: 900\n    enabled: false\n",
        1,
    )
    raw = write(path, text)

    output = run(settings, "goose", home)

    after = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert after["extensions"]["tallei"] == {**documented_entry("goose", str(script)), "timeout": 900}
    assert list(after["extensions"]) == ["tallei", "developer", "memory"]
    assert after["GOOSE_MODEL"] == "gpt-5.5" and after["extensions"]["memory"]["enabled"] is False
    assert "comments are not in the new file" in output
    [backup] = backups(path)
    assert backup.read_bytes() == raw and str(backup) in output


def test_goose_file_that_is_not_a_mapping_is_left_alone(home: Path, settings: Settings) -> None:
    path = home / ".config" / "goose" / "config.yaml"
    for content, expected in (
        ("- a\n- b\n", "mapping"),
        ("extensions: [a, b]\n", '"extensions" must be a mapping'),
        ("a: [\n", "not valid YAML"),
    ):
        raw = write(path, content)
        with pytest.raises(ClientConfigError, match=re.escape(expected)):
            run(settings, "goose", home)
        assert path.read_bytes() == raw and backups(path) == []


def test_antigravity_uses_the_older_file_only_where_it_is_the_one_in_use(
    home: Path, settings: Settings, script: Path
) -> None:
    older = home / ".gemini" / "antigravity" / "mcp_config.json"
    write(older, '{"mcpServers": {}}')

    run(settings, "antigravity", home)

    assert json.loads(older.read_text(encoding="utf-8"))["mcpServers"]["tallei"]["command"] == str(script)
    assert not (home / ".gemini" / "config").exists()


def test_gemini_cli_says_it_is_for_api_keys_and_points_to_antigravity(home: Path, settings: Settings) -> None:
    output = run(settings, "gemini", home)

    assert "API key" in output and "18 June 2026" in output and "connect antigravity" in output


def test_disconnect_without_a_file_creates_nothing(home: Path) -> None:
    result = disconnect("cursor", home=home, platform="linux", environ={})

    assert not result.changed and "nothing changed" in result.message
    assert list(home.iterdir()) == []


def test_disconnect_of_a_malformed_file_changes_nothing(home: Path) -> None:
    path = claude_file(home)
    raw = write(path, b'{"mcpServers": {"tallei": ')

    with pytest.raises(ClientConfigError, match="not valid JSON"):
        disconnect("claude", home=home, platform="linux", environ={})

    assert path.read_bytes() == raw


def test_command_line_connect_all_connects_what_is_found_and_disconnect_removes_one(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    layout: dict[str, Any] = {"home": home, "platform": "linux", "environ": {}}
    real_all, real_disconnect = clients.connect_all, clients.disconnect
    monkeypatch.setattr(
        clients, "connect_all", lambda settings, dry_run=False: real_all(settings, dry_run=dry_run, **layout)
    )
    monkeypatch.setattr(clients, "disconnect", lambda client: real_disconnect(client, **layout))
    for folder in (".cursor", ".codex"):
        (home / folder).mkdir()
        (home / folder / "state.json").write_text("{}")  # each client has run here
    common = ["--config", str(tmp_path / "absent.toml"), "--data-dir", str(tmp_path / "data")]

    assert main(["connect", "--all", *common]) == 0

    out = capsys.readouterr().out
    assert "Codex: Created" in out and "Cursor: Created" in out and "Claude" not in out
    assert entry_of("codex", home / ".codex" / "config.toml")["args"] == ["mcp"]
    assert entry_of("cursor", home / ".cursor" / "mcp.json")["args"] == ["mcp"]

    assert main(["disconnect", "cursor", *common]) == 0

    assert "Removed" in capsys.readouterr().out
    assert json.loads((home / ".cursor" / "mcp.json").read_text(encoding="utf-8")) == {"mcpServers": {}}
    assert (
        "tallei"
        in tomllib.loads((home / ".codex" / "config.toml").read_text(encoding="utf-8"))["mcp_servers"]
    )


def test_command_line_connect_all_with_nothing_found_says_so(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_all = clients.connect_all
    monkeypatch.setattr(
        clients,
        "connect_all",
        lambda settings, dry_run=False: real_all(
            settings, dry_run=dry_run, home=home, platform="linux", environ={}
        ),
    )

    assert main(["connect", "--all", "--config", str(tmp_path / "absent.toml")]) == 0

    assert "No assistant that can start Tallei was found" in capsys.readouterr().out
    assert list(home.iterdir()) == []


@pytest.mark.parametrize("argv", [["connect"], ["connect", "cursor", "--all"]], ids=["neither", "both"])
def test_command_line_connect_needs_one_client_or_all(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--config", str(tmp_path / "absent.toml")]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--all" in err
