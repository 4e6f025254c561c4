"""Every dialog: Ctrl+Enter accepts (through the dialog's own checks), Tab moves focus, Esc cancels."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLineEdit, QPlainTextEdit, QVBoxLayout
from pytestqt.qtbot import QtBot

from tallei_desktop.gui.dialogs import keyboard_friendly


def _dialog(qtbot: QtBot) -> tuple[QDialog, QPlainTextEdit, QLineEdit, QDialogButtonBox]:
    dialog = QDialog()
    qtbot.addWidget(dialog)
    editor = QPlainTextEdit("text", dialog)
    line = QLineEdit(dialog)
    buttons = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, dialog
    )
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(editor)
    layout.addWidget(line)
    layout.addWidget(buttons)
    keyboard_friendly(dialog, buttons)
    dialog.open()
    dialog.activateWindow()
    qtbot.waitActive(dialog)
    editor.setFocus()
    return dialog, editor, line, buttons


def test_tab_moves_focus_instead_of_typing_a_tab(qtbot: QtBot) -> None:
    dialog, editor, line, _ = _dialog(qtbot)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.toPlainText() == "text"
    assert dialog.focusWidget() is line


def test_ctrl_enter_accepts_through_the_accept_button(qtbot: QtBot) -> None:
    dialog, editor, _, _ = _dialog(qtbot)
    with qtbot.waitSignal(dialog.accepted, timeout=2_000):
        qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert editor.toPlainText() == "text"


def test_ctrl_s_saves_and_escape_cancels(qtbot: QtBot) -> None:
    dialog, editor, _, _ = _dialog(qtbot)
    with qtbot.waitSignal(dialog.accepted, timeout=2_000):
        qtbot.keyClick(editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    dialog.open()
    editor.setFocus()
    with qtbot.waitSignal(dialog.rejected, timeout=2_000):
        qtbot.keyClick(editor, Qt.Key.Key_Escape)


def test_a_disabled_accept_button_is_not_pressed(qtbot: QtBot) -> None:
    dialog, editor, _, buttons = _dialog(qtbot)
    save = buttons.button(QDialogButtonBox.StandardButton.Save)
    assert save is not None
    save.setEnabled(False)
    accepted: list[bool] = []
    dialog.accepted.connect(lambda: accepted.append(True))
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert accepted == []
    assert dialog.isVisible()
