"""Where the program's own files are, in a source checkout and in a built (PyInstaller) bundle.

A bundle sets ``sys.frozen`` and unpacks its data under ``sys._MEIPASS`` (the ``_internal`` folder
beside the executables). Its two executables sit side by side: ``tallei-desktop`` for the command
line and MCP over stdio, and the windowed ``Tallei`` for the tray app, which on Windows has no
stdio at all. Nothing here imports Qt, so the command line and the packaging scripts can use it.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = [
    "BUNDLED_MODEL_FOLDER",
    "CONSOLE_NAME",
    "WINDOWED_NAME",
    "bundle_dir",
    "bundled_model_dir",
    "console_executable",
    "executable_name",
    "is_frozen",
    "resources_dir",
    "windowed_executable",
]

#: The two executables of a bundle, without the ``.exe`` Windows adds.
CONSOLE_NAME = "tallei-desktop"
WINDOWED_NAME = "Tallei"

#: The folder inside the bundle where ``make package MODEL_DIR=…`` puts the embedding model.
BUNDLED_MODEL_FOLDER = "model"


def is_frozen() -> bool:
    """True when running from a built bundle rather than from Python and a source tree."""
    return bool(getattr(sys, "frozen", False))


def bundle_dir() -> Path | None:
    """The bundle's data folder (``sys._MEIPASS``), or None when not frozen."""
    if not is_frozen():
        return None
    meipass = getattr(sys, "_MEIPASS", None)
    return Path(meipass) if meipass else Path(sys.executable).resolve().parent


def resources_dir() -> Path:
    """The folder holding the icons: ``resources/`` in the bundle or at the top of the source tree."""
    bundle = bundle_dir()
    if bundle is not None:
        return bundle / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def bundled_model_dir() -> Path | None:
    """The embedding model built into the bundle, or None (not frozen, or built without one)."""
    bundle = bundle_dir()
    if bundle is None:
        return None
    folder = bundle / BUNDLED_MODEL_FOLDER
    return folder if (folder / "model.onnx").is_file() else None


def executable_name(stem: str, *, platform: str | None = None) -> str:
    return f"{stem}.exe" if (platform or sys.platform).startswith("win") else stem


def console_executable() -> Path | None:
    """The bundle's console executable (what an MCP client must launch), or None when not frozen.

    Found beside ``sys.executable`` so it is right whichever of the two executables is running:
    a client configured from the tray app must still get the console one.
    """
    if not is_frozen():
        return None
    return Path(sys.executable).absolute().parent / executable_name(CONSOLE_NAME)


def windowed_executable() -> Path | None:
    """The bundle's tray-app executable (what starts at login), or None when not frozen."""
    if not is_frozen():
        return None
    return Path(sys.executable).absolute().parent / executable_name(WINDOWED_NAME)
