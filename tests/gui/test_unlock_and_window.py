"""Unlocking with a passphrase dialog; the window without a tray; the tray's menu."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import keyring.backends.null as keyring_backends_null
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QSystemTrayIcon
from pytestqt.qtbot import QtBot

from tallei_desktop.config import Settings, load_settings
from tallei_desktop.core.embeddings import ModelState, ModelStatus
from tallei_desktop.core.keys import KeyMethod, SecretStore
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.main_window import MainWindow, PageName
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.tray import Tray
from tallei_desktop.gui.unlock import Opened, PassphraseDialog, Unlocker, open_store
from tests.gui.conftest import PASSPHRASE, WAIT_MS
from tests.support.keyring_backend import MemoryKeyring

WRONG = "not the passphrase"


def _settings(tmp_path: Path, passphrase: str | None) -> Settings:
    env = {"TALLEI_DATA_DIR": str(tmp_path / "data"), "TALLEI_MODEL_DIR": str(tmp_path / "no-model")}
    if passphrase:
        env["TALLEI_PASSPHRASE"] = passphrase
    return load_settings(environ=env, config_path=tmp_path / "absent.toml")


def _secrets(settings: Settings, backend: object | None = None) -> SecretStore:
    keyring = backend or keyring_backends_null.Keyring()  # type: ignore[no-untyped-call]
    return SecretStore(settings.data_dir, passphrase=settings.passphrase, backend=keyring)  # type: ignore[arg-type]


def _ask(qtbot: QtBot, unlocker: Unlocker) -> PassphraseDialog:
    with qtbot.waitSignal(unlocker.asking, timeout=WAIT_MS) as asked:
        unlocker.start()
    dialog: PassphraseDialog = asked.args[0]
    return dialog


def _answer(qtbot: QtBot, unlocker: Unlocker, dialog: PassphraseDialog, typed: str) -> PassphraseDialog:
    with qtbot.waitSignal(unlocker.asking, timeout=WAIT_MS) as asked:
        dialog.passphrase.setText(typed)
        dialog.repeat.setText(typed)
        dialog.buttons.accepted.emit()
    again: PassphraseDialog = asked.args[0]
    return again


def _opened(qtbot: QtBot, unlocker: Unlocker, action: Callable[[], None]) -> Opened:
    with qtbot.waitSignal(unlocker.opened, timeout=WAIT_MS) as opened:
        action()
    result: Opened = opened.args[0]
    return result


def test_a_wrong_passphrase_is_said_and_asked_again(qtbot: QtBot, tmp_path: Path, ops: Ops) -> None:
    guarded = _settings(tmp_path, PASSPHRASE)
    open_store(guarded, _secrets(guarded)).service.close()  # a store guarded by a passphrase
    settings = _settings(tmp_path, None)
    unlocker = Unlocker(settings, ops, secrets=_secrets(settings))
    first = _ask(qtbot, unlocker)
    assert first.repeat.isHidden() and first.use_keyring.isHidden()  # opening: asked once, no choice
    again = _answer(qtbot, unlocker, first, WRONG)
    assert "does not open" in again.problem.text()
    again.passphrase.setText(PASSPHRASE)
    result = _opened(qtbot, unlocker, again.buttons.accepted.emit)
    try:
        assert result.token
        assert "passphrase" in result.service.db.key_source
    finally:
        result.service.close()


def test_first_run_without_a_keyring_sets_a_passphrase_typed_twice(
    qtbot: QtBot, tmp_path: Path, ops: Ops
) -> None:
    settings = _settings(tmp_path, None)
    unlocker = Unlocker(settings, ops, secrets=_secrets(settings))
    dialog = _ask(qtbot, unlocker)
    assert not dialog.repeat.isHidden() and dialog.use_keyring.isHidden()
    dialog.passphrase.setText("one thing")
    dialog.repeat.setText("another")
    dialog.buttons.accepted.emit()
    assert "differ" in dialog.problem.text() and dialog.isVisible()
    dialog.repeat.setText("one thing")
    result = _opened(qtbot, unlocker, dialog.buttons.accepted.emit)
    result.service.close()
    assert _secrets(settings).key_method() is KeyMethod.PASSPHRASE


def test_first_run_with_a_keyring_offers_it(qtbot: QtBot, tmp_path: Path, ops: Ops) -> None:
    settings = _settings(tmp_path, None)
    keyring = MemoryKeyring()
    unlocker = Unlocker(settings, ops, secrets=_secrets(settings, keyring))
    dialog = _ask(qtbot, unlocker)
    assert not dialog.use_keyring.isHidden() and dialog.use_keyring.isChecked()
    assert dialog.passphrase.isHidden()
    result = _opened(qtbot, unlocker, dialog.buttons.accepted.emit)
    result.service.close()
    assert _secrets(settings, keyring).key_method() is KeyMethod.KEYRING


def test_cancelling_the_dialog_opens_nothing(qtbot: QtBot, tmp_path: Path, ops: Ops) -> None:
    settings = _settings(tmp_path, None)
    unlocker = Unlocker(settings, ops, secrets=_secrets(settings))
    dialog = _ask(qtbot, unlocker)
    with qtbot.waitSignal(unlocker.cancelled, timeout=WAIT_MS):
        dialog.reject()
    assert not settings.db_path.exists()


def test_without_a_tray_the_window_shows_conflicts_as_a_banner_and_closing_quits(
    qtbot: QtBot, tmp_path: Path, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    service.save("I prefer window seats on flights", platform="claude")
    service.save("I prefer aisle seats on flights", platform="gemini")
    service.drain()
    window = MainWindow(_settings(tmp_path, None), backend, ops, has_tray=False)
    qtbot.addWidget(window)
    window.set_notice("tray", "No system tray was found on this desktop.")
    window.set_conflicts(service.conflicts())
    assert not window.conflict_banner.isHidden()
    assert "1 conflict" in window.conflict_banner.text()
    assert not window.banner.isHidden() and "No system tray" in window.banner.text()
    window.conflict_banner.click()
    assert window.stack.currentWidget() is window.conflicts_page
    with qtbot.waitSignal(window.quit_requested, timeout=WAIT_MS):
        window.close()


def test_with_a_tray_closing_the_window_keeps_running(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    window = MainWindow(_settings(tmp_path, None), backend, ops, has_tray=True)
    qtbot.addWidget(window)
    window.show()
    with qtbot.assertNotEmitted(window.quit_requested):
        window.close()
    assert not window.isVisible()
    window.set_conflicts([])
    assert window.conflict_banner.isHidden()


def test_the_tray_menu(qtbot: QtBot) -> None:
    tray = Tray()
    texts = [a.text() for a in tray.menu.actions() if not a.isSeparator()]
    assert texts[0] == "&Open Tallei" and texts[-1] == "&Quit"
    assert not tray.conflicts_action.isVisible()
    tray.set_conflicts(2)
    assert tray.conflicts_action.isVisible() and tray.conflicts_action.text() == "&Conflicts (2)"
    with qtbot.waitSignal(tray.page_requested) as asked:
        tray.conflicts_action.trigger()
    assert asked.args == [PageName.CONFLICTS]
    tray.set_paused(True)
    assert tray.pause_action.text() == "&Resume HTTP endpoint"
    with qtbot.waitSignal(tray.open_requested):
        tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    with qtbot.waitSignal(tray.quit_requested):
        tray.menu.actions()[-1].trigger()
    assert not tray.icon.icon().isNull()


def _fits(dialog: QDialog) -> bool:
    """No visible label of ``dialog`` is shorter than its wrapped text needs."""
    labels = [label for label in dialog.findChildren(QLabel) if label.isVisible()]
    return bool(labels) and all(label.height() >= label.heightForWidth(label.width()) for label in labels)


def test_first_run_refuses_a_short_passphrase_and_says_how_long(
    qtbot: QtBot, tmp_path: Path, ops: Ops
) -> None:
    settings = _settings(tmp_path, None)
    unlocker = Unlocker(settings, ops, secrets=_secrets(settings))
    dialog = _ask(qtbot, unlocker)
    dialog.passphrase.setText("abc")
    assert dialog.hint.text() == "At least 8 characters: 5 more to go."
    dialog.repeat.setText("abc")
    dialog.buttons.accepted.emit()
    assert "at least 8 characters" in dialog.problem.text() and dialog.isVisible()
    assert not settings.db_path.exists()
    dialog.passphrase.setText("abcdefgh")
    assert dialog.hint.text().startswith("Long enough")
    dialog.repeat.setText("abcdefgh")
    result = _opened(qtbot, unlocker, dialog.buttons.accepted.emit)
    result.service.close()


def test_the_dialog_grows_to_show_its_problem_line_whole(qtbot: QtBot, tmp_path: Path, ops: Ops) -> None:
    settings = _settings(tmp_path, None)
    unlocker = Unlocker(settings, ops, secrets=_secrets(settings))
    dialog = _ask(qtbot, unlocker)
    qtbot.waitExposed(dialog)
    assert _fits(dialog)
    dialog.passphrase.setText("one thing")
    dialog.repeat.setText("another thing")
    dialog.buttons.accepted.emit()
    assert "differ" in dialog.problem.text()
    qtbot.waitUntil(lambda: _fits(dialog), timeout=WAIT_MS)


def test_the_passphrase_dialog_answers_the_keyboard(qtbot: QtBot, tmp_path: Path, ops: Ops) -> None:
    settings = _settings(tmp_path, None)
    unlocker = Unlocker(settings, ops, secrets=_secrets(settings))
    dialog = _ask(qtbot, unlocker)
    dialog.activateWindow()
    qtbot.waitActive(dialog)
    dialog.passphrase.setFocus()
    qtbot.keyClicks(dialog.passphrase, "short")
    qtbot.keyClick(dialog.passphrase, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert "too short" in dialog.problem.text()  # Ctrl+Enter went through the dialog's checks
    with qtbot.waitSignal(unlocker.cancelled, timeout=WAIT_MS):
        qtbot.keyClick(dialog.passphrase, Qt.Key.Key_Escape)


def test_a_notice_can_be_closed_and_shows_again_when_it_changes(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    window = MainWindow(_settings(tmp_path, None), backend, ops, has_tray=True)
    qtbot.addWidget(window)
    window.show()
    window.set_notice("welcome", "Your memory is ready.")
    assert window.notice_bar.isVisible() and window.notice_bar.height() < 60
    window.notice_close.click()
    assert window.notice_bar.isHidden() and window.banner.isHidden()
    window.set_notice("welcome", "Your memory is ready.")
    assert window.notice_bar.isHidden()  # the same words again stay closed
    window.set_notice("http", "Cannot listen on 127.0.0.1:8765.")
    assert window.banner.text() == "Cannot listen on 127.0.0.1:8765."


def test_the_model_notice_is_compact_can_be_closed_and_offers_a_folder_when_search_is_off(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    window = MainWindow(_settings(tmp_path, None), backend, ops, has_tray=True)
    qtbot.addWidget(window)
    window.show()
    off = ModelStatus(ModelState.UNAVAILABLE, "The folder holds no model.onnx.")
    window.show_model(off)
    box = window.model_box
    assert box.isVisible() and box.choose.isVisible() and box.height() < 80
    box.choose.click()
    assert window.stack.currentWidget() is window.settings_page
    assert window.settings_page.model_dialog.isVisible()
    window.settings_page.model_dialog.reject()
    box.close_button.click()
    assert box.isHidden()
    window.show_model(off)
    assert box.isHidden()  # closed: stays closed while nothing changes
    window.show_model(ModelStatus(ModelState.DOWNLOADING, "Downloading.", None, 1_000_000, None))
    assert box.isVisible() and not box.choose.isVisible()
