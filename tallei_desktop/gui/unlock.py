"""Opening the store, asking for the passphrase in a dialog where no keyring holds the key.

:class:`Unlocker` tries to open the store off the Qt thread; when the key needs a passphrase it
asks with a non-modal :class:`PassphraseDialog` (``open()``, never ``exec()``), says so when one is
wrong, and tries again until the store opens or the person cancels.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from tallei_desktop.config import Settings
from tallei_desktop.core.errors import KeyUnavailable, KnownError, WrongKey
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.ops import Ops

__all__ = ["Opened", "PassphraseDialog", "Unlocker", "open_store"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Opened:
    service: MemoryService
    token: str  # the HTTP endpoint's bearer token


def open_store(settings: Settings, *, secrets: SecretStore | None = None) -> Opened:
    """Unlock and open the store, and read (or create) the HTTP token. Blocks; call off the Qt thread."""
    from tallei_desktop.core.keys import random_token
    from tallei_desktop.factory import build_secrets, build_service
    from tallei_desktop.mcp_server.entry import TOKEN_SECRET

    secrets = secrets or build_secrets(settings)
    service = build_service(settings, secrets=secrets)
    try:
        token = secrets.secret(TOKEN_SECRET, factory=random_token)
    except BaseException:
        service.close()
        raise
    return Opened(service, token)


class PassphraseDialog(QDialog):
    """Asks for the passphrase (twice, when it creates a new one)."""

    def __init__(self, *, create: bool, problem: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._create = create
        self.setWindowTitle("Unlock Tallei")
        text = (
            "No keyring is available to hold the key to your memories, so a passphrase guards it. "
            "Choose one you will remember: without it your memories cannot be opened."
            if create
            else "Your memories are locked with a passphrase. Type it to open them."
        )
        intro = QLabel(text, self)
        intro.setWordWrap(True)
        self.problem = QLabel(problem or "", self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("QLabel { color: palette(link); font-weight: bold; }")
        self.problem.setVisible(bool(problem))
        self.problem.setAccessibleName("Problem")
        self.passphrase = QLineEdit(self)
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setAccessibleName("Passphrase")
        self.repeat = QLineEdit(self)
        self.repeat.setEchoMode(QLineEdit.EchoMode.Password)
        self.repeat.setAccessibleName("Passphrase again")
        self.repeat.setVisible(create)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self._check)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.problem)
        label = QLabel("&Passphrase:", self)
        label.setBuddy(self.passphrase)
        layout.addWidget(label)
        layout.addWidget(self.passphrase)
        if create:
            again = QLabel("&Again:", self)
            again.setBuddy(self.repeat)
            layout.addWidget(again)
            layout.addWidget(self.repeat)
        layout.addWidget(self.buttons)

    def value(self) -> str:
        return self.passphrase.text()

    def _check(self) -> None:
        if not self.value():
            self._say("Type a passphrase first.")
        elif self._create and self.repeat.text() != self.value():
            self._say("The two passphrases differ; type the same one twice.")
        else:
            self.accept()

    def _say(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()


class Unlocker(QObject):
    """Open the store, asking for a passphrase as often as needed. Emits exactly one of the signals."""

    opened = Signal(object)  # Opened
    cancelled = Signal()
    failed = Signal(str)  # a KnownError that no passphrase can fix
    #: A passphrase dialog is showing (for tests and the first-run flow).
    asking = Signal(object)

    def __init__(
        self,
        settings: Settings,
        ops: Ops,
        *,
        opener: Callable[[Settings], Opened] = open_store,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._ops = ops
        self._opener = opener
        self.dialog: PassphraseDialog | None = None

    def start(self) -> None:
        self._try(self._settings)

    def _try(self, settings: Settings) -> None:
        self._ops.run(
            lambda: self._opener(settings), self.opened.emit, lambda exc: self._refused(settings, exc)
        )

    def _refused(self, settings: Settings, error: Exception) -> None:
        if isinstance(error, WrongKey) and settings.passphrase:
            self._ask("That passphrase does not open your memories. Try again.")
        elif isinstance(error, KeyUnavailable) and not settings.passphrase:
            self._ask(None)
        elif isinstance(error, KnownError):
            self.failed.emit(str(error))
        else:
            log.error("Opening the memory store failed", exc_info=error)
            self.failed.emit(
                f"Tallei could not open your memories because of an internal error ({type(error).__name__}); the log has the details."
            )

    def _ask(self, problem: str | None) -> None:
        create = not self._settings.db_path.exists()
        dialog = PassphraseDialog(create=create, problem=problem)
        dialog.accepted.connect(lambda: self._try(replace(self._settings, passphrase=dialog.value())))
        dialog.rejected.connect(self.cancelled.emit)
        self.dialog = dialog
        dialog.open()
        self.asking.emit(dialog)
