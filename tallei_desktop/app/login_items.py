"""Starting the tray app when the person logs in, the way each desktop expects it.

- Linux and the BSDs: an XDG autostart entry, ``~/.config/autostart/tallei-desktop.desktop``.
- macOS: a LaunchAgent, ``~/Library/LaunchAgents/app.tallei.desktop.plist``.
- Windows: the value ``Tallei`` under ``HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run``.

:func:`apply_start_at_login` writes or removes the one for this system, and is what the
``start_at_login`` setting calls. Each piece also takes its folder (or registry key) as an argument,
so every system's files can be written and checked anywhere. The pieces raise :class:`OSError` (a
read-only home, a locked registry), which :func:`apply_start_at_login` turns into a
:class:`KnownError` naming the place; nothing is half written, because files are replaced whole.
"""

from __future__ import annotations

import plistlib
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from tallei_desktop.app.paths import windowed_executable
from tallei_desktop.core import KnownError, replace_file

__all__ = [
    "AGENT_LABEL",
    "AUTOSTART_NAME",
    "RUN_KEY",
    "RUN_VALUE",
    "RunKey",
    "apply_start_at_login",
    "autostart_entry",
    "desktop_exec",
    "launch_agent_plist",
    "login_command",
    "remove_autostart",
    "remove_launch_agent",
    "remove_run_value",
    "run_value",
    "set_run_value",
    "write_autostart",
    "write_launch_agent",
]

AUTOSTART_NAME = "tallei-desktop.desktop"
AGENT_LABEL = "app.tallei.desktop"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "Tallei"


class RunKey(Protocol):
    """The per-user Windows ``Run`` key: named string values, each a command line run at login."""

    def get(self, name: str) -> str | None: ...

    def set(self, name: str, value: str) -> None: ...

    def delete(self, name: str) -> bool:
        """Remove ``name``; False when it was not there."""
        ...


def login_command() -> list[str]:
    """The command line that starts this installation's tray app.

    A bundle starts its windowed executable; a Python installation runs ``python -m tallei_desktop
    gui`` with the interpreter it runs on now (absolute, so it works from any folder).
    """
    windowed = windowed_executable()
    if windowed is not None:
        return [str(windowed)]
    return [str(Path(sys.executable).absolute()), "-m", "tallei_desktop", "gui"]


# -- Linux: XDG autostart ----------------------------------------------------------------------------

_EXEC_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def desktop_exec(command: Sequence[str]) -> str:
    """``command`` as the value of a desktop entry's ``Exec`` key.

    Arguments with reserved characters are double-quoted with ``"``, `````, ``$`` and ``\\``
    escaped, and then the value is escaped once more as a desktop-entry string (``\\`` doubled) and
    ``%`` doubled, as the Desktop Entry Specification asks.
    """
    words = []
    for arg in command:
        if arg and not (set(arg) & _EXEC_RESERVED):
            words.append(arg)
            continue
        inner = "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg)
        words.append(f'"{inner}"')
    return " ".join(words).replace("\\", "\\\\").replace("%", "%%")


def autostart_entry(command: Sequence[str]) -> str:
    """The text of the XDG autostart entry that runs ``command`` at login."""
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=Tallei\n"
        "Comment=One private memory for every AI assistant you use\n"
        f"Exec={desktop_exec(command)}\n"
        "Icon=tallei-desktop\n"
        "Terminal=false\n"
        "Categories=Utility;\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def write_autostart(folder: Path, command: Sequence[str]) -> Path:
    """Write the autostart entry into ``folder`` (normally ``~/.config/autostart``); return its path."""
    path = folder / AUTOSTART_NAME
    _replace(path, autostart_entry(command).encode("utf-8"))
    return path


def remove_autostart(folder: Path) -> bool:
    """Remove the autostart entry from ``folder``; False when there was none."""
    return _remove(folder / AUTOSTART_NAME)


# -- macOS: LaunchAgent -------------------------------------------------------------------------------


def launch_agent_plist(command: Sequence[str]) -> bytes:
    """The LaunchAgent property list that runs ``command`` once at login (and never restarts it)."""
    agent = {
        "Label": AGENT_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "KeepAlive": False,
        "ProcessType": "Interactive",
    }
    return plistlib.dumps(agent, fmt=plistlib.FMT_XML, sort_keys=True)


def write_launch_agent(folder: Path, command: Sequence[str]) -> Path:
    """Write the LaunchAgent into ``folder`` (normally ``~/Library/LaunchAgents``); return its path."""
    path = folder / f"{AGENT_LABEL}.plist"
    _replace(path, launch_agent_plist(command))
    return path


def remove_launch_agent(folder: Path) -> bool:
    """Remove the LaunchAgent from ``folder``; False when there was none."""
    return _remove(folder / f"{AGENT_LABEL}.plist")


# -- Windows: HKCU\...\Run ----------------------------------------------------------------------------


def run_value(command: Sequence[str]) -> str:
    """``command`` as one Windows command line (quoted the way the C runtime splits it)."""
    return subprocess.list2cmdline(list(command))


def set_run_value(key: RunKey, command: Sequence[str]) -> str:
    """Register ``command`` to run at login; return the value written."""
    value = run_value(command)
    key.set(RUN_VALUE, value)
    return value


def remove_run_value(key: RunKey) -> bool:
    """Stop running at login; False when it was not registered."""
    return key.delete(RUN_VALUE)


class _WindowsRunKey:
    """The real ``HKCU\\...\\Run`` key, through ``winreg`` (imported only on Windows)."""

    def get(self, name: str) -> str | None:
        if sys.platform != "win32":
            raise OSError("the Windows registry exists only on Windows")
        import winreg

        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            try:
                value, _kind = winreg.QueryValueEx(key, name)
            except FileNotFoundError:
                return None
        return str(value)

    def set(self, name: str, value: str) -> None:
        if sys.platform != "win32":
            raise OSError("the Windows registry exists only on Windows")
        import winreg

        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            winreg.SetValueEx(key, name, 0, winreg.REG_SZ, value)

    def delete(self, name: str) -> bool:
        if sys.platform != "win32":
            raise OSError("the Windows registry exists only on Windows")
        import winreg

        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
            try:
                winreg.DeleteValue(key, name)
            except FileNotFoundError:
                return False
        return True


# -- this system ----------------------------------------------------------------------------------------


def apply_start_at_login(
    enabled: bool,
    *,
    command: Sequence[str] | None = None,
    platform: str | None = None,
    home: Path | None = None,
    config_home: Path | None = None,
    run_key: RunKey | None = None,
) -> str:
    """Make the tray app start at login (``enabled``) or not, and say in a sentence what changed.

    ``command`` defaults to :func:`login_command`; ``platform`` to ``sys.platform``; ``home`` to the
    person's home folder (for the LaunchAgent); ``config_home`` to the XDG config folder (for the
    autostart entry); ``run_key`` to the real registry key on Windows. Raises :class:`KnownError`
    when the entry cannot be written or removed, and then changes nothing.
    """
    system = platform or sys.platform
    cmd = list(command) if command is not None else login_command()
    try:
        return _apply(enabled, cmd, system, home, config_home, run_key)
    except OSError as exc:
        where = (
            f"the registry ({RUN_KEY})"
            if system.startswith("win")
            else ("~/Library/LaunchAgents" if system == "darwin" else "the autostart folder")
        )
        raise KnownError(
            f"Cannot change whether Tallei starts at login in {where}: {exc.strerror or exc}. "
            "Check that it can be written, then try again."
        ) from None


def _apply(
    enabled: bool,
    cmd: list[str],
    system: str,
    home: Path | None,
    config_home: Path | None,
    run_key: RunKey | None,
) -> str:
    if system.startswith("win"):
        key = run_key or _WindowsRunKey()
        if enabled:
            return f"Tallei will start at login (registry value {RUN_VALUE} = {set_run_value(key, cmd)})."
        removed = remove_run_value(key)
        return "Tallei will no longer start at login." if removed else "Tallei was not set to start at login."
    if system == "darwin":
        folder = (home or Path.home()) / "Library" / "LaunchAgents"
        if enabled:
            return f"Tallei will start at login ({write_launch_agent(folder, cmd)})."
        removed = remove_launch_agent(folder)
        return "Tallei will no longer start at login." if removed else "Tallei was not set to start at login."
    folder = (config_home or _xdg_config_home()) / "autostart"
    if enabled:
        return f"Tallei will start at login ({write_autostart(folder, cmd)})."
    removed = remove_autostart(folder)
    return "Tallei will no longer start at login." if removed else "Tallei was not set to start at login."


def _xdg_config_home() -> Path:
    import platformdirs

    # Without an app name this is the XDG base folder itself ($XDG_CONFIG_HOME or ~/.config).
    return Path(platformdirs.user_config_dir())


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole (readable by the session that starts it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, data, mode=0o644)


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
