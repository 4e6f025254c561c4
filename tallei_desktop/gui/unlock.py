"""Opening the store: the passphrase asked in a dialog, and on first run where to keep the key.

:class:`Unlocker` asks the core what opening needs (``unlock_need``), off the Qt thread. A store
guarded by a passphrase gets a non-modal :class:`PassphraseDialog` (``open()``, never ``exec()``)
that says so when a passphrase is wrong and asks again; a first run lets the person choose the OS
keyring (where there is one) or a passphrase typed twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLayout,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.config import Settings
from tallei_desktop.core import (
    MIN_PASSPHRASE_LENGTH,
    KeyMethod,
    KnownError,
    MemoryService,
    SecretStore,
    WrongKey,
)
from tallei_desktop.gui.dialogs import keyboard_friendly
from tallei_desktop.gui.ops import Ops

__all__ = ["Opened", "PassphraseDialog", "Unlocker", "open_store", "passphrase_hint", "passphrase_problem"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Opened:
    service: MemoryService
    token: str  # the HTTP endpoint's bearer token
    secrets: SecretStore  # where the key lives, unlocked (for changing the passphrase)


def open_store(settings: Settings, secrets: SecretStore, passphrase: str | None = None) -> Opened:
    """Open the store with ``secrets`` (and a typed ``passphrase``), and read or create the HTTP token.

    Blocks; call it off the Qt thread. Raises :class:`WrongKey` for a wrong passphrase.
    """
    from tallei_desktop.core import TOKEN_SECRET, random_token
    from tallei_desktop.factory import build_service

    unlocked = secrets.with_passphrase(passphrase) if passphrase else secrets
    service = build_service(settings, secrets=unlocked)
    try:
        token = unlocked.secret(TOKEN_SECRET, factory=random_token)
    except BaseException:
        service.close()
        raise
    return Opened(service, token, unlocked)


def passphrase_problem(passphrase: str) -> str | None:
    """Why ``passphrase`` cannot be chosen as a new one, or None when it can."""
    if not passphrase:
        return "Type a passphrase first."
    if len(passphrase) < MIN_PASSPHRASE_LENGTH:
        return f"The passphrase is too short: use at least {MIN_PASSPHRASE_LENGTH} characters."
    return None


def passphrase_hint(passphrase: str) -> str:
    """A short line on how strong a new passphrase is, shown while it is typed."""
    more = MIN_PASSPHRASE_LENGTH - len(passphrase)
    if more > 0:
        return f"At least {MIN_PASSPHRASE_LENGTH} characters: {more} more to go."
    if len(passphrase) < 16 or " " not in passphrase.strip():
        return "Long enough. A few unrelated words make it stronger still."
    return "Strong: a long passphrase of several words."


class PassphraseDialog(QDialog):
    """Asks for the passphrase; on first run (``create``) also where to keep the key."""

    def __init__(
        self,
        *,
        create: bool,
        keyring: bool = False,
        problem: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._create = create
        #: First run: the key is being created, not opened.
        self.creating = create
        self.setWindowTitle("Set up Tallei" if create else "Unlock Tallei")
        if not create:
            text = "Your memories are locked with a passphrase. Type it to open them."
        elif keyring:
            text = "Your memories are encrypted with a key. Choose where to keep it."
        else:
            text = (
                "No keyring is available to hold the key to your memories, so a passphrase guards it. "
                "Choose one you will remember: without it your memories cannot be opened."
            )
        intro = QLabel(text, self)
        intro.setWordWrap(True)
        self.problem = QLabel(problem or "", self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("QLabel { font-weight: bold; }")
        self.problem.setVisible(bool(problem))
        self.problem.setAccessibleName("Problem")
        self.use_keyring = QRadioButton("In the system &keyring (opens by itself when you log in)", self)
        self.use_passphrase = QRadioButton("Under a &passphrase (typed each time Tallei starts)", self)
        choice = QButtonGroup(self)
        choice.addButton(self.use_keyring)
        choice.addButton(self.use_passphrase)
        self.use_keyring.setChecked(keyring)
        self.use_passphrase.setChecked(not keyring)
        self.passphrase = QLineEdit(self)
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setAccessibleName("Passphrase")
        self.repeat = QLineEdit(self)
        self.repeat.setEchoMode(QLineEdit.EchoMode.Password)
        self.repeat.setAccessibleName("Passphrase again")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self._check)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.problem)
        if create and keyring:
            layout.addWidget(self.use_keyring)
            layout.addWidget(self.use_passphrase)
        else:
            self.use_keyring.hide()
            self.use_passphrase.hide()
        self.passphrase_label = QLabel("Pass&phrase:", self)
        self.passphrase_label.setBuddy(self.passphrase)
        layout.addWidget(self.passphrase_label)
        layout.addWidget(self.passphrase)
        self.repeat_label = QLabel("&Again:", self)
        self.repeat_label.setBuddy(self.repeat)
        layout.addWidget(self.repeat_label)
        layout.addWidget(self.repeat)
        layout.addWidget(self.buttons)
        self.hint = QLabel(passphrase_hint(""), self)
        self.hint.setWordWrap(True)
        self.hint.setAccessibleName("Passphrase strength")
        self.passphrase.textChanged.connect(lambda text: self.hint.setText(passphrase_hint(text)))
        layout.insertWidget(layout.indexOf(self.repeat_label), self.hint)
        # The dialog grows when a problem line appears instead of squeezing the text above it.
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        intro.setMinimumWidth(420)  # the layout's minimum, which it keeps as the dialog's
        self.use_keyring.toggled.connect(self._show_fields)
        self._show_fields()
        keyboard_friendly(self, self.buttons)

    @property
    def method(self) -> KeyMethod:
        return KeyMethod.KEYRING if self.use_keyring.isChecked() else KeyMethod.PASSPHRASE

    def value(self) -> str:
        return self.passphrase.text()

    def _show_fields(self) -> None:
        typed = self.method is KeyMethod.PASSPHRASE
        for w in (self.passphrase_label, self.passphrase):
            w.setVisible(typed)
        for w in (self.repeat_label, self.repeat, self.hint):
            w.setVisible(typed and self._create)

    def _check(self) -> None:
        if self.method is KeyMethod.KEYRING:
            self.accept()
        elif not self.value():
            self._say("Type a passphrase first.")
        elif self._create and (problem := passphrase_problem(self.value())):
            self._say(problem)
        elif self._create and self.repeat.text() != self.value():
            self._say("The two passphrases differ; type the same one twice.")
        else:
            self.accept()

    def _say(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()
        self.adjustSize()


class Unlocker(QObject):
    """Open the store, asking the person what it needs. Emits exactly one of the first three signals."""

    opened = Signal(object)  # Opened
    cancelled = Signal()
    failed = Signal(str)  # a KnownError that no passphrase can fix
    #: A dialog is showing (for tests).
    asking = Signal(object)

    def __init__(
        self,
        settings: Settings,
        ops: Ops,
        *,
        secrets: SecretStore | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        from tallei_desktop.factory import build_secrets

        self._settings = settings
        self._ops = ops
        self._secrets = secrets or build_secrets(settings)
        self.dialog: PassphraseDialog | None = None
        #: The store did not exist: this run created it (the app then offers to connect assistants).
        self.first_run = not settings.db_path.exists()

    def start(self) -> None:
        from tallei_desktop.factory import unlock_need

        def need() -> tuple[str, bool]:
            what = unlock_need(self._settings, secrets=self._secrets)
            return what, what == "create" and self._secrets.keyring_available()

        self._ops.run(need, self._needs, self._refused)

    def _needs(self, answer: tuple[str, bool]) -> None:
        what, keyring = answer
        if what == "ready" or (what == "create" and self._settings.passphrase):
            # A passphrase given in the settings (TALLEI_PASSPHRASE) is the person's choice already.
            self._open(None)
        else:
            self._ask(create=what == "create", keyring=keyring, problem=None)

    def _open(self, passphrase: str | None) -> None:
        self._ops.run(
            lambda: open_store(self._settings, self._secrets, passphrase), self.opened.emit, self._refused
        )

    def _create(self, method: KeyMethod, passphrase: str | None) -> None:
        def create() -> Opened:
            self._secrets.create_store_key(method, passphrase if method is KeyMethod.PASSPHRASE else None)
            return open_store(self._settings, self._secrets)

        self._ops.run(create, self.opened.emit, self._refused)

    def _refused(self, error: Exception) -> None:
        if isinstance(error, WrongKey):
            self._ask(
                create=False, keyring=False, problem="That passphrase does not open your memories. Try again."
            )
        elif isinstance(error, KnownError):
            self.failed.emit(str(error))
        else:
            log.error("Opening the memory store failed", exc_info=error)
            self.failed.emit(
                "Tallei could not open your memories because of an internal error "
                f"({type(error).__name__}); the log has the details."
            )

    def _ask(self, *, create: bool, keyring: bool, problem: str | None) -> None:
        dialog = PassphraseDialog(create=create, keyring=keyring, problem=problem)
        if create:
            dialog.accepted.connect(lambda: self._create(dialog.method, dialog.value()))
        else:
            dialog.accepted.connect(lambda: self._open(dialog.value()))
        dialog.rejected.connect(self.cancelled.emit)
        self.dialog = dialog
        dialog.open()
        self.asking.emit(dialog)
