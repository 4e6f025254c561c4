"""What every dialog of the app does with the keyboard: Ctrl+Enter accepts, Tab moves, Esc cancels.

A ``QPlainTextEdit`` takes Tab and Return for itself, so a dialog whose main field is one could
only be saved with the mouse. :func:`keyboard_friendly` makes Tab move the focus in every text box
of the dialog and makes Ctrl+Enter (and Ctrl+S where the dialog saves) press its accepting button.
Esc already rejects a ``QDialog``.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QTextEdit, QWidget

__all__ = ["keyboard_friendly"]

_ACCEPTING = (QDialogButtonBox.ButtonRole.AcceptRole, QDialogButtonBox.ButtonRole.YesRole)


class _AcceptKeys(QObject):
    """Watches the dialog and its widgets for Ctrl+Enter (and Ctrl+S) before a text box eats them."""

    def __init__(self, dialog: QDialog, buttons: QDialogButtonBox | None) -> None:
        super().__init__(dialog)
        self._dialog = dialog
        self._buttons = buttons
        self._save = buttons is not None and buttons.button(QDialogButtonBox.StandardButton.Save) is not None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride):
            return False
        if not isinstance(event, QKeyEvent) or not self._is_accept(event):
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # keep the key from any shortcut, so it arrives as a press
        else:
            self.accept()
        return True

    def _is_accept(self, event: QKeyEvent) -> bool:
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if mods != Qt.KeyboardModifier.ControlModifier:
            return False
        key = event.key()
        return key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) or (self._save and key == Qt.Key.Key_S)

    def accept(self) -> None:
        if self._buttons is None:
            self._dialog.accept()
            return
        for button in self._buttons.buttons():
            if self._buttons.buttonRole(button) in _ACCEPTING:
                # Pressing the button keeps the dialog's own checks; a disabled one means "not yet".
                if button.isEnabled():
                    button.click()
                return
        self._dialog.accept()


def keyboard_friendly(dialog: QDialog, buttons: QDialogButtonBox | None = None) -> QDialog:
    """Give ``dialog`` the keyboard behaviour every dialog of the app shares; returns it.

    Call it once the dialog's widgets exist. ``buttons`` is the dialog's button box; Ctrl+Enter
    presses its accepting button, or calls ``accept()`` when there is none.
    """
    for editor in dialog.findChildren(QPlainTextEdit):
        editor.setTabChangesFocus(True)
    for rich in dialog.findChildren(QTextEdit):
        rich.setTabChangesFocus(True)
    keys = _AcceptKeys(dialog, buttons)
    dialog.installEventFilter(keys)
    for widget in dialog.findChildren(QWidget):
        widget.installEventFilter(keys)
    return dialog
