"""Starting Tallei at login: an XDG autostart entry on Linux and the BSDs.

Other systems are not handled yet; :func:`supported` says so, and the settings page tells the person.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from PySide6.QtCore import QStandardPaths

from tallei_desktop.core import StoreUnavailable
from tallei_desktop.gui.icons import resources_dir

__all__ = ["ENTRY_NAME", "apply", "autostart_dir", "supported"]

ENTRY_NAME = "tallei-desktop.desktop"


def supported(platform: str | None = None) -> bool:
    return not (platform or sys.platform).startswith(("win", "darwin"))


def autostart_dir() -> Path:
    """``$XDG_CONFIG_HOME/autostart`` (Qt reads the variable)."""
    config = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation)
    return Path(config) / "autostart"


def _entry() -> str:
    command = shlex.join([sys.executable, "-m", "tallei_desktop", "gui"])
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=Tallei\n"
        "Comment=Your memory, shared by every AI assistant you use\n"
        f"Exec={command}\n"
        f"Icon={resources_dir() / 'tallei.svg'}\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def apply(enabled: bool, folder: Path | None = None) -> Path | None:
    """Add (or remove) the autostart entry; returns its path when one is in place.

    Raises :class:`StoreUnavailable` when the folder cannot be written.
    """
    if not supported():
        return None
    target = (folder or autostart_dir()) / ENTRY_NAME
    try:
        if enabled:
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_suffix(".tmp")
            temporary.write_text(_entry(), encoding="utf-8")
            temporary.replace(target)
            return target
        target.unlink(missing_ok=True)
    except OSError as exc:
        raise StoreUnavailable(
            f"Cannot change the login items in {target.parent}: {exc.strerror or exc}."
        ) from None
    return None
