"""The desktop program: the only package that imports Qt. Start it with :func:`run_gui`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tallei_desktop.config import Settings

__all__ = ["run_gui"]


def run_gui(settings: Settings) -> int:
    """Run the tray app (imports Qt only when called)."""
    from tallei_desktop.gui.app import run_gui as run

    return run(settings)
