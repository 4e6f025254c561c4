"""Client configuration: put Tallei's stdio entry into an MCP client's own settings file.

Each client here launches ``tallei-desktop mcp`` itself, so each gets an entry named ``tallei`` in
its own settings file, in its own format (JSON, TOML or YAML, see :mod:`.client_files`) at that
client's documented place on Linux, macOS and Windows. Every other entry and setting keeps its
value, the previous file is backed up beside it, and running it again with nothing to change writes
nothing. :func:`disconnect` removes that one entry and nothing else. Where a client has a command of
its own (``claude mcp add``, ``codex mcp add``), the entry is the one that command writes.

ChatGPT is no such client: its desktop app's local threads read Codex's settings, and the web app
cannot start a program or reach this computer; connecting it only explains the routes there are.

Nothing here prints: :func:`connect` returns a :class:`ConnectResult` that the command line prints
and the tray app shows.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from tallei_desktop.app.client_files import (
    ClientConfigError,
    FileFormat,
    Loaded,
    has_yaml_comments,
    load,
    render,
    snippet,
    write,
)
from tallei_desktop.app.paths import console_executable
from tallei_desktop.config import APP_NAME, Settings
from tallei_desktop.core import InvalidInput, KnownError

__all__ = [
    "CHATGPT",
    "CLIENT_NAMES",
    "CLIENT_TITLES",
    "SERVER_NAME",
    "ClientConfigError",
    "ConnectResult",
    "connect",
    "connect_all",
    "detected_clients",
    "disconnect",
    "tunnel_command",
]

#: The name of Tallei's entry in every client's list of servers.
SERVER_NAME = "tallei"
#: The name ``connect`` takes for the explanation of how ChatGPT reaches Tallei.
CHATGPT = "chatgpt"

#: Environment variables this module owns inside the entry; any others there are the person's.
_MANAGED_ENV = ("TALLEI_DATA_DIR", "TALLEI_MODEL_DIR")
#: Keys that would make a client reach the entry some other way than by launching it.
_REMOTE_KEYS = ("url", "httpUrl", "serverUrl", "uri", "headers", "transport", "bearer_token_env_var")


@dataclass(frozen=True, slots=True)
class ConnectResult:
    """What :func:`connect` or :func:`disconnect` did, or with ``dry_run`` would do.

    ``path`` is the client's settings file (``None`` for ChatGPT, which has none); ``changed`` says
    whether it was written; ``backup`` holds the previous file's bytes when it was; ``entry`` is
    Tallei's entry as the client sees it (empty after a disconnect; for ChatGPT, the tunnel command
    line); ``message`` is the text for the person, several lines at most.
    """

    client: str
    path: Path | None
    changed: bool
    backup: Path | None
    entry: dict[str, Any]
    message: str


@dataclass(frozen=True, slots=True)
class _Places:
    """One machine's folders: the home folder, the per-user folder where Electron apps keep their
    settings (Application Support, roaming AppData, XDG config), and XDG's config folder."""

    home: Path
    app_config: Path
    xdg_config: Path
    platform: str


Shape = Callable[[str, list[str], dict[str, str]], dict[str, Any]]


def _plain(command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    return {"command": command, "args": args, **({"env": env} if env else {})}


def _typed(command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    return {"type": "stdio", **_plain(command, args, env)}


def _claude_code(command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    # What `claude mcp add --scope user tallei -- COMMAND mcp` writes: the type, and env even when empty.
    return {"type": "stdio", "command": command, "args": args, "env": env}


def _copilot(command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    # GitHub Copilot CLI names a launched server "local" and lists the tools it may use.
    return {"type": "local", "command": command, "args": args, "env": env, "tools": ["*"]}


def _goose(command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    return {
        "name": SERVER_NAME,
        "type": "stdio",
        "cmd": command,
        "args": args,
        "envs": env,
        "enabled": True,
        "timeout": 300,
    }


@dataclass(frozen=True, slots=True)
class _Client:
    title: str
    fmt: FileFormat
    servers_key: str
    #: Where its settings file is on a machine.
    location: Callable[[_Places], Path]
    #: The folder the client creates once it has run: something in it besides what Tallei wrote
    #: means the client is installed.
    folder: Callable[[_Places], Path]
    #: Programs it puts on ``PATH``, any of which means it is installed.
    programs: tuple[str, ...]
    shape: Shape
    #: The entry's key for its environment variables.
    env_key: str = "env"
    #: Keys of the entry that stay even when empty, as the client's own command writes them.
    keep_empty: tuple[str, ...] = ()
    #: Keys Tallei sets only when the entry has none: the person may have changed them.
    defaults: tuple[str, ...] = ()
    #: Names in its folder that another client puts there, which do not show this one has run.
    foreign: tuple[str, ...] = ()
    #: A line added to every message about this client.
    note: str = ""


def _zed_file(p: _Places) -> Path:
    if p.platform == "win32":
        return p.app_config / "Zed" / "settings.json"
    return (p.xdg_config if p.platform != "darwin" else p.home / ".config") / "zed" / "settings.json"


def _goose_file(p: _Places) -> Path:
    if p.platform == "win32":
        return p.app_config / "Block" / "goose" / "config" / "config.yaml"
    return (p.xdg_config if p.platform != "darwin" else p.home / ".config") / "goose" / "config.yaml"


def _antigravity_file(p: _Places) -> Path:
    # The newest versions read ~/.gemini/config/; older ones ~/.gemini/antigravity/: a file already in
    # the older place is the one in use.
    new = p.home / ".gemini" / "config" / "mcp_config.json"
    old = p.home / ".gemini" / "antigravity" / "mcp_config.json"
    return old if old.is_file() and not new.exists() else new


_CLINE = ("Code", "User", "globalStorage", "saoudrizwan.claude-dev")

_CLIENTS: dict[str, _Client] = {
    "claude": _Client(
        "Claude Desktop",
        "json",
        "mcpServers",
        lambda p: p.app_config / "Claude" / "claude_desktop_config.json",
        lambda p: p.app_config / "Claude",
        (),
        _plain,
    ),
    "claude-code": _Client(
        "Claude Code",
        "json",
        "mcpServers",
        lambda p: p.home / ".claude.json",
        lambda p: p.home / ".claude",
        ("claude",),
        _claude_code,
        keep_empty=("env",),
    ),
    "codex": _Client(
        "Codex",
        "toml",
        "mcp_servers",
        lambda p: p.home / ".codex" / "config.toml",
        lambda p: p.home / ".codex",
        ("codex",),
        _plain,
        note="The ChatGPT desktop app reads this file too, for its local threads: restart it as well.",
    ),
    "cursor": _Client(
        "Cursor",
        "json",
        "mcpServers",
        lambda p: p.home / ".cursor" / "mcp.json",
        lambda p: p.home / ".cursor",
        ("cursor",),
        _plain,
    ),
    "vscode": _Client(
        "VS Code",
        "json",
        "servers",
        # The default profile's user file; named profiles keep their own under User/profiles/.
        lambda p: p.app_config / "Code" / "User" / "mcp.json",
        lambda p: p.app_config / "Code",
        ("code",),
        _typed,
    ),
    "windsurf": _Client(
        "Windsurf",
        "json",
        "mcpServers",
        lambda p: p.home / ".codeium" / "windsurf" / "mcp_config.json",
        lambda p: p.home / ".codeium" / "windsurf",
        ("windsurf",),
        _plain,
    ),
    "zed": _Client(
        "Zed",
        "json",
        "context_servers",
        _zed_file,
        lambda p: _zed_file(p).parent,
        ("zed", "zeditor"),
        _plain,
    ),
    "antigravity": _Client(
        "Antigravity",
        "json",
        "mcpServers",
        _antigravity_file,
        lambda p: p.home / ".gemini" / "antigravity",
        ("agy", "antigravity"),
        _plain,
    ),
    "gemini": _Client(
        "Gemini CLI",
        "json",
        "mcpServers",
        lambda p: p.home / ".gemini" / "settings.json",
        lambda p: p.home / ".gemini",
        ("gemini",),
        _plain,
        foreign=("antigravity", "config"),  # Antigravity's, in the folder it shares with Gemini CLI
        note="Gemini CLI has not served personal Google sign-ins since 18 June 2026; it still works with an "
        "API key. Its successor is Antigravity: `tallei-desktop connect antigravity`.",
    ),
    "lmstudio": _Client(
        "LM Studio",
        "json",
        "mcpServers",
        lambda p: p.home / ".lmstudio" / "mcp.json",
        lambda p: p.home / ".lmstudio",
        ("lms",),
        _plain,
    ),
    "goose": _Client(
        "Goose",
        "yaml",
        "extensions",
        _goose_file,
        lambda p: _goose_file(p).parent,
        ("goose",),
        _goose,
        env_key="envs",
        keep_empty=("envs",),
        defaults=("timeout",),
    ),
    "cline": _Client(
        "Cline",
        "json",
        "mcpServers",
        lambda p: p.app_config.joinpath(*_CLINE, "settings", "cline_mcp_settings.json"),
        lambda p: p.app_config.joinpath(*_CLINE),
        (),
        _plain,
        note="Cline is the VS Code extension: this is its file in VS Code's default profile.",
    ),
    "copilot": _Client(
        "GitHub Copilot CLI",
        "json",
        "mcpServers",
        lambda p: p.home / ".copilot" / "mcp-config.json",
        lambda p: p.home / ".copilot",
        ("copilot",),
        _copilot,
        keep_empty=("env",),
        defaults=("tools",),
    ),
}

#: Every client ``connect`` writes settings for, in the order people are shown them.
CLIENT_NAMES: tuple[str, ...] = tuple(_CLIENTS)
#: Each client's name as people know it.
CLIENT_TITLES: dict[str, str] = {name: spec.title for name, spec in _CLIENTS.items()}


def _places(home: Path | None, platform: str | None, environ: Mapping[str, str] | None) -> _Places:
    if home is None and platform is None and environ is None:
        system = sys.platform
        home = Path.home()
        if system == "darwin":
            app_config = home / "Library" / "Application Support"
        else:
            # platformdirs asks Windows for the roaming AppData folder and honours XDG_CONFIG_HOME
            # elsewhere, which is where Electron looks too.
            app_config = Path(platformdirs.user_config_dir(roaming=True))
        xdg = app_config if system not in ("darwin", "win32") else home / ".config"
        return _Places(home, app_config, xdg, system)
    home = home or Path.home()
    env = environ or {}
    system = platform or sys.platform
    xdg_value = env.get("XDG_CONFIG_HOME")
    xdg = Path(xdg_value) if xdg_value else home / ".config"
    if system == "darwin":
        return _Places(home, home / "Library" / "Application Support", xdg, system)
    if system == "win32":
        appdata = env.get("APPDATA")
        return _Places(home, Path(appdata) if appdata else home / "AppData" / "Roaming", xdg, system)
    return _Places(home, xdg, xdg, system)


def _spec(client: str) -> _Client:
    spec = _CLIENTS.get(client)
    if spec is None:
        raise InvalidInput(f"Unknown client {client!r}: choose one of {', '.join([*CLIENT_NAMES, CHATGPT])}.")
    return spec


def connect(
    settings: Settings,
    client: str,
    *,
    dry_run: bool = False,
    home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ConnectResult:
    """Add or refresh the ``tallei`` entry in ``client``'s settings file.

    With ``dry_run`` nothing is read or written, and the message holds the entry to merge by hand.
    ``home``, ``platform`` (a ``sys.platform`` value) and ``environ`` (``APPDATA``,
    ``XDG_CONFIG_HOME``) describe another machine's layout; when all three are omitted, this
    machine's folders are used.

    Raises :class:`InvalidInput` for an unknown client, and :class:`ClientConfigError` when the file
    cannot be read as its format, its servers are not a table of named servers, or it cannot be
    written; the file is then left as it was.
    """
    if client == CHATGPT:
        return _explain_chatgpt(settings)
    spec = _spec(client)
    path = spec.location(_places(home, platform, environ))
    entry = _entry(settings, spec)
    lines: list[str] = []
    if settings.passphrase:
        lines.append(
            f"Warning: your Tallei passphrase is not written to {path.name}; {spec.title} must have "
            "TALLEI_PASSPHRASE in its environment to open the store."
        )
    if dry_run:
        lines.append(snippet(spec.fmt, spec.servers_key, SERVER_NAME, entry))
        lines.append(f"Merge this into {path}, keeping what is already there, then restart {spec.title}.")
        lines += [spec.note] if spec.note else []
        return ConnectResult(client, path, False, None, entry, "\n".join(lines))

    loaded = _load(path, client, spec, entry)
    before = loaded.document.get(spec.servers_key, {}).get(SERVER_NAME)
    merged = _merge(before, entry, spec)
    if loaded.raw is not None and merged == before:
        lines.append(f"{spec.title} is already connected: {path} has the current entry; nothing changed.")
        lines += [spec.note] if spec.note else []
        return ConnectResult(client, path, False, None, merged, "\n".join(lines))

    backup = write(path, loaded.raw, render(loaded, spec.fmt, spec.servers_key, SERVER_NAME, merged, path))
    verb = "Updated" if loaded.raw is not None else "Created"
    lines.append(f"{verb} {path} with the {SERVER_NAME!r} entry.")
    if backup is not None:
        lines.append(f"The previous file is saved as {backup}.")
        if spec.fmt == "yaml" and has_yaml_comments(loaded.text):
            lines.append("Its comments are not in the new file; the saved copy keeps them.")
    lines.append(f"Restart {spec.title} to load it.")
    lines += [spec.note] if spec.note else []
    return ConnectResult(client, path, True, backup, merged, "\n".join(lines))


def disconnect(
    client: str,
    *,
    home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ConnectResult:
    """Remove the ``tallei`` entry from ``client``'s settings file, and nothing else.

    Without such an entry (or without the file) nothing is written. Raises as :func:`connect` does.
    """
    spec = _spec(client)
    path = spec.location(_places(home, platform, environ))
    loaded = _load(path, client, spec, None)
    if SERVER_NAME not in loaded.document.get(spec.servers_key, {}):
        message = f"{spec.title} has no {SERVER_NAME!r} entry in {path}; nothing changed."
        return ConnectResult(client, path, False, None, {}, message)
    backup = write(path, loaded.raw, render(loaded, spec.fmt, spec.servers_key, SERVER_NAME, None, path))
    lines = [f"Removed the {SERVER_NAME!r} entry from {path}; everything else in it is as it was."]
    if backup is not None:
        lines.append(f"The previous file is saved as {backup}.")
        if spec.fmt == "yaml" and has_yaml_comments(loaded.text):
            lines.append("Its comments are not in the new file; the saved copy keeps them.")
    lines.append(f"Restart {spec.title} to stop it using Tallei.")
    return ConnectResult(client, path, True, backup, {}, "\n".join(lines))


def connect_all(
    settings: Settings,
    *,
    dry_run: bool = False,
    home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[tuple[str, ConnectResult | KnownError]]:
    """Connect every client :func:`detected_clients` finds; one client's failure does not stop the rest."""
    done: list[tuple[str, ConnectResult | KnownError]] = []
    for client in detected_clients(home=home, platform=platform, environ=environ):
        try:
            done.append(
                (
                    client,
                    connect(settings, client, dry_run=dry_run, home=home, platform=platform, environ=environ),
                )
            )
        except KnownError as exc:
            done.append((client, exc))
    return done


def detected_clients(
    *, home: Path | None = None, platform: str | None = None, environ: Mapping[str, str] | None = None
) -> list[str]:
    """The clients that can launch Tallei and are installed here.

    A client counts when one of its programs is on ``PATH`` or its own folder holds something the
    client wrote: the settings files Tallei writes (with their backups, and the folders leading to
    them) do not count, so connecting a client never makes it, or another, look installed. In
    :data:`CLIENT_NAMES` order. ``home``, ``platform`` and ``environ`` are as for :func:`connect` (a
    given ``environ`` without ``PATH`` finds no program).
    """
    places = _places(home, platform, environ)
    search = None if environ is None else environ.get("PATH", "")
    ours = [spec.location(places) for spec in _CLIENTS.values()]
    return [
        name
        for name, spec in _CLIENTS.items()
        if any(shutil.which(program, path=search) for program in spec.programs)
        or _written_by_client(spec.folder(places), ours, spec.foreign)
    ]


def _written_by_client(folder: Path, ours: list[Path], foreign: tuple[str, ...]) -> bool:
    return folder.is_dir() and _holds_more_than(folder, ours, foreign)


def _holds_more_than(folder: Path, ours: list[Path], foreign: tuple[str, ...] = ()) -> bool:
    """Whether ``folder`` holds anything besides ``ours``, their backups, the folders on the way to
    them and the ``foreign`` names."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return False
    for entry in entries:
        if entry.name in foreign:
            continue
        if any(
            entry.parent == o.parent and (entry == o or entry.name.startswith(f"{o.name}.")) for o in ours
        ):
            continue
        if entry.is_dir() and any(o.is_relative_to(entry) for o in ours):
            if _holds_more_than(entry, ours):
                return True
            continue
        return True
    return False


def _launcher() -> list[str]:
    """The absolute command line that starts this installation's stdio server."""
    console = console_executable()
    if console is not None:  # a bundle: its console executable, even when the windowed one runs this
        return [str(console), "mcp"]
    # Not resolved: a virtualenv's python is a symlink, and the console script sits beside the link.
    python = Path(sys.executable).absolute()
    name = "tallei-desktop.exe" if os.name == "nt" else "tallei-desktop"
    # A Windows base install keeps python.exe at the top and its console scripts in Scripts\.
    for folder in (python.parent, python.parent / "Scripts"):
        script = folder / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script), "mcp"]
    return [str(python), "-m", "tallei_desktop", "mcp"]


def _entry(settings: Settings, spec: _Client) -> dict[str, Any]:
    command, *args = _launcher()
    return spec.shape(command, args, _environment(settings))


def _environment(settings: Settings) -> dict[str, str]:
    # Clients start servers from a folder of their choosing, so relative paths would point elsewhere.
    env: dict[str, str] = {}
    data_dir = settings.data_dir.expanduser().absolute()
    if data_dir != Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)).absolute():
        env["TALLEI_DATA_DIR"] = str(data_dir)
    if settings.model_dir is not None:
        env["TALLEI_MODEL_DIR"] = str(settings.model_dir.expanduser().absolute())
    return env


def _merge(old: object, fresh: dict[str, Any], spec: _Client) -> dict[str, Any]:
    """``fresh`` laid over an existing entry, keeping what the person added to it (timeouts, flags, env)."""
    if not isinstance(old, dict):
        return fresh
    merged = {k: v for k, v in old.items() if k not in _REMOTE_KEYS}
    if "type" not in fresh and merged.get("type", "stdio") != "stdio":
        del merged["type"]
    merged.update(
        {k: v for k, v in fresh.items() if k != spec.env_key and not (k in spec.defaults and k in merged)}
    )

    old_env = old.get(spec.env_key)
    env: dict[str, Any] = {}
    fresh_env: dict[str, str] = fresh.get(spec.env_key, {})
    for key, value in (old_env if isinstance(old_env, dict) else {}).items():
        if key not in _MANAGED_ENV:
            env[key] = value
        elif key in fresh_env:
            env[key] = fresh_env[key]
    for key, value in fresh_env.items():
        env.setdefault(key, value)
    if env or spec.env_key in spec.keep_empty:
        merged[spec.env_key] = env
    else:
        merged.pop(spec.env_key, None)
    return merged


def _load(path: Path, client: str, spec: _Client, entry: dict[str, Any] | None) -> Loaded:
    hint = f"fix it, or add the entry by hand (`tallei-desktop connect {client} --print` shows it)"
    paste = json.dumps({spec.servers_key: {SERVER_NAME: entry}}, ensure_ascii=False) if entry else "{}"
    if entry is None:
        hint = f"fix it, or remove the {SERVER_NAME!r} entry by hand"
        paste = f"remove the {SERVER_NAME!r} entry from {spec.servers_key!r}"
    return load(path, spec.fmt, spec.servers_key, hint, paste)


def tunnel_command(launcher: list[str] | None = None, *, windows: bool | None = None) -> str:
    """The command line that runs OpenAI's tunnel-client with Tallei's stdio server behind it,
    quoted for this system's shell (``windows`` chooses another's)."""
    server = launcher or _launcher()
    if windows is None:
        windows = os.name == "nt"
    quoted = subprocess.list2cmdline(server) if windows else shlex.join(server)
    mcp = subprocess.list2cmdline([quoted]) if windows else shlex.quote(quoted)
    return (
        "tunnel-client run --control-plane.tunnel-id <YOUR_TUNNEL_ID> "
        f"--control-plane.api-key env:CONTROL_PLANE_API_KEY --mcp.command {mcp}"
    )


def _explain_chatgpt(settings: Settings) -> ConnectResult:
    command = tunnel_command()
    lines = [
        "ChatGPT desktop app (macOS, Windows), local threads: it reads Codex's settings. Run "
        "`tallei-desktop connect codex`, then restart the app.",
        "ChatGPT on the web (Chat mode): its apps and connectors run on OpenAI's servers, so they cannot start "
        "a program or reach an address on this computer. The one way that keeps Tallei here is OpenAI's Secure "
        "MCP Tunnel: tunnel-client connects out to OpenAI (nothing listens on this computer) and starts Tallei "
        "for ChatGPT. You need an OpenAI Platform tunnel id and a restricted runtime key (Tunnels: Read and "
        "Use) in CONTROL_PLANE_API_KEY; keep this running:",
        f"  {command}",
        "Then in ChatGPT, under Settings → Apps → Advanced → Developer mode, create an app with "
        "Connection: Tunnel and the same tunnel id. `tunnel-client help quickstart` explains each step.",
        "Do not publish Tallei's loopback endpoint through a public tunnel: ChatGPT offers only OAuth or no "
        "authentication, so anyone who found the address could read and change your memories.",
        "For everyone else, Tallei's browser extension works inside chatgpt.com: "
        "`tallei-desktop connect chrome` (or chromium, edge, brave, firefox) registers it.",
    ]
    entry: dict[str, Any] = {"tunnel_command": command}
    return ConnectResult(CHATGPT, None, False, None, entry, "\n".join(lines))
