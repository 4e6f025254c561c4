"""Render the app icon into a hicolor icon theme: the SVG as scalable, and PNGs at 48, 128 and 256.

    python packaging/render_icons.py OUTPUT_FOLDER   # writes OUTPUT_FOLDER/hicolor/…/tallei-desktop.*

Runs offscreen (no display needed). Part of `make package`; not imported by the program.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

SIZES = (48, 128, 256)
NAME = "tallei-desktop"
SOURCE = Path(__file__).resolve().parent.parent / "resources" / "tallei.svg"


def render(output: Path) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"{SOURCE} is not an SVG Qt can render")
    written: list[Path] = []
    scalable = output / "hicolor" / "scalable" / "apps" / f"{NAME}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCE, scalable)
    written.append(scalable)
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        path = output / "hicolor" / f"{size}x{size}" / "apps" / f"{NAME}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(path), "PNG"):
            raise SystemExit(f"Could not write {path}")
        written.append(path)
    del app
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    for path in render(Path(sys.argv[1])):
        print(path)
