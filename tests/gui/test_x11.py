"""Qt's X11 plugin without its libraries: one line saying what to install and exit 1, not an abort."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tallei_desktop.gui.x11 import X11_LIBRARIES, loadable, missing_libraries, x11_problem

ABSENT = ("libtallei-absent.so.0", "libtallei-absent0")
QT_FAILS = [sys.executable, "-c", "raise SystemExit(134)"]
QT_STARTS = [sys.executable, "-c", "pass"]


def test_a_missing_library_that_stops_qt_is_named_with_its_package() -> None:
    line = x11_problem(platform="linux", libraries=[("libc.so.6", "libc6"), ABSENT], probe=QT_FAILS)
    assert line is not None and "\n" not in line
    assert "missing: libtallei-absent0." in line
    assert "sudo apt-get install libtallei-absent0" in line
    assert "libc6" not in line


def test_a_missing_library_is_no_problem_when_qt_starts_without_it() -> None:
    # Qt told to use Wayland or offscreen needs none of the X11 libraries.
    assert x11_problem(platform="linux", libraries=[ABSENT], probe=QT_STARTS) is None


def test_the_real_probe_starts_qt_on_the_platform_it_is_given() -> None:
    # The tests run Qt offscreen, so the X11 libraries do not matter to it.
    assert x11_problem(platform="linux", libraries=[ABSENT]) is None


def test_nothing_is_probed_when_every_library_loads() -> None:
    assert x11_problem(platform="linux", libraries=[("libc.so.6", "libc6")], probe=QT_FAILS) is None
    assert x11_problem(platform="win32", libraries=[ABSENT], probe=QT_FAILS) is None


def test_the_lookup_finds_present_and_absent_libraries() -> None:
    assert loadable("libc.so.6") and not loadable(ABSENT[0])
    assert missing_libraries([ABSENT, ("libc.so.6", "libc6")]) == ["libtallei-absent0"]
    assert missing_libraries(X11_LIBRARIES, load=lambda _name: False) == [p for _, p in X11_LIBRARIES]


@pytest.mark.slow
def test_the_app_says_what_to_install_and_exits_1_instead_of_aborting(app_env: dict[str, str]) -> None:
    env = dict(app_env, QT_QPA_PLATFORM="xcb", DISPLAY=":93731")  # a display nobody serves
    code = (
        "import sys\n"
        "from tallei_desktop.config import load_settings\n"
        "from tallei_desktop.gui.app import run_gui\n"
        f"sys.exit(run_gui(load_settings(), x11_libraries=[{ABSENT!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "missing: libtallei-absent0" in lines[0], done.stderr
