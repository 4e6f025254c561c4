"""Registering the native host with web browsers, so Tallei's extension can reach the store.

A browser starts a native-messaging host it finds through a small JSON manifest named after the
host (``app.tallei.desktop.json``): its ``path`` is the program to start and ``allowed_origins``
(Firefox: ``allowed_extensions``) the only extensions that may start it. On Linux and macOS the
manifest goes in a folder of the browser's own; on Windows it may live anywhere and a registry key
under ``HKCU\\Software\\<vendor>\\NativeMessagingHosts\\app.tallei.desktop`` holds its path.

The manifest's ``path`` cannot carry arguments or environment variables, so a launcher script is
written beside the manifest (``tallei-native-host``, on Windows ``tallei-native-host.bat``) that
starts ``native-host`` with the absolute program (the bundle's console executable, or this Python
with ``-m tallei_desktop``) and the data and model folders this installation uses. ``path`` is
that script's absolute path.

Connecting twice changes nothing; a different manifest already there is backed up first;
disconnecting removes only a manifest whose ``path`` is our launcher. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Protocol

import platformdirs

from tallei_desktop.app.paths import console_executable
from tallei_desktop.config import APP_NAME, Settings
from tallei_desktop.core import InvalidInput, KnownError, replace_file

__all__ = [
    "BROWSER_NAMES",
    "CHROMIUM_EXTENSION_ID",
    "CHROMIUM_ORIGIN",
    "FIREFOX_EXTENSION_ID",
    "HOST_NAME",
    "BrowserConfigError",
    "BrowserResult",
    "BrowserState",
    "Registry",
    "browser_states",
    "connect_browser",
    "disconnect_browser",
    "host_manifest",
    "write_host_manifest",
]

HOST_NAME: Final = "app.tallei.desktop"
CHROMIUM_EXTENSION_ID: Final = "blbpjdkgbfodmafkifaaoojhbdmeipjp"
CHROMIUM_ORIGIN: Final = f"chrome-extension://{CHROMIUM_EXTENSION_ID}/"
FIREFOX_EXTENSION_ID: Final = "tallei@tallei.app"
MANIFEST_FILE: Final = f"{HOST_NAME}.json"
LAUNCHER_STEM: Final = "tallei-native-host"


class BrowserConfigError(KnownError):
    """A browser's host manifest (or its registry key) cannot be read or written; it was left as it was."""


@dataclass(frozen=True, slots=True)
class _Browser:
    title: str
    firefox: bool
    #: The folder under the per-user config folder (Linux) or Application Support (macOS).
    linux: tuple[str, ...]
    mac: tuple[str, ...]
    #: The registry path under HKCU\Software (Windows).
    registry: str
    #: Programs on PATH (Linux), app bundles (macOS).
    programs: tuple[str, ...]
    mac_app: str
    #: The browser's own profile folder, relative to the per-OS root, and a file it always writes there.
    windows_profile: tuple[str, ...]


_BROWSERS: dict[str, _Browser] = {
    "chrome": _Browser(
        "Google Chrome",
        False,
        ("google-chrome",),
        ("Google", "Chrome"),
        r"Software\Google\Chrome",
        ("google-chrome", "google-chrome-stable"),
        "Google Chrome.app",
        ("Google", "Chrome", "User Data"),
    ),
    "chromium": _Browser(
        "Chromium",
        False,
        ("chromium",),
        ("Chromium",),
        r"Software\Chromium",
        ("chromium", "chromium-browser"),
        "Chromium.app",
        ("Chromium", "User Data"),
    ),
    "edge": _Browser(
        "Microsoft Edge",
        False,
        ("microsoft-edge",),
        ("Microsoft Edge",),
        r"Software\Microsoft\Edge",
        ("microsoft-edge", "microsoft-edge-stable"),
        "Microsoft Edge.app",
        ("Microsoft", "Edge", "User Data"),
    ),
    "brave": _Browser(
        "Brave",
        False,
        ("BraveSoftware", "Brave-Browser"),
        ("BraveSoftware", "Brave-Browser"),
        r"Software\BraveSoftware\Brave-Browser",
        ("brave-browser", "brave"),
        "Brave Browser.app",
        ("BraveSoftware", "Brave-Browser", "User Data"),
    ),
    "firefox": _Browser(
        "Firefox",
        True,
        (),
        ("Mozilla",),
        r"Software\Mozilla",
        ("firefox",),
        "Firefox.app",
        ("Mozilla", "Firefox"),
    ),
}

#: Every name ``connect`` and ``disconnect`` accept for a browser.
BROWSER_NAMES: Final = tuple(_BROWSERS)


class Registry(Protocol):
    """The per-user Windows registry, as much of it as registering a host needs (a port: tests fake it)."""

    def get_default(self, key: str) -> str | None:
        """The default value of ``HKCU\\<key>``, or None when the key does not exist."""

    def set_default(self, key: str, value: str) -> None:
        """Create ``HKCU\\<key>`` if needed and set its default value."""

    def delete(self, key: str) -> None:
        """Delete ``HKCU\\<key>`` (a key without subkeys); nothing when it does not exist."""


class _WinRegistry:
    def __init__(self) -> None:
        # Imported by name: the module exists only on Windows, and its stubs say so.
        self._winreg: Any = importlib.import_module("winreg")

    def get_default(self, key: str) -> str | None:
        w = self._winreg
        try:
            with w.OpenKey(w.HKEY_CURRENT_USER, key) as handle:
                value, _kind = w.QueryValueEx(handle, "")
        except FileNotFoundError:
            return None
        return str(value)

    def set_default(self, key: str, value: str) -> None:
        w = self._winreg
        with w.CreateKey(w.HKEY_CURRENT_USER, key) as handle:
            w.SetValueEx(handle, "", 0, w.REG_SZ, value)

    def delete(self, key: str) -> None:
        w = self._winreg
        with contextlib.suppress(FileNotFoundError):
            w.DeleteKey(w.HKEY_CURRENT_USER, key)


@dataclass(frozen=True, slots=True)
class BrowserResult:
    """What :func:`connect_browser` or :func:`disconnect_browser` did (or with ``dry_run`` would do)."""

    browser: str
    path: Path
    changed: bool
    backup: Path | None
    manifest: dict[str, Any]
    message: str


@dataclass(frozen=True, slots=True)
class BrowserState:
    """Whether a browser is installed on this computer and whether our host is registered with it."""

    browser: str
    title: str
    installed: bool
    connected: bool


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where things are on one machine: ``home``, ``system`` (a ``sys.platform`` value), ``environ``."""

    home: Path
    system: str
    #: None: this machine's own folders (platformdirs) and PATH.
    environ: Mapping[str, str] | None

    @property
    def windows(self) -> bool:
        return self.system == "win32"

    def config_root(self) -> Path:
        if self.system == "darwin":
            return self.home / "Library" / "Application Support"
        if self.environ is None:
            # Roaming AppData on Windows, XDG_CONFIG_HOME or ~/.config elsewhere.
            return Path(platformdirs.user_config_dir(roaming=True))
        if self.windows:
            appdata = self.environ.get("APPDATA")
            return Path(appdata) if appdata else self.home / "AppData" / "Roaming"
        xdg = self.environ.get("XDG_CONFIG_HOME")
        return Path(xdg) if xdg else self.home / ".config"

    def local_root(self) -> Path:
        if self.environ is None:
            return Path(platformdirs.user_data_dir(roaming=False))
        local = self.environ.get("LOCALAPPDATA")
        return Path(local) if local else self.home / "AppData" / "Local"

    def search_path(self) -> str | None:
        return None if self.environ is None else self.environ.get("PATH", "")


def _layout(home: Path | None, platform: str | None, environ: Mapping[str, str] | None) -> _Layout:
    if home is None and platform is None and environ is None:
        return _Layout(Path.home(), sys.platform, None)
    return _Layout(home or Path.home(), platform or sys.platform, environ or {})


def _spec(browser: str) -> _Browser:
    spec = _BROWSERS.get(browser)
    if spec is None:
        raise InvalidInput(f"Unknown browser {browser!r}: choose one of {', '.join(BROWSER_NAMES)}.")
    return spec


def manifest_folder(browser: str, layout: _Layout) -> Path:
    """The folder where ``browser`` looks for host manifests (on Windows, Tallei's own folder for it)."""
    spec = _spec(browser)
    if layout.windows:
        return layout.local_root() / APP_NAME / "NativeMessagingHosts" / browser
    if layout.system == "darwin":
        return layout.config_root().joinpath(*spec.mac, "NativeMessagingHosts")
    if spec.firefox:
        return layout.home / ".mozilla" / "native-messaging-hosts"
    return layout.config_root().joinpath(*spec.linux, "NativeMessagingHosts")


def _registry_key(browser: str) -> str:
    return rf"{_spec(browser).registry}\NativeMessagingHosts\{HOST_NAME}"


def _launcher_name(windows: bool) -> str:
    return f"{LAUNCHER_STEM}.bat" if windows else LAUNCHER_STEM


def host_manifest(browser: str, launcher: Path) -> dict[str, Any]:
    """The host manifest for ``browser`` whose program is ``launcher`` (an absolute path)."""
    spec = _spec(browser)
    manifest: dict[str, Any] = {
        "name": HOST_NAME,
        "description": "Tallei: your private memory, shared with the assistants in your browser",
        "path": str(launcher),
        "type": "stdio",
    }
    if spec.firefox:
        manifest["allowed_extensions"] = [FIREFOX_EXTENSION_ID]
    else:
        manifest["allowed_origins"] = [CHROMIUM_ORIGIN]
    return manifest


def _host_command() -> list[str]:
    console = console_executable()
    if console is not None:
        return [str(console), "native-host"]
    # Not resolved: a virtualenv's python is a symlink, and resolving it would leave the venv.
    return [str(Path(sys.executable).absolute()), "-m", "tallei_desktop", "native-host"]


def _environment(settings: Settings | None) -> dict[str, str]:
    """What the host needs in its environment to open the same store as ``settings`` does."""
    if settings is None:
        return {}
    env: dict[str, str] = {}
    data_dir = settings.data_dir.expanduser().absolute()
    if data_dir != Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)).absolute():
        env["TALLEI_DATA_DIR"] = str(data_dir)
    if settings.model_dir is not None:
        env["TALLEI_MODEL_DIR"] = str(settings.model_dir.expanduser().absolute())
    return env


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def launcher_script(settings: Settings | None, *, windows: bool) -> str:
    """The launcher's text: it starts the host with the browser's arguments passed on."""
    command = _host_command()
    env = _environment(settings)
    if windows:
        lines = ["@echo off"]
        lines += [f'set "{k}={v}"' for k, v in env.items()]
        lines.append(" ".join(f'"{part}"' for part in command) + " %*")
        return "\r\n".join(lines) + "\r\n"
    lines = ["#!/bin/sh", "# Started by the browser for Tallei's extension (native messaging)."]
    lines += [f"export {k}={_sh_quote(v)}" for k, v in env.items()]
    lines.append("exec " + " ".join(_sh_quote(part) for part in command) + ' "$@"')
    return "\n".join(lines) + "\n"


def write_host_manifest(folder: Path, browser: str, *, settings: Settings | None = None) -> Path:
    """Write ``browser``'s host manifest and its launcher into ``folder``; return the manifest's path.

    ``folder`` is where the browser looks, e.g. ``<profile_dir>/NativeMessagingHosts`` for a
    Chromium started with a profile folder of its own. The launcher starts this installation's
    host; with ``settings``, on the data and model folders they name (without, the host reads
    its settings from the environment the browser passes on). Files already right are not
    rewritten; a different manifest is backed up beside it first.
    """
    return _write_pair(Path(folder), browser, settings, windows=os.name == "nt")[0]


def _write_pair(
    folder: Path, browser: str, settings: Settings | None, *, windows: bool
) -> tuple[Path, bool, Path | None]:
    """Write the launcher and manifest; return the manifest path, whether anything changed, the backup."""
    launcher = folder / _launcher_name(windows)
    manifest = host_manifest(browser, launcher.absolute())
    data = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    script = launcher_script(settings, windows=windows).encode("utf-8")
    path = folder / MANIFEST_FILE
    changed = False
    backup: Path | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if _current_bytes(launcher) != script:
            replace_file(launcher, script, mode=0o755)
            changed = True
        old = _current_bytes(path)
        if old != data:
            if old is not None and not _is_ours(old, launcher):
                backup = _backup(path, old)
            replace_file(path, data, mode=0o644)
            changed = True
    except OSError as exc:
        raise BrowserConfigError(
            f"Cannot write {path}: {exc.strerror or exc}. Check the folder's permissions."
        ) from None
    return path, changed, backup


def _is_ours(raw: bytes, launcher: Path) -> bool:
    try:
        document = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return (
        isinstance(document, dict)
        and document.get("name") == HOST_NAME
        and document.get("path") == str(launcher.absolute())
    )


def _current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _backup(path: Path, content: bytes) -> Path:
    stem = f"{path.name}.bak-{datetime.now():%Y%m%d-%H%M%S}"
    for attempt in range(1, 100):
        candidate = path.with_name(stem if attempt == 1 else f"{stem}-{attempt}")
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        return candidate
    raise BrowserConfigError(f"Too many backups of {path} this second; wait a moment and run this again.")


def connect_browser(
    settings: Settings | None,
    browser: str,
    *,
    dry_run: bool = False,
    home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    registry: Registry | None = None,
) -> BrowserResult:
    """Register the host with ``browser`` where it looks on this computer (or the one described).

    ``home``, ``platform`` (a ``sys.platform`` value) and ``environ`` (``XDG_CONFIG_HOME``,
    ``APPDATA``, ``LOCALAPPDATA``) describe a machine's layout; ``registry`` stands in for the
    Windows registry. With ``dry_run`` nothing is written and the message holds the manifest.
    """
    spec = _spec(browser)
    layout = _layout(home, platform, environ)
    folder = manifest_folder(browser, layout)
    path = folder / MANIFEST_FILE
    manifest = host_manifest(browser, (folder / _launcher_name(layout.windows)).absolute())
    key = _registry_key(browser)
    if dry_run:
        lines = [json.dumps(manifest, indent=2, ensure_ascii=False), f"This goes in {path}"]
        if layout.windows:
            lines[-1] += rf", and the registry key HKCU\{key} gets that path as its default value"
        lines[-1] += "."
        return BrowserResult(browser, path, False, None, manifest, "\n".join(lines))

    path, changed, backup = _write_pair(folder, browser, settings, windows=layout.windows)
    if layout.windows:
        reg = registry if registry is not None else _WinRegistry()
        try:
            if reg.get_default(key) != str(path):
                reg.set_default(key, str(path))
                changed = True
        except OSError as exc:
            raise BrowserConfigError(
                rf"Cannot write the registry key HKCU\{key}: {exc.strerror or exc}."
            ) from None
    if not changed:
        message = f"{spec.title} is already connected: {path} is current; nothing changed."
    else:
        message = f"Connected {spec.title}: wrote {path}."
        if backup is not None:
            message += f" The previous manifest is saved as {backup}."
        message += f" Install Tallei's extension in {spec.title} (or reload it) to use your memories there."
    return BrowserResult(browser, path, changed, backup, manifest, message)


def disconnect_browser(
    browser: str,
    *,
    home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    registry: Registry | None = None,
) -> BrowserResult:
    """Remove our host manifest and launcher from ``browser``'s folder (and the registry key on Windows).

    A manifest under our host's name that another program wrote (its ``path`` is not our launcher)
    is left alone, and the message says so.
    """
    spec = _spec(browser)
    layout = _layout(home, platform, environ)
    folder = manifest_folder(browser, layout)
    path = folder / MANIFEST_FILE
    launcher = folder / _launcher_name(layout.windows)
    manifest = host_manifest(browser, launcher.absolute())
    try:
        old = _current_bytes(path)
        if old is not None and not _is_ours(old, launcher):
            return BrowserResult(
                browser,
                path,
                False,
                None,
                manifest,
                f"{path} was not written by Tallei (it starts another program); it was left as it was.",
            )
        changed = old is not None
        path.unlink(missing_ok=True)
        if launcher.exists():
            launcher.unlink()
            changed = True
    except OSError as exc:
        raise BrowserConfigError(f"Cannot remove {path}: {exc.strerror or exc}.") from None
    if layout.windows:
        reg = registry if registry is not None else _WinRegistry()
        key = _registry_key(browser)
        try:
            if reg.get_default(key) == str(path):
                reg.delete(key)
                changed = True
        except OSError as exc:
            raise BrowserConfigError(
                rf"Cannot remove the registry key HKCU\{key}: {exc.strerror or exc}."
            ) from None
    message = (
        f"Disconnected {spec.title}: removed {path}."
        if changed
        else f"{spec.title} was not connected; nothing changed."
    )
    return BrowserResult(browser, path, changed, None, manifest, message)


def _installed(browser: str, layout: _Layout) -> bool:
    """By the browser's own program or its own profile folder, never by a file Tallei wrote."""
    spec = _spec(browser)
    search = layout.search_path()
    if layout.windows:
        if spec.firefox:
            return (layout.config_root() / "Mozilla" / "Firefox" / "profiles.ini").is_file()
        return (layout.local_root().joinpath(*spec.windows_profile) / "Local State").is_file()
    if layout.system == "darwin":
        for apps in (Path("/Applications"), layout.home / "Applications"):
            if (apps / spec.mac_app).is_dir():
                return True
        if spec.firefox:
            return (layout.config_root() / "Firefox" / "profiles.ini").is_file()
        return (layout.config_root().joinpath(*spec.mac) / "Local State").is_file()
    if any(shutil.which(program, path=search) is not None for program in spec.programs):
        return True
    if spec.firefox:
        return (layout.home / ".mozilla" / "firefox" / "profiles.ini").is_file()
    return (layout.config_root().joinpath(*spec.linux) / "Local State").is_file()


def _connected(browser: str, layout: _Layout, registry: Registry | None) -> bool:
    folder = manifest_folder(browser, layout)
    path = folder / MANIFEST_FILE
    launcher = folder / _launcher_name(layout.windows)
    try:
        raw = _current_bytes(path)
    except OSError:
        return False
    if raw is None or not _is_ours(raw, launcher) or not launcher.is_file():
        return False
    if not layout.windows:
        return bool(stat.S_IMODE(launcher.stat().st_mode) & stat.S_IXUSR)
    reg = registry if registry is not None else _WinRegistry()
    try:
        return reg.get_default(_registry_key(browser)) == str(path)
    except OSError:
        return False


def browser_states(
    *,
    home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    registry: Registry | None = None,
) -> list[BrowserState]:
    """Each browser Tallei can register with: installed here, and whether our host is registered."""
    layout = _layout(home, platform, environ)
    return [
        BrowserState(name, spec.title, _installed(name, layout), _connected(name, layout, registry))
        for name, spec in _BROWSERS.items()
    ]
