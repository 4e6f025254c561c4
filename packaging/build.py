"""Build the installable one-folder app: `make package` (or `python packaging/build.py`).

Runs PyInstaller on packaging/tallei-desktop.spec, adds the desktop files (menu entry, hicolor icons,
install and uninstall scripts) on Linux, checks the menu entry, then prints the build time, the
folder's size and file count, and writes them to build/package.json.

    python packaging/build.py [--model-dir FOLDER] [--dist dist]

--model-dir bundles a local embedding model folder (model.onnx and its tokenizer files) for offline
installs; without it the app downloads the model on first use into the user cache folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NAME = "tallei-desktop"


def folder_stats(folder: Path) -> tuple[int, int]:
    """Total size in bytes and number of files (symlinks counted, not followed)."""
    size = files = 0
    for path in folder.rglob("*"):
        if path.is_symlink() or path.is_file():
            files += 1
            size += path.lstat().st_size
    return size, files


def render_icons(folder: Path) -> None:
    """The hicolor icons, rendered once per build: the spec takes the executables' icon from them."""
    sys.path.insert(0, str(HERE))
    from render_icons import render

    shutil.rmtree(folder, ignore_errors=True)
    render(folder)


def add_linux_desktop_files(app: Path, icons: Path) -> None:
    applications = app / "share" / "applications"
    applications.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "resources" / f"{NAME}.desktop", applications)
    shutil.copytree(icons, app / "share" / "icons", dirs_exist_ok=True)
    for script in ("install.sh", "uninstall.sh"):
        shutil.copy2(HERE / "linux" / script, app / script)
    validator = shutil.which("desktop-file-validate")
    if validator is None:
        print("note: desktop-file-validate not found (Debian: desktop-file-utils); menu entry not checked")
        return
    for entry in (applications / f"{NAME}.desktop",):
        result = subprocess.run([validator, str(entry)], capture_output=True, text=True)
        if result.returncode != 0 or result.stdout.strip():
            raise SystemExit(f"{entry} is not a valid desktop entry:\n{result.stdout}{result.stderr}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model-dir", type=Path, help="bundle this local embedding model folder")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the app folder goes")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller")
    args = parser.parse_args(argv)

    env = dict(os.environ)
    env.pop("TALLEI_BUNDLE_MODEL_DIR", None)
    if args.model_dir is not None:
        if not (args.model_dir / "model.onnx").is_file():
            print(
                f"build: {args.model_dir} holds no model.onnx; pass the folder of an ONNX model.",
                file=sys.stderr,
            )
            return 2
        env["TALLEI_BUNDLE_MODEL_DIR"] = str(args.model_dir.resolve())

    started = time.monotonic()
    icons = ROOT / "build" / "icons"
    render_icons(icons)
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--log-level",
        "WARN",
        "--distpath",
        str(args.dist),
        "--workpath",
        str(args.work),
        str(HERE / f"{NAME}.spec"),
    ]
    subprocess.run(command, cwd=ROOT, env=env, check=True)
    app = args.dist / NAME
    if sys.platform.startswith("linux"):
        add_linux_desktop_files(app, icons)
    seconds = time.monotonic() - started

    size, files = folder_stats(app)
    model = app / "_internal" / "model"
    model_size = folder_stats(model)[0] if model.is_dir() else 0
    report = {
        "folder": str(app),
        "build_seconds": round(seconds, 1),
        "size_mb": round(size / 1e6, 1),
        "size_without_model_mb": round((size - model_size) / 1e6, 1),
        "files": files,
        "model_bundled": model_size > 0,
        "platform": sys.platform,
    }
    rows = [
        ("folder", str(app)),
        ("build time", f"{seconds:.0f} s"),
        (
            "size",
            f"{size / 1e6:.0f} MB"
            + (f" ({(size - model_size) / 1e6:.0f} MB without the model)" if model_size else ""),
        ),
        ("files", str(files)),
        ("model", "bundled" if model_size else "downloaded on first run"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    out = ROOT / "build" / "package.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
