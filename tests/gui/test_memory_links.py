"""The window follows links out of a memory view: an open conflict's link leads to the Conflicts page."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from tallei_desktop.config import load_settings
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.main_window import MainWindow
from tallei_desktop.gui.ops import Ops
from tests.gui.conftest import WAIT_MS


def test_a_conflict_link_in_a_memory_view_opens_that_conflict(
    qtbot: QtBot, tmp_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("I prefer window seats on flights", platform="claude")
    service.save("I prefer aisle seats on flights", platform="gemini")
    service.save("I prefer metric units", platform="claude")
    service.save("I prefer imperial units", platform="chatgpt")
    service.drain()
    conflicts = service.conflicts()
    assert len(conflicts) == 2
    env = {"TALLEI_DATA_DIR": str(tmp_path / "data"), "TALLEI_MODEL_DIR": str(tmp_path / "no-model")}
    settings = load_settings(environ=env, config_path=tmp_path / "absent.toml")
    window = MainWindow(settings, backend, ops, has_tray=True)
    qtbot.addWidget(window)
    window.set_conflicts(conflicts)
    wanted = conflicts[-1]

    window.memory_pages[View.PREFERENCES].detail.anchorClicked.emit(QUrl(f"conflict:{wanted.id}"))

    assert window.stack.currentWidget() is window.conflicts_page
    qtbot.waitUntil(
        lambda: (current := window.conflicts_page.current()) is not None and current.id == wanted.id,
        timeout=WAIT_MS,
    )
