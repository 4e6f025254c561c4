"""Settings: written through the core's settings writer, the passphrase changed, the model's state shown."""

from __future__ import annotations

from pathlib import Path

import keyring.backends.null as keyring_backends_null
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QGroupBox, QLabel, QSpinBox
from pytestqt.qtbot import QtBot

from tallei_desktop.config import Settings, load_settings, save_settings
from tallei_desktop.core.embeddings import ModelState, ModelStatus
from tallei_desktop.core.errors import WrongKey
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.settings import PASSPHRASE_CHANGED, ChangePassphraseDialog, SettingsPage
from tallei_desktop.gui.unlock import open_store
from tests.gui.conftest import PASSPHRASE, WAIT_MS


def _settings(tmp_path: Path) -> Settings:
    env = {
        "TALLEI_DATA_DIR": str(tmp_path / "data"),
        "TALLEI_MODEL_DIR": str(tmp_path / "no-model"),
        "TALLEI_ALLOW_MODEL_DOWNLOAD": "false",
        "TALLEI_PASSPHRASE": PASSPHRASE,
    }
    return load_settings(environ=env, config_path=tmp_path / "config.toml")


def test_saved_settings_reach_the_file_and_load_again(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model_name = "sentence-transformers/all-MiniLM-L6-v2"\n', encoding="utf-8")
    settings = _settings(tmp_path)
    page = SettingsPage(
        settings, backend, ops, save=lambda changes: save_settings(changes, config_path=config)
    )
    qtbot.addWidget(page)
    page.short_term_days.setValue(30)
    page.http_port.setValue(9123)
    page.notify_conflicts.setChecked(False)
    assert page.changes() == {"short_term_days": 30, "http_port": 9123, "notify_conflicts": False}
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
        page.save_button.click()
    assert "next time Tallei starts" in said.args[0]
    again = load_settings(environ={}, config_path=config)
    assert (again.short_term_days, again.http_port, again.notify_conflicts) == (30, 9123, False)
    assert again.model_name == "sentence-transformers/all-MiniLM-L6-v2"  # kept


def test_changing_the_passphrase_keeps_the_dialog_open_until_it_worked(
    qtbot: QtBot, tmp_path: Path, ops: Ops
) -> None:
    settings = _settings(tmp_path)
    secrets = SecretStore(settings.data_dir, passphrase=PASSPHRASE, backend=keyring_backends_null.Keyring())  # type: ignore[no-untyped-call]
    opened = open_store(settings, secrets)
    try:
        page = SettingsPage(settings, Backend(opened.service), ops, secrets=opened.secrets)
        qtbot.addWidget(page)
        qtbot.waitUntil(lambda: page.change_passphrase.isVisibleTo(page), timeout=WAIT_MS)
        page.change_passphrase.click()
        dialog = page.passphrase_dialog
        assert dialog.isVisible() and dialog.minimumWidth() >= 420
        dialog.old.setText("not it")
        dialog.new.setText("short")
        dialog.again.setText("short")
        dialog.ok.click()
        assert "at least 8 characters" in dialog.problem.text() and dialog.isVisible()

        dialog.new.setText("a brand new passphrase")
        dialog.again.setText("a brand new passphrase")
        with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
            dialog.ok.click()
            assert dialog.busy.isVisible() and not dialog.ok.isEnabled()  # checked off the Qt thread
        assert "not the current passphrase" in said.args[0]
        assert dialog.isVisible() and "not the current passphrase" in dialog.problem.text()
        assert dialog.ok.isEnabled() and not dialog.busy.isVisible()
        assert dialog.new.text() == dialog.again.text() == "a brand new passphrase"  # nothing to retype
        assert page.key_message.isHidden() and page.status.text() == ""

        dialog.old.setText(PASSPHRASE)
        with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
            dialog.ok.click()
        assert said.args[0] == PASSPHRASE_CHANGED
        assert not dialog.isVisible()
        assert page.key_message.isVisibleTo(page) and "TALLEI_PASSPHRASE" in page.key_message.text()
        assert "keep working" in page.key_message.text()
    finally:
        opened.service.close()
    fresh = SecretStore(settings.data_dir, passphrase=PASSPHRASE, backend=keyring_backends_null.Keyring())  # type: ignore[no-untyped-call]
    with pytest.raises(WrongKey):
        fresh.store_key(create=False)
    renewed = SecretStore(
        settings.data_dir,
        passphrase="a brand new passphrase",
        backend=keyring_backends_null.Keyring(),  # type: ignore[no-untyped-call]
    )
    assert renewed.store_key(create=False).key


def test_the_change_passphrase_dialog_answers_the_keyboard(qtbot: QtBot) -> None:
    dialog = ChangePassphraseDialog()
    qtbot.addWidget(dialog)
    submitted: list[tuple[str, str]] = []
    dialog.submitted.connect(lambda old, new: submitted.append((old, new)))
    dialog.open()
    dialog.activateWindow()
    qtbot.waitActive(dialog)
    dialog.old.setFocus()
    qtbot.keyClicks(dialog.old, "the current one")
    qtbot.keyClick(dialog.old, Qt.Key.Key_Tab)
    qtbot.keyClicks(dialog.new, "a long new passphrase")
    qtbot.keyClick(dialog.new, Qt.Key.Key_Tab)
    assert dialog.focusWidget() is dialog.again
    qtbot.keyClicks(dialog.again, "a long new passphrase")
    qtbot.keyClick(dialog.again, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert submitted == [("the current one", "a long new passphrase")]
    dialog.refused("That is not the current passphrase.")
    with qtbot.waitSignal(dialog.rejected, timeout=WAIT_MS):
        qtbot.keyClick(dialog.old, Qt.Key.Key_Escape)


def test_a_download_shows_its_progress(qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops) -> None:
    page = SettingsPage(_settings(tmp_path), backend, ops)
    qtbot.addWidget(page)
    page.show()  # asks the service for the model's state
    qtbot.waitUntil(lambda: page.model_state.text() == backend.service.model_status().detail, timeout=WAIT_MS)
    page.show_model(ModelStatus(ModelState.DOWNLOADING, "Downloading the model.", 0.25, 25, 100))
    assert page.model_progress.isVisibleTo(page) and page.model_progress.value() == 250
    page.show_model(ModelStatus(ModelState.READY, "Semantic search is on.", None, None, None))
    assert not page.model_progress.isVisibleTo(page)
    assert page.model_state.text() == "Semantic search is on."


def test_start_at_login_adds_and_removes_the_autostart_entry(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    config = tmp_path / "config.toml"
    folder = tmp_path / "xdg" / "autostart"
    page = SettingsPage(
        _settings(tmp_path),
        backend,
        ops,
        save=lambda changes: save_settings(changes, config_path=config),
        config_home=tmp_path / "xdg",
    )
    qtbot.addWidget(page)
    page.start_at_login.setChecked(True)
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS):
        page.save_button.click()
    entry = (folder / "tallei-desktop.desktop").read_text(encoding="utf-8")
    assert entry.startswith("[Desktop Entry]") and "tallei_desktop gui" in entry
    assert load_settings(environ={}, config_path=config).start_at_login
    page.start_at_login.setChecked(False)
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS):
        page.save_button.click()
    assert not (folder / "tallei-desktop.desktop").exists()


def test_back_up_now_writes_a_backup_and_lists_it(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    settings = _settings(tmp_path)
    backend.service.save("Something worth keeping", type="fact", platform="claude")
    page = SettingsPage(settings, backend, ops)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.backups_state.text().startswith("No backups yet"), timeout=WAIT_MS)
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
        page.backup_button.click()
    [made] = list((settings.data_dir / "backups").glob("tallei-*.db"))
    assert said.args == [f"Backed up to {made}."]
    assert page.backup_message.isVisibleTo(page) and page.backup_message.text() == f"Backed up to {made}."
    assert page.status.text() == ""  # not beside "Save settings"
    qtbot.waitUntil(lambda: page.backups_state.text().startswith("1 backup in"), timeout=WAIT_MS)


def test_each_message_sits_in_its_box_and_spin_boxes_keep_their_natural_width(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    page = SettingsPage(_settings(tmp_path), backend, ops)
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()
    qtbot.waitExposed(page)

    def box_of(widget: QLabel | QSpinBox) -> str:
        parent = widget.parentWidget()
        while parent is not None and not isinstance(parent, QGroupBox):
            parent = parent.parentWidget()
        assert parent is not None
        return parent.title()

    assert box_of(page.backup_keep) == "Backups"
    assert box_of(page.backup_message) == "Backups"
    assert box_of(page.key_message) == "Your memories"
    assert box_of(page.model_message) == "Semantic search"
    for spin in page.findChildren(QSpinBox):
        assert spin.width() <= spin.sizeHint().width() + 2, spin.accessibleName()


def test_choosing_the_model_folder_writes_model_dir_and_says_it_applies_at_the_next_start(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    config = tmp_path / "config.toml"
    folder = tmp_path / "all-MiniLM-L6-v2-onnx"
    folder.mkdir()
    page = SettingsPage(
        _settings(tmp_path), backend, ops, save=lambda changes: save_settings(changes, config_path=config)
    )
    qtbot.addWidget(page)
    page.show()
    assert page.choose_model.isVisibleTo(page)
    page.choose_model.click()
    chooser = page.model_dialog
    assert chooser.isVisible() and chooser.fileMode() is QFileDialog.FileMode.Directory
    with qtbot.waitSignal(page.saved, timeout=WAIT_MS) as said:
        chooser.fileSelected.emit(str(folder))
    assert "next time it starts" in said.args[0]
    assert page.model_message.isVisibleTo(page) and str(folder) in page.model_message.text()
    assert str(folder) in page.model_folder.text()
    assert load_settings(environ={}, config_path=config).model_dir == folder


def test_at_the_smallest_window_nothing_on_the_settings_page_is_clipped(
    qtbot: QtBot, tmp_path: Path, backend: Backend, ops: Ops
) -> None:
    from tallei_desktop.gui.main_window import MainWindow, PageName

    window = MainWindow(_settings(tmp_path), backend, ops, has_tray=True)
    qtbot.addWidget(window)
    window.show_page(PageName.SETTINGS)
    qtbot.waitExposed(window)
    window.resize(window.minimumSizeHint())
    page = window.settings_page
    long = "Saved to /home/someone/.config/tallei-desktop/config.toml. The changes apply the next time Tallei starts."
    page.status.setText(long)
    page.key_message.setText(PASSPHRASE_CHANGED)
    page.key_message.show()

    def fits() -> bool:
        viewport = page.scroll_area.viewport()
        labels = [label for label in page.findChildren(QLabel) if label.isVisibleTo(page) and label.text()]
        return page.scroll_area.widget().width() <= viewport.width() and all(
            label.height() >= label.heightForWidth(label.width())
            and label.mapTo(viewport, label.rect().topRight()).x() <= viewport.width()
            for label in labels
        )

    qtbot.waitUntil(fits, timeout=WAIT_MS)
