"""The SVG icons in ``resources/``, picked to suit the palette and the app's state."""

from __future__ import annotations

import enum

from PySide6.QtGui import QGuiApplication, QIcon, QPalette

from tallei_desktop.app.paths import resources_dir

__all__ = ["TrayState", "app_icon", "tray_icon"]


class TrayState(enum.Enum):
    NORMAL = "normal"
    CONFLICTS = "conflicts"
    PAUSED = "paused"


def _icon(name: str) -> QIcon:
    return QIcon(str(resources_dir() / f"{name}.svg"))


def _dark_palette() -> bool:
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return False
    window = app.palette().color(QPalette.ColorRole.Window)
    return window.lightness() < 128


def app_icon() -> QIcon:
    return _icon("tallei")


def tray_icon(state: TrayState, *, monochrome: bool = False) -> QIcon:
    """The tray icon for ``state``: a badge for waiting conflicts or a paused endpoint."""
    if state is TrayState.CONFLICTS:
        return _icon("tray-conflicts")
    if state is TrayState.PAUSED:
        return _icon("tray-paused")
    if monochrome:
        icon = _icon("tray-mono")
        icon.setIsMask(True)  # the desktop recolours it to match its panel
        return icon
    return _icon("tray-dark" if _dark_palette() else "tray-light")
