"""The Replaced page and the history's links: a memory a newer one replaced is seen and brought back."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from pytestqt.qtbot import QtBot

from tallei_desktop.config import load_settings
from tallei_desktop.core.models import MemoryStatus
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.details import MEMORY_SCHEME, REVIVE_SCHEME
from tallei_desktop.gui.main_window import MainWindow, PageName
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.memories import MemoriesPage
from tests.gui.conftest import WAIT_MS


def _replace(service: MemoryService, old_text: str, new_text: str) -> tuple[str, str]:
    old = service.save(old_text, platform="claude").id
    new = service.save(new_text, platform="claude").id
    service.drain()
    assert service.get(old).status is MemoryStatus.SUPERSEDED
    assert service.get(old).superseded_by == new
    return old, new


def _window(qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops) -> MainWindow:
    env = {"TALLEI_DATA_DIR": str(tmp_path / "data"), "TALLEI_MODEL_DIR": str(tmp_path / "no-model")}
    settings = load_settings(environ=env, config_path=tmp_path / "absent.toml")
    window = MainWindow(settings, backend, ops, has_tray=True)
    qtbot.addWidget(window)
    return window


def _loaded(qtbot: QtBot, page: MemoriesPage) -> None:
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()


def test_the_replaced_page_lists_replaced_memories_newest_first_and_brings_one_back(
    qtbot: QtBot, tmp_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    tabs, spaces = _replace(service, "I prefer tabs for indentation", "I prefer spaces for indentation")
    tea, coffee = _replace(service, "I prefer tea in the morning", "I prefer coffee in the morning")
    window = _window(qtbot, tmp_path, backend, ops)
    titles = [window.nav.item(i).text() for i in range(window.nav.count())]
    assert titles.index("Replaced") == titles.index("Forgotten") + 1
    page = window.memory_pages[View.REPLACED]
    window.show_page(PageName.REPLACED)
    assert window.stack.currentWidget() is page
    _loaded(qtbot, page)
    assert [m.id for m in page.model.memories()] == [tea, tabs]  # the latest replaced first

    page.select_id(tabs)
    qtbot.waitUntil(lambda: "I prefer spaces for indentation" in page.detail.toPlainText(), timeout=WAIT_MS)
    text = page.detail.toPlainText()
    assert "replaced by “I prefer spaces for indentation”" in text
    flat = " ".join(text.split())
    assert "Listed under Replaced" in flat
    assert "Replaced by “I prefer spaces for indentation” from claude" in flat
    assert page.bring_back_button.text() == "&Bring back"  # Alt+B
    assert not page.bring_back_button.isHidden() and page.restore_button.isHidden()

    with qtbot.waitSignal(page.acted, timeout=WAIT_MS), qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        qtbot.mouseClick(page.bring_back_button, Qt.MouseButton.LeftButton)

    assert service.get(tabs).status is MemoryStatus.ACTIVE
    assert service.get(spaces).status is MemoryStatus.ACTIVE
    assert [m.id for m in page.model.memories()] == [tea]
    assert page.message_label.text().startswith("Brought back: “I prefer tabs for indentation”")
    recalled = {i.memory.id for i in service.recall("indentation").items}
    assert {tabs, spaces} <= recalled
    assert service.get(coffee).status is MemoryStatus.ACTIVE


def test_the_history_links_to_what_a_memory_replaced_and_brings_it_back(
    qtbot: QtBot, tmp_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    tabs, spaces = _replace(service, "I prefer tabs for indentation", "I prefer spaces for indentation")
    window = _window(qtbot, tmp_path, backend, ops)
    prefs = window.memory_pages[View.PREFERENCES]
    _loaded(qtbot, prefs)
    assert prefs.select_id(spaces)
    qtbot.waitUntil(lambda: "I prefer tabs for indentation" in prefs.detail.toHtml(), timeout=WAIT_MS)
    html = prefs.detail.toHtml()
    assert f'href="{MEMORY_SCHEME}:{tabs}"' in html
    assert f'href="{REVIVE_SCHEME}:{tabs}"' in html
    assert "replaced “I prefer tabs for indentation” from claude bring back" in prefs.detail.toPlainText()

    prefs.detail.anchorClicked.emit(QUrl(f"{MEMORY_SCHEME}:{tabs}"))

    replaced = window.memory_pages[View.REPLACED]
    qtbot.waitUntil(lambda: replaced.selected_id() == tabs, timeout=WAIT_MS)
    assert window.stack.currentWidget() is replaced

    # From the replaced one, its successor's link leads back to Preferences.
    qtbot.waitUntil(lambda: f"{MEMORY_SCHEME}:{spaces}" in replaced.detail.toHtml(), timeout=WAIT_MS)
    replaced.detail.anchorClicked.emit(QUrl(f"{MEMORY_SCHEME}:{spaces}"))
    qtbot.waitUntil(lambda: window.stack.currentWidget() is prefs, timeout=WAIT_MS)
    assert prefs.selected_id() == spaces

    with qtbot.waitSignal(prefs.acted, timeout=WAIT_MS), qtbot.waitSignal(prefs.loaded, timeout=WAIT_MS):
        prefs.detail.anchorClicked.emit(QUrl(f"{REVIVE_SCHEME}:{tabs}"))

    assert service.get(tabs).status is MemoryStatus.ACTIVE
    assert service.get(spaces).status is MemoryStatus.ACTIVE
    assert {m.id for m in prefs.model.memories()} == {tabs, spaces}


def test_bringing_back_what_is_no_longer_replaced_says_why_and_changes_nothing(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    tabs, spaces = _replace(service, "I prefer tabs for indentation", "I prefer spaces for indentation")
    page = MemoriesPage(View.PREFERENCES, backend, ops)
    qtbot.addWidget(page)
    _loaded(qtbot, page)
    seq = service.last_change_seq()
    with qtbot.waitSignal(ops.message, timeout=WAIT_MS) as said:
        page.detail.anchorClicked.emit(QUrl(f"{REVIVE_SCHEME}:{spaces}"))
    assert said.args == [
        f"Memory {spaces} was not replaced by a newer one (it is active), so there is nothing to bring back."
    ]
    assert service.changes_since(seq).events == ()
    assert service.get(tabs).status is MemoryStatus.SUPERSEDED
