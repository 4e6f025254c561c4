"""Screenshots of the real tray app on a demo store, under Xvfb with a tray host (trayer).

``make screenshots`` runs this. It starts Xvfb and trayer (``apt-get install xvfb trayer
imagemagick`` on Debian), fills a passphrase-guarded demo store in a temporary folder, runs the
same ``TrayApp`` that ``tallei-desktop`` runs, walks its pages and saves PNGs into docs/screenshots/.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "screenshots"
SIZE = (1180, 700)

DEMO = [
    ("I prefer concise answers with code first, explanation after", "claude", None),
    ("Call me Sam", "chatgpt", None),
    ("I prefer metric units", "gemini", None),
    ("Always use type hints in Python code", "cursor", None),
    ("I like dark themes in every editor", "claude", None),
    ("We decided to ship the billing service on Postgres 16", "claude", "decision"),
    ("The staging cluster runs in eu-west-1", "cursor", "fact"),
    ("Lesson learned: never run migrations during the Friday deploy", "chatgpt", "lesson"),
    ("The payment webhook outage on 3 March came from an expired certificate", "gemini", "failure"),
    ("Sam's team uses trunk-based development with short-lived branches", "claude", "fact"),
    ("The design review moved to Thursday at 14:00", "chatgpt", "event"),
    ("Dentist appointment next Tuesday at 9:30", "gemini", "event"),
    ("Idea: cache the exchange rates for an hour", "cursor", "note"),
    ("We decided to keep the mobile app on React Native for now", "chatgpt", "decision"),
]
CONFLICT = [
    ("I prefer tabs for indentation", "claude"),
    ("I prefer spaces for indentation", "chatgpt"),
]


def start_display() -> list[subprocess.Popen[bytes]]:
    for tool in ("Xvfb", "trayer"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is missing: apt-get install -y xvfb trayer imagemagick")
    # Xvfb picks a free display and writes its number once it accepts connections.
    read_end, write_end = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
    )
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()
    if not number:
        raise SystemExit("Xvfb did not start")
    os.environ["DISPLAY"] = f":{number}"
    os.environ.pop("WAYLAND_DISPLAY", None)
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    tray = subprocess.Popen(
        [
            "trayer",
            "--edge",
            "top",
            "--align",
            "right",
            "--widthtype",
            "request",
            "--height",
            "28",
            "--SetDockType",
            "true",
            "--transparent",
            "false",
            "--tint",
            "0xdddddd",
        ],
    )
    time.sleep(1.0)
    return [tray, xvfb]


def fill_demo_store(data_dir: Path) -> dict[str, str]:
    env = {
        "TALLEI_DATA_DIR": str(data_dir),
        "TALLEI_LOG_DIR": str(data_dir / "logs"),
        "TALLEI_PASSPHRASE": "demo passphrase",
        "TALLEI_CONFIG": str(data_dir / "absent.toml"),
        "TALLEI_HTTP_PORT": "8765",
        "TALLEI_ALLOW_MODEL_DOWNLOAD": "false",
    }
    model = REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
    if (model / "model.onnx").is_file():
        env["TALLEI_MODEL_DIR"] = str(model)
    from tallei_desktop.config import load_settings
    from tallei_desktop.factory import build_service

    settings = load_settings(environ=env, config_path=data_dir / "absent.toml")
    service = build_service(settings, background=False, preload_model=False)
    try:
        for text, platform, kind in DEMO:
            service.save(text, platform=platform, type=kind)
        for text, platform in CONFLICT:
            service.save(text, platform=platform)
        service.save("I prefer metric units", platform="claude")  # confirmed by a second assistant
        service.set_platform_paused("gemini", True)  # the Assistants page shows a paused one
        service.drain()
        for query in ("deploy", "billing", "indentation", "editor theme", "staging"):
            service.recall(query)
    finally:
        service.close()
    return env


async def _settle(app: object, seconds: float = 0.6) -> None:
    from tallei_desktop.gui.app import TrayApp

    assert isinstance(app, TrayApp)
    deadline = time.monotonic() + 15
    await asyncio.sleep(0.2)
    while app.ops.running and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(seconds)


async def direct(app: object) -> None:
    from tallei_desktop.gui.app import TrayApp
    from tallei_desktop.gui.main_window import PageName

    assert isinstance(app, TrayApp)
    while app.window is None:
        await asyncio.sleep(0.05)
    window = app.window
    window.resize(*SIZE)
    window.move(60, 60)
    window.bring_forward()
    await _settle(app, 1.5)

    def grab(name: str) -> None:
        path = OUT / f"{name}.png"
        window.grab().save(str(path))
        print(f"saved {path.relative_to(REPO)}", flush=True)

    prefs = window.memory_pages[next(iter(window.memory_pages))]
    prefs.select_row(0)
    await _settle(app)
    grab("main-window")
    window.show_page(PageName.LONG_TERM)
    await _settle(app)
    window.memory_pages[list(window.memory_pages)[1]].select_row(0)
    await _settle(app)
    grab("long-term")
    window.show_page(PageName.CONFLICTS)
    await _settle(app)
    grab("conflicts")
    window.show_page(PageName.RECALL)
    window.recall_page.query.setText("deploying the billing service")
    window.recall_page.preview()
    await _settle(app, 1.0)
    grab("recall-preview")
    window.show_page(PageName.ASSISTANTS)
    await _settle(app)
    grab("assistants")
    window.show_page(PageName.SETTINGS)
    await _settle(app)
    grab("settings")
    if shutil.which("import"):
        shot = OUT / "tray.png"
        subprocess.run(["import", "-window", "root", "-crop", "64x32+1336+0", str(shot)], check=False)
        subprocess.run(["convert", str(shot), "-scale", "300%", str(shot)], check=False)
        print("saved docs/screenshots/tray.png", flush=True)
    app.quit()


def main() -> int:
    faulthandler.dump_traceback_later(100, exit=True)
    OUT.mkdir(parents=True, exist_ok=True)
    helpers = start_display()
    try:
        with tempfile.TemporaryDirectory(prefix="tallei-demo-") as tmp:
            env = fill_demo_store(Path(tmp) / "data")
            os.environ.update(env)
            import qasync
            from PySide6.QtWidgets import QApplication

            from tallei_desktop.config import load_settings
            from tallei_desktop.gui.app import TrayApp

            settings = load_settings(config_path=Path(env["TALLEI_CONFIG"]))
            qt = QApplication(sys.argv[:1])
            qt.setQuitOnLastWindowClosed(False)
            app = TrayApp(settings)

            async def both() -> int:
                director = asyncio.ensure_future(direct(app))
                code = await app.run()
                await director
                return code

            code = int(qasync.run(both()))
            print("app stopped", code, flush=True)
            return code
    finally:
        for proc in helpers:
            proc.terminate()
        for proc in helpers:
            proc.wait(10)
        print("display stopped", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
