"""packaging/linux/install.sh and uninstall.sh, run for real against a built folder's layout in a temp HOME."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "packaging" / "linux"
ICONS = ("scalable/apps/tallei-desktop.svg", *(f"{s}x{s}/apps/tallei-desktop.png" for s in (48, 128, 256)))

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the Linux install scripts are POSIX shell")


def _executable(path: Path, text: str) -> None:
    path.write_text(f"#!/bin/sh\n{text}\n", encoding="utf-8")
    path.chmod(0o755)


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A folder laid out as `make package` leaves it, with tiny stand-ins for the two executables."""
    folder = tmp_path / "dist" / "tallei-desktop"
    (folder / "_internal").mkdir(parents=True)
    (folder / "_internal" / "libpython.so").write_bytes(b"\0" * 64)
    _executable(folder / "tallei-desktop", 'echo "tallei-desktop 0.1.0 $*"')
    _executable(folder / "Tallei", "exit 0")
    apps = folder / "share" / "applications"
    apps.mkdir(parents=True)
    shutil.copy(REPO / "resources" / "tallei-desktop.desktop", apps)
    for icon in ICONS:
        path = folder / "share" / "icons" / "hicolor" / icon
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(icon.encode())
    for script in ("install.sh", "uninstall.sh"):
        shutil.copy(SCRIPTS / script, folder / script)
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A person's home with memories, settings and an autostart entry already in it."""
    home = tmp_path / "home with space"
    data = home / ".local" / "share" / "tallei-desktop"
    data.mkdir(parents=True)
    (data / "tallei.db").write_bytes(b"encrypted memories")
    (home / ".config" / "tallei-desktop").mkdir(parents=True)
    (home / ".config" / "tallei-desktop" / "config.toml").write_text("start_at_login = true\n")
    (home / ".config" / "autostart").mkdir()
    (home / ".config" / "autostart" / "tallei-desktop.desktop").write_text("[Desktop Entry]\n")
    (home / ".config" / "autostart" / "other.desktop").write_text("[Desktop Entry]\n")
    return home


def _run(
    script: Path, home: Path, *args: str, prefix: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    if prefix is not None:
        env["PREFIX"] = str(prefix)
    return subprocess.run(["sh", str(script), *args], env=env, capture_output=True, text=True, timeout=60)


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_install_puts_the_program_command_menu_entry_and_icons_under_local(built: Path, home: Path) -> None:
    result = _run(built / "install.sh", home)

    local = home / ".local"
    app = local / "lib" / "tallei-desktop"
    assert result.returncode == 0, result.stderr
    assert f"Installed Tallei in {app}." in result.stdout
    assert (app / "_internal" / "libpython.so").is_file()
    command = local / "bin" / "tallei-desktop"
    assert command.is_symlink() and command.resolve() == (app / "tallei-desktop").resolve()
    ran = subprocess.run([str(command), "--version"], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "tallei-desktop 0.1.0 --version"
    entry = (local / "share" / "applications" / "tallei-desktop.desktop").read_text(encoding="utf-8")
    assert f'Exec="{app}/Tallei"\n' in entry  # quoted: the home folder has a space in it
    assert "Icon=tallei-desktop\n" in entry
    for icon in ICONS:
        assert (local / "share" / "icons" / "hicolor" / icon).read_bytes() == icon.encode()


def test_install_respects_prefix_and_takes_the_folder_as_an_argument(
    built: Path, home: Path, tmp_path: Path
) -> None:
    prefix = tmp_path / "opt"

    result = _run(SCRIPTS / "install.sh", home, str(built), prefix=prefix)

    assert result.returncode == 0, result.stderr
    assert (prefix / "lib" / "tallei-desktop" / "tallei-desktop").is_file()
    assert (prefix / "bin" / "tallei-desktop").is_symlink()
    assert not (home / ".local" / "lib").exists()


def test_installing_again_replaces_the_old_program(built: Path, home: Path) -> None:
    _run(built / "install.sh", home)
    app = home / ".local" / "lib" / "tallei-desktop"
    (app / "_internal" / "left-from-old-version.so").write_bytes(b"old")

    result = _run(built / "install.sh", home)

    assert result.returncode == 0, result.stderr
    assert not (app / "_internal" / "left-from-old-version.so").exists()
    assert not (home / ".local" / "lib" / "tallei-desktop.new").exists()


def test_install_refuses_a_folder_that_is_not_a_build_and_changes_nothing(home: Path, tmp_path: Path) -> None:
    before = _files(home)

    result = _run(SCRIPTS / "install.sh", home, str(tmp_path))

    assert result.returncode == 2
    assert "is not a built Tallei folder" in result.stderr
    assert _files(home) == before


def test_uninstall_removes_what_install_added_and_keeps_the_persons_data(built: Path, home: Path) -> None:
    before = _files(home)
    _run(built / "install.sh", home)

    result = _run(home / ".local" / "lib" / "tallei-desktop" / "uninstall.sh", home)

    assert result.returncode == 0, result.stderr
    assert "Removed Tallei" in result.stdout
    # Everything install added is gone, and so is the start-at-login entry; the rest is untouched.
    assert _files(home) == before - {".config/autostart/tallei-desktop.desktop"}
    assert (home / ".local" / "share" / "tallei-desktop" / "tallei.db").read_bytes() == b"encrypted memories"
    assert (home / ".config" / "autostart" / "other.desktop").exists()


def test_uninstall_without_an_installation_says_so_and_keeps_everything(home: Path) -> None:
    (home / ".config" / "autostart" / "tallei-desktop.desktop").unlink()
    before = _files(home)

    result = _run(SCRIPTS / "uninstall.sh", home)

    assert result.returncode == 0, result.stderr
    assert "nothing removed" in result.stdout
    assert _files(home) == before


def test_uninstall_leaves_a_command_that_points_elsewhere(built: Path, home: Path, tmp_path: Path) -> None:
    _run(built / "install.sh", home)
    other = tmp_path / "pipx-tallei"
    _executable(other, "exit 0")
    link = home / ".local" / "bin" / "tallei-desktop"
    link.unlink()
    link.symlink_to(other)

    _run(SCRIPTS / "uninstall.sh", home)

    assert link.is_symlink() and link.resolve() == other
