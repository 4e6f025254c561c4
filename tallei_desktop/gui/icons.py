"""The SVG icons in ``resources/``, picked to suit the palette and the app's state."""

from __future__ import annotations

import enum

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPainter, QPalette, QPen, QPixmap

from tallei_desktop.app.paths import resources_dir

__all__ = ["BADGE_COLOUR", "TRAY_SIZES", "TrayState", "app_icon", "badge_rect", "badged", "tray_icon"]


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


#: The sizes panels ask for (16 to 24 on most desktops), drawn at 1x and 2x device pixels.
TRAY_SIZES = (16, 20, 22, 24, 32, 48, 64)
_SCALES = (1.0, 2.0)
BADGE_COLOUR = QColor("#d9480f")
#: Below this many logical pixels across, the badge is a plain dot: a digit would be a smudge.
_DIGIT_FROM = 11


def badge_rect(size: int) -> QRectF:
    """Where the badge sits in an icon ``size`` pixels across: the top right corner, half as wide."""
    d = max(8.0, round(size * 0.5))
    return QRectF(size - d, 0.0, d, d)


def _paint_badge(painter: QPainter, size: int, count: int) -> None:
    rect = badge_rect(size)
    border = max(1.0, size / 16)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QColor("white"), border))
    painter.setBrush(BADGE_COLOUR)
    inner = rect.adjusted(border / 2, border / 2, -border / 2, -border / 2)
    painter.drawEllipse(inner)
    if 0 < count <= 9 and rect.width() >= _DIGIT_FROM:
        font = QFont(painter.font())
        font.setBold(True)
        font.setPixelSize(max(7, round(rect.height() * 0.72)))
        painter.setFont(font)
        painter.setPen(QColor("white"))
        painter.drawText(inner, Qt.AlignmentFlag.AlignCenter, str(count))


def badged(base: QIcon, count: int) -> QIcon:
    """``base`` with a high-contrast dot in a white ring at its top right corner, holding the count
    when a single digit fits, drawn for each tray size at 1x and 2x device pixels."""
    icon = QIcon()
    for size in TRAY_SIZES:
        for scale in _SCALES:
            pixels = round(size * scale)
            pixmap = QPixmap(pixels, pixels)
            pixmap.fill(Qt.GlobalColor.transparent)
            pixmap.setDevicePixelRatio(scale)
            painter = QPainter(pixmap)
            base.paint(painter, 0, 0, size, size)
            _paint_badge(painter, size, count)
            painter.end()
            icon.addPixmap(pixmap)
    return icon


def tray_icon(state: TrayState, *, monochrome: bool = False, count: int = 0) -> QIcon:
    """The tray icon for ``state``: a badge for ``count`` waiting conflicts, or a paused endpoint."""
    if state is TrayState.CONFLICTS:
        return badged(_icon("tray-dark" if _dark_palette() else "tray-light"), count)
    if state is TrayState.PAUSED:
        return _icon("tray-paused")
    if monochrome:
        icon = _icon("tray-mono")
        icon.setIsMask(True)  # the desktop recolours it to match its panel
        return icon
    return _icon("tray-dark" if _dark_palette() else "tray-light")
