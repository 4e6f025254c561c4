"""Whether Qt's X11 platform plugin can start here, asked before the application object exists.

Qt aborts the whole process (SIGABRT, exit 134) when its ``xcb`` plugin cannot load one of the
X11 libraries it is linked against, and its message names only one of them. :func:`x11_problem`
first tries to load each of those libraries; only when one is missing does it start Qt once in a
small subprocess, which shows whether Qt would use X11 at all (it may be told to use Wayland or
run offscreen). When that subprocess fails too, the answer is one line naming what to install.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from collections.abc import Callable, Sequence

__all__ = ["PROBE", "X11_LIBRARIES", "loadable", "missing_libraries", "x11_problem"]

#: The shared libraries Qt 6's xcb plugin needs beyond libX11, with the Debian/Ubuntu package of each.
X11_LIBRARIES: tuple[tuple[str, str], ...] = (
    ("libxcb-cursor.so.0", "libxcb-cursor0"),
    ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-image.so.0", "libxcb-image0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libxcb-randr.so.0", "libxcb-randr0"),
    ("libxcb-shape.so.0", "libxcb-shape0"),
    ("libxcb-xkb.so.1", "libxcb-xkb1"),
    ("libxcb-xfixes.so.0", "libxcb-xfixes0"),
    ("libX11-xcb.so.1", "libx11-xcb1"),
)

#: Starts Qt's GUI application object and nothing else: what the tray app does first.
PROBE = "import sys\nfrom PySide6.QtGui import QGuiApplication\nQGuiApplication(sys.argv[:1])\n"
_PROBE_TIMEOUT_S = 30.0


def loadable(name: str) -> bool:
    """Whether the dynamic loader can load the shared library ``name``."""
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def missing_libraries(
    libraries: Sequence[tuple[str, str]] = X11_LIBRARIES, *, load: Callable[[str], bool] = loadable
) -> list[str]:
    """The packages of ``libraries`` whose library cannot be loaded, in order."""
    return [package for name, package in libraries if not load(name)]


def _qt_starts(command: Sequence[str]) -> bool:
    try:
        done = subprocess.run(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def x11_problem(
    *,
    platform: str | None = None,
    libraries: Sequence[tuple[str, str]] = X11_LIBRARIES,
    load: Callable[[str], bool] = loadable,
    probe: Sequence[str] | None = None,
) -> str | None:
    """One line saying which X11 libraries to install when Qt cannot start without them, else None.

    Only Linux and the BSDs are checked. ``libraries`` and ``load`` say what to look for and how;
    ``probe`` is the command that starts Qt once (by default this interpreter running :data:`PROBE`),
    run only when a library is missing.
    """
    system = platform or sys.platform
    if system.startswith(("win", "darwin")):
        return None
    missing = missing_libraries(libraries, load=load)
    if not missing:
        return None
    if _qt_starts(probe if probe is not None else [sys.executable, "-c", PROBE]):
        return None  # Qt uses another platform here (Wayland, offscreen) and needs none of them
    names = " ".join(missing)
    return (
        f"Tallei's window needs X11 libraries that are missing: {', '.join(missing)}. "
        f"On Debian or Ubuntu: sudo apt-get install {names}; "
        "or run `tallei-desktop serve` for the assistants without the window."
    )
