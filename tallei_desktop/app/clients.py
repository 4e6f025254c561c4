"""Client configuration: put Tallei's stdio entry into an MCP client's own settings file.

Claude Desktop, Cursor, Gemini CLI and VS Code launch ``tallei-desktop mcp`` themselves, so each gets
an entry named ``tallei`` in its JSON settings file at that client's real per-OS location. The file is
edited as data: every other key and entry keeps its value and its place, the previous file is backed
up beside it, the new one replaces it atomically with the same file mode, and running it again with
nothing to change writes nothing. A file that cannot be read as plain JSON is left exactly as it is.
ChatGPT cannot launch local programs, so connecting it only explains how it would reach the HTTP
endpoint.

Nothing here prints: :func:`connect` returns a :class:`ConnectResult` that the command line prints
and the tray app shows.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import platformdirs

from tallei_desktop.app.paths import console_executable
from tallei_desktop.config import APP_NAME, Settings
from tallei_desktop.core import InvalidInput, KnownError, replace_file

__all__ = ["CLIENT_NAMES", "SERVER_NAME", "ClientConfigError", "ConnectResult", "connect", "detected_clients"]

#: The name of Tallei's entry in every client's list of servers.
SERVER_NAME = "tallei"

#: Environment variables this module owns inside the entry; any others there are the person's.
_MANAGED_ENV = ("TALLEI_DATA_DIR", "TALLEI_MODEL_DIR")
#: Keys that would make a client reach the entry some other way than by launching it.
_REMOTE_KEYS = ("url", "httpUrl", "serverUrl", "headers", "transport")


class ClientConfigError(KnownError):
    """A client's settings file cannot be read or written as plain JSON; it was left unchanged."""


@dataclass(frozen=True, slots=True)
class ConnectResult:
    """What :func:`connect` did, or with ``dry_run`` would do.

    ``path`` is the client's settings file (``None`` for ChatGPT, which has none); ``changed`` says
    whether it was written; ``backup`` holds the previous file's bytes when it was; ``entry`` is
    Tallei's entry as the client sees it (for ChatGPT, the URL and header to enter); ``message`` is
    the text for the person, several lines at most.
    """

    client: str
    path: Path | None
    changed: bool
    backup: Path | None
    entry: dict[str, Any]
    message: str


@dataclass(frozen=True, slots=True)
class _Client:
    title: str
    servers_key: str
    #: VS Code requires the transport to be named; the others infer stdio from ``command``.
    typed: bool


_CLIENTS: dict[str, _Client] = {
    "claude": _Client("Claude Desktop", "mcpServers", typed=False),
    "cursor": _Client("Cursor", "mcpServers", typed=False),
    "gemini": _Client("Gemini CLI", "mcpServers", typed=False),
    "vscode": _Client("VS Code", "servers", typed=True),
}

#: Every name ``connect`` accepts.
CLIENT_NAMES = (*_CLIENTS, "chatgpt")


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

    With ``dry_run`` nothing is read or written, and the message holds the JSON to merge by hand.
    ``home``, ``platform`` (a ``sys.platform`` value) and ``environ`` (``APPDATA``,
    ``XDG_CONFIG_HOME``) describe another machine's layout; when all three are omitted, this
    machine's folders are used.

    Raises :class:`InvalidInput` for an unknown client, and :class:`ClientConfigError` when the file
    is not a plain JSON object with an object of servers, or cannot be written; the file is then
    left as it was.
    """
    if client == "chatgpt":
        return _explain_chatgpt(settings)
    spec = _CLIENTS.get(client)
    if spec is None:
        raise InvalidInput(f"Unknown client {client!r}: choose one of {', '.join(CLIENT_NAMES)}.")

    path = _config_file(client, _app_config_root(home, platform, environ), home or Path.home())
    entry = _entry(settings, spec)
    snippet = {spec.servers_key: {SERVER_NAME: entry}}
    lines: list[str] = []
    if settings.passphrase:
        lines.append(
            f"Warning: your Tallei passphrase is not written to {path.name}; {spec.title} must have "
            "TALLEI_PASSPHRASE in its environment to open the store."
        )
    if dry_run:
        lines.append(json.dumps(snippet, indent=2, ensure_ascii=False))
        lines.append(f"Merge this into {path}, keeping what is already there, then restart {spec.title}.")
        return ConnectResult(client, path, False, None, entry, "\n".join(lines))

    old_bytes, document = _read(path, client, spec, snippet)
    servers = document.setdefault(spec.servers_key, {})
    before = servers.get(SERVER_NAME)
    servers[SERVER_NAME] = _merge(before, entry, spec)
    if old_bytes is not None and servers[SERVER_NAME] == before:
        lines.append(f"{spec.title} is already connected: {path} has the current entry; nothing changed.")
        return ConnectResult(client, path, False, None, servers[SERVER_NAME], "\n".join(lines))

    backup = _write(path, old_bytes, document)
    verb = "Updated" if old_bytes is not None else "Created"
    lines.append(f"{verb} {path} with the {SERVER_NAME!r} entry.")
    if backup is not None:
        lines.append(f"The previous file is saved as {backup}.")
    lines.append(f"Restart {spec.title} to load it.")
    return ConnectResult(client, path, True, backup, servers[SERVER_NAME], "\n".join(lines))


def detected_clients(
    *, home: Path | None = None, platform: str | None = None, environ: Mapping[str, str] | None = None
) -> list[str]:
    """The clients that can launch Tallei and are installed here.

    A client counts when its program is on ``PATH`` or its own folder holds something the client
    wrote: the settings file Tallei writes there (with its backups, and the folders leading to it)
    does not count, so connecting a client never makes it look installed. In :data:`CLIENT_NAMES`
    order; ChatGPT, which has no local settings, is never among them. ``home``, ``platform`` and
    ``environ`` are as for :func:`connect` (a given ``environ`` without ``PATH`` finds no program).
    """
    app_config = _app_config_root(home, platform, environ)
    search = None if environ is None else environ.get("PATH", "")
    home = home or Path.home()
    return [
        name for name in _CLIENTS if _has_program(name, search) or _written_by_client(name, app_config, home)
    ]


#: The program each client puts on ``PATH`` (Claude Desktop puts none there).
_PROGRAMS = {"cursor": "cursor", "vscode": "code", "gemini": "gemini"}


def _has_program(client: str, search: str | None) -> bool:
    program = _PROGRAMS.get(client)
    return program is not None and shutil.which(program, path=search) is not None


def _written_by_client(client: str, app_config: Path, home: Path) -> bool:
    folder = _app_folder(client, app_config, home)
    return folder.is_dir() and _holds_more_than(folder, _config_file(client, app_config, home))


def _holds_more_than(folder: Path, ours: Path) -> bool:
    """Whether ``folder`` holds anything besides ``ours``, its backups and the folders on the way to it."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return False
    for entry in entries:
        if entry.parent == ours.parent and (entry == ours or entry.name.startswith(f"{ours.name}.")):
            continue
        if entry.is_dir() and ours.is_relative_to(entry):
            if _holds_more_than(entry, ours):
                return True
            continue
        return True
    return False


def _app_config_root(home: Path | None, platform: str | None, environ: Mapping[str, str] | None) -> Path:
    """The per-user folder where Electron apps (Claude Desktop, VS Code) keep their settings."""
    if home is None and platform is None and environ is None:
        if sys.platform == "darwin":
            return Path.home() / "Library" / "Application Support"
        # platformdirs asks Windows for the roaming AppData folder and honours XDG_CONFIG_HOME elsewhere,
        # which is where Electron looks too.
        return Path(platformdirs.user_config_dir(roaming=True))
    home = home or Path.home()
    env = environ or {}
    system = platform or sys.platform
    if system == "darwin":
        return home / "Library" / "Application Support"
    if system == "win32":
        appdata = env.get("APPDATA")
        return Path(appdata) if appdata else home / "AppData" / "Roaming"
    xdg = env.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg else home / ".config"


def _app_folder(client: str, app_config: Path, home: Path) -> Path:
    """The folder a client creates once it has run, which holds its settings file."""
    if client == "claude":
        return app_config / "Claude"
    if client == "vscode":
        return app_config / "Code"
    if client == "cursor":
        return home / ".cursor"
    return home / ".gemini"


def _config_file(client: str, app_config: Path, home: Path) -> Path:
    if client == "claude":
        return app_config / "Claude" / "claude_desktop_config.json"
    if client == "vscode":
        # The default profile's user file; named profiles keep their own under User/profiles/.
        return app_config / "Code" / "User" / "mcp.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    return home / ".gemini" / "settings.json"


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
    entry: dict[str, Any] = {"type": "stdio"} if spec.typed else {}
    entry["command"] = command
    entry["args"] = args
    env = _environment(settings)
    if env:
        entry["env"] = env
    return entry


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
    if not spec.typed and merged.get("type", "stdio") != "stdio":
        del merged["type"]
    merged.update({k: v for k, v in fresh.items() if k != "env"})

    old_env = old.get("env")
    env: dict[str, Any] = {}
    fresh_env: dict[str, str] = fresh.get("env", {})
    for key, value in (old_env if isinstance(old_env, dict) else {}).items():
        if key not in _MANAGED_ENV:
            env[key] = value
        elif key in fresh_env:
            env[key] = fresh_env[key]
    for key, value in fresh_env.items():
        env.setdefault(key, value)
    if env:
        merged["env"] = env
    else:
        merged.pop("env", None)
    return merged


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads would keep only the last of two equal keys, and the rewrite would silently drop the other.
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _DuplicateKey(key)
        document[key] = value
    return document


def _has_comments(text: str) -> bool:
    """Whether ``text`` holds ``//`` or ``/*`` outside a string, as JSONC files do."""
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "/" and text[i + 1 : i + 2] in ("/", "*"):
            return True
    return False


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a number"


def _read(
    path: Path, client: str, spec: _Client, snippet: dict[str, Any]
) -> tuple[bytes | None, dict[str, Any]]:
    """The file's exact bytes (``None`` when it does not exist) and its parsed object."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise ClientConfigError(
            f"Cannot read {path}: {exc.strerror or exc}. Check its permissions."
        ) from None
    by_hand = f"fix it, or add the entry by hand (`tallei-desktop connect {client} --print` shows it)"
    try:
        text = raw.decode("utf-8-sig")  # editors on Windows may add a byte-order mark
    except UnicodeDecodeError:
        raise ClientConfigError(f"{path} is not UTF-8 text; {by_hand}.") from None
    if not text.strip():
        return raw, {}
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        if _has_comments(text):
            one_line = json.dumps(snippet, ensure_ascii=False)
            raise ClientConfigError(
                f"{path} contains comments, which this command does not support (rewriting the file would "
                f"drop them); nothing was changed. Paste this into it by hand: {one_line}"
            ) from None
        raise ClientConfigError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); {by_hand}."
        ) from None
    except _DuplicateKey as exc:
        raise ClientConfigError(
            f"{path} has the key {exc.args[0]!r} twice; keep one and run this again."
        ) from None
    if not isinstance(document, dict):
        raise ClientConfigError(
            f"{path} must hold a JSON object ({{...}}) at the top level, not {_kind(document)}; {by_hand}."
        )
    servers = document.get(spec.servers_key, {})
    if not isinstance(servers, dict):
        raise ClientConfigError(
            f'In {path}, "{spec.servers_key}" must be an object of named servers, not {_kind(servers)}; {by_hand}.'
        )
    return raw, document


def _write(path: Path, old_bytes: bytes | None, document: dict[str, Any]) -> Path | None:
    """Replace the file atomically and return the backup of its previous bytes, if there were any."""
    data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    # Write through a symlink (dotfile managers link these files) instead of replacing the link itself.
    target = path.resolve() if path.is_symlink() else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # New files start private: MCP client settings tend to collect API keys in their env blocks.
        mode = stat.S_IMODE(target.stat().st_mode) if old_bytes is not None else 0o600
        backup: Path | None = None

        def unchanged_then_backed_up() -> None:
            nonlocal backup
            if _current_bytes(target) != old_bytes:
                raise ClientConfigError(
                    f"{path} changed while Tallei was updating it; nothing was written. Run again."
                )
            backup = _backup(path, old_bytes, mode) if old_bytes is not None else None

        replace_file(target, data, mode=mode, before_replace=unchanged_then_backed_up)
    except OSError as exc:
        reason = exc.strerror or exc
        raise ClientConfigError(f"Cannot write {path}: {reason}. Check the folder's permissions.") from None
    return backup


def _current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _backup(path: Path, content: bytes, mode: int) -> Path:
    stem = f"{path.name}.bak-{datetime.now():%Y%m%d-%H%M%S}"
    for attempt in range(1, 100):
        candidate = path.with_name(stem if attempt == 1 else f"{stem}-{attempt}")
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
        except FileExistsError:
            continue  # two changes within one second: keep both backups
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.chmod(candidate, mode)  # the umask may have narrowed it; the copy must not be wider either
        return candidate
    raise ClientConfigError(f"Too many backups of {path} this second; wait a moment and run this again.")


def _explain_chatgpt(settings: Settings) -> ConnectResult:
    host = f"[{settings.http_host}]" if ":" in settings.http_host else settings.http_host
    authority = f"{host}:{settings.http_port}"
    url = f"http://{authority}/mcp"
    lines = [
        "ChatGPT cannot launch programs on this computer; it would use Tallei's HTTP endpoint:",
        f"  URL:     {url}",
        "  Header:  Authorization: Bearer <token>   (run `tallei-desktop token` to see the token)",
        "Start the endpoint with `tallei-desktop serve`, or keep the tray app running.",
        "ChatGPT's connectors run on OpenAI's servers, so they cannot reach a loopback address such as "
        f"{settings.http_host} directly: that needs a tunnel you trust, forwarding a public HTTPS address to "
        f"{authority} with the Host header set to {authority} (Tallei refuses other hosts).",
        "ChatGPT's connector settings offer OAuth or no authentication, not a fixed header, so the tunnel "
        "would have to add the Authorization header, and anyone who can reach its address could then read "
        "and change your memories.",
    ]
    entry: dict[str, Any] = {"url": url, "headers": {"Authorization": "Bearer <token>"}}
    return ConnectResult("chatgpt", None, False, None, entry, "\n".join(lines))
