"""Settings: the data folder and key, the passphrase, the model's state, recall and the HTTP port.

Changes are written to config.toml (atomically, keeping what else it holds) and apply the next time
Tallei starts; the passphrase is changed in the key file at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.app.login_items import apply_start_at_login
from tallei_desktop.config import Settings, save_settings
from tallei_desktop.core import (
    BackupInfo,
    KeyMethod,
    KnownError,
    ModelState,
    ModelStatus,
    SecretStore,
    WrongKey,
    backups_dir,
    list_backups,
)
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.dialogs import keyboard_friendly
from tallei_desktop.gui.model_status import open_folder_dialog
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.unlock import passphrase_hint, passphrase_problem

__all__ = ["ChangePassphraseDialog", "SettingsPage"]

_MODEL_POLL_MS = 1_000
#: Said in the Key box once the passphrase is changed.
PASSPHRASE_CHANGED = (
    "The passphrase is changed. Assistants already running keep working; wherever you set "
    "TALLEI_PASSPHRASE by hand, put the new passphrase there too."
)
_WRONG_CURRENT = "That is not the current passphrase, so nothing was changed. Type it again."


def _spin(low: int, high: int, value: int, name: str, suffix: str, parent: QWidget) -> QSpinBox:
    box = QSpinBox(parent)
    box.setRange(low, high)
    box.setValue(value)
    box.setSuffix(suffix)
    box.setAccessibleName(name)
    box.setGroupSeparatorShown(True)
    return box


def _message(name: str, parent: QWidget) -> QLabel:
    """A line saying what the last action in its box did; hidden until there is something to say."""
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setAccessibleName(name)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.hide()
    return label


class ChangePassphraseDialog(QDialog):
    """Asks for the current passphrase and a new one typed twice.

    OK checks what can be checked here, then emits :attr:`submitted` and shows a busy state; the
    dialog stays open until :meth:`changed` closes it or :meth:`refused` says why not, so nothing
    has to be typed again.
    """

    #: (current, new): the typed passphrases passed the dialog's own checks.
    submitted = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Change passphrase")
        intro = QLabel("Type the passphrase that opens your memories now, then the new one twice.", self)
        intro.setWordWrap(True)
        intro.setMinimumWidth(440)  # room for the title and the problem lines; the layout keeps it
        self.old = QLineEdit(self)
        self.new = QLineEdit(self)
        self.again = QLineEdit(self)
        form = QFormLayout()
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(8)
        for field, label in (
            (self.old, "&Current passphrase:"),
            (self.new, "&New passphrase:"),
            (self.again, "New, &again:"),
        ):
            field.setEchoMode(QLineEdit.EchoMode.Password)
            field.setAccessibleName(label.replace("&", "").rstrip(":"))
            form.addRow(label, field)
        self.hint = QLabel(passphrase_hint(""), self)  # one short line: unwrapped, the form sizes it
        self.hint.setAccessibleName("Passphrase strength")
        self.new.textChanged.connect(lambda text: self.hint.setText(passphrase_hint(text)))
        form.insertRow(2, "", self.hint)
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("QLabel { font-weight: bold; }")
        self.problem.setAccessibleName("Problem")
        self.problem.hide()
        self.busy = QLabel("Checking the current passphrase and changing it…", self)
        self.busy.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("&Change")
        self.buttons.accepted.connect(self._check)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.busy)
        layout.addWidget(self.buttons)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        keyboard_friendly(self, self.buttons)

    def say(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()
        self.adjustSize()

    def set_busy(self, busy: bool) -> None:
        for widget in (self.old, self.new, self.again, self.ok):
            widget.setEnabled(not busy)
        self.busy.setVisible(busy)
        if busy:
            self.problem.hide()

    def refused(self, text: str) -> None:
        """The change failed: say why and let the person correct what they typed."""
        self.set_busy(False)
        self.say(text)
        self.old.selectAll()
        self.old.setFocus()

    def changed(self) -> None:
        self.set_busy(False)
        self.accept()

    def _check(self) -> None:
        if not self.ok.isEnabled():
            return
        if not self.old.text():
            self.say("Type the current passphrase.")
        elif problem := passphrase_problem(self.new.text()):
            self.say(problem)
        elif self.new.text() != self.again.text():
            self.say("The two new passphrases differ; type the same one twice.")
        else:
            self.set_busy(True)
            self.submitted.emit(self.old.text(), self.new.text())


class SettingsPage(QWidget):
    #: A sentence saying what the last change did.
    saved = Signal(str)

    def __init__(
        self,
        settings: Settings,
        backend: Backend,
        ops: Ops,
        *,
        secrets: SecretStore | None = None,
        save: Callable[[dict[str, object]], object] = save_settings,
        config_home: Path | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        self._secrets = secrets
        self._save = save
        self._config_home = config_home  # the XDG config folder, for the autostart entry
        self._settings = settings

        content = QWidget(self)
        store = QGroupBox("Your memories", content)
        store_layout = QVBoxLayout(store)
        store_form = QFormLayout()
        store_layout.addLayout(store_form)
        folder = QLabel(str(settings.data_dir), store)
        folder.setAccessibleName("Data folder")
        folder.setWordWrap(True)
        store_form.addRow("Data folder:", folder)
        self.key_source = QLabel(backend.service.db.key_source, store)
        self.key_source.setWordWrap(True)
        self.key_source.setAccessibleName("Key source")
        self.change_passphrase = QPushButton("Change &passphrase…", store)
        self.change_passphrase.setAccessibleName("Change the passphrase")
        self.change_passphrase.clicked.connect(self.ask_passphrase)
        self.change_passphrase.setVisible(False)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_source, 1)
        key_row.addWidget(self.change_passphrase)
        store_form.addRow("Key:", key_row)
        self.key_message = _message("What changing the passphrase did", store)
        store_layout.addWidget(self.key_message)

        backups = QGroupBox("Backups", content)
        backups_layout = QVBoxLayout(backups)
        backup_row = QHBoxLayout()
        self.backup_folder = backups_dir(settings.db_path)
        self.backups_state = QLabel(backups)
        self.backups_state.setWordWrap(True)
        self.backups_state.setAccessibleName("Backups")
        self.backup_button = QPushButton("Back &up now", backups)
        self.backup_button.setAccessibleName("Back up now")
        self.backup_button.clicked.connect(self.back_up)
        backup_row.addWidget(self.backups_state, 1)
        backup_row.addWidget(self.backup_button)
        backups_layout.addLayout(backup_row)
        self.backup_keep = _spin(1, 1000, settings.backup_keep, "Backups kept", " backups", backups)
        keep_form = QFormLayout()
        keep_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        keep_form.addRow("&Keep:", self.backup_keep)
        backups_layout.addLayout(keep_form)
        self.backup_message = _message("What backing up did", backups)
        backups_layout.addWidget(self.backup_message)

        model = QGroupBox("Semantic search", content)
        model_layout = QVBoxLayout(model)
        self.model_state = QLabel(model)
        self.model_state.setWordWrap(True)
        self.model_state.setAccessibleName("Embedding model state")
        self.model_progress = QProgressBar(model)
        self.model_progress.setRange(0, 1000)
        self.model_progress.setAccessibleName("Model download progress")
        self.model_progress.hide()
        self.model_folder = QLabel(model)
        self.model_folder.setWordWrap(True)
        self.model_folder.setAccessibleName("Model folder")
        self.choose_model = QPushButton("Choose &folder…", model)
        self.choose_model.setAccessibleName("Choose the model folder")
        self.choose_model.clicked.connect(self.ask_model_folder)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.model_folder, 1)
        folder_row.addWidget(self.choose_model)
        self.model_message = _message("What choosing the model folder did", model)
        model_layout.addWidget(self.model_state)
        model_layout.addWidget(self.model_progress)
        model_layout.addLayout(folder_row)
        model_layout.addWidget(self.model_message)
        self._show_model_folder(settings.model_dir)

        prefs = QGroupBox("Recall and the app (apply at the next start)", content)
        prefs_layout = QVBoxLayout(prefs)
        form = QFormLayout()
        prefs_layout.addLayout(form)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.short_term_days = _spin(
            1, 3650, settings.short_term_days, "Recent memories window", " days", prefs
        )
        self.preference_budget = _spin(
            100, 100_000, settings.preference_budget, "Preferences budget", " tokens", prefs
        )
        self.long_term_budget = _spin(
            100, 100_000, settings.long_term_budget, "Long-term budget", " tokens", prefs
        )
        self.short_term_budget = _spin(
            100, 100_000, settings.short_term_budget, "Recent budget", " tokens", prefs
        )
        self.http_port = _spin(1, 65535, settings.http_port, "HTTP port", "", prefs)
        self.http_port.setGroupSeparatorShown(False)
        self.notify_conflicts = QCheckBox("&Notify me when assistants disagree", prefs)
        self.notify_conflicts.setChecked(settings.notify_conflicts)
        self.start_at_login = QCheckBox("Start Tallei when I &log in", prefs)
        self.start_at_login.setChecked(settings.start_at_login)
        form.addRow("Recent memories:", self.short_term_days)
        form.addRow("Preferences budget:", self.preference_budget)
        form.addRow("Long-term budget:", self.long_term_budget)
        form.addRow("Recent budget:", self.short_term_budget)
        form.addRow("HTTP port:", self.http_port)
        form.addRow(self.notify_conflicts)
        form.addRow(self.start_at_login)
        self.save_button = QPushButton("&Save settings", prefs)
        self.save_button.setAccessibleName("Save settings")
        self.save_button.clicked.connect(self.save)
        self.status = QLabel(prefs)
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Settings status")
        save_row = QHBoxLayout()
        save_row.addWidget(self.status, 1)
        save_row.addWidget(self.save_button)
        # Outside the form, where a wrapped line gets the height it needs.
        prefs_layout.addLayout(save_row)

        column = QVBoxLayout(content)
        column.addWidget(store)
        column.addWidget(backups)
        column.addWidget(model)
        column.addWidget(prefs)
        column.addStretch(1)
        # At the window's smallest size the boxes scroll rather than squeeze their text.
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll_area)

        self._timer = QTimer(self)
        self._timer.setInterval(_MODEL_POLL_MS)
        self._timer.timeout.connect(self.refresh_model)
        if secrets is not None:
            self._ops.run(secrets.key_method, self._show_key_method)

    # -- key -----------------------------------------------------------------------------------

    def _show_key_method(self, method: KeyMethod | None) -> None:
        self.change_passphrase.setVisible(method is KeyMethod.PASSPHRASE)

    def ask_passphrase(self) -> None:
        dialog = ChangePassphraseDialog(self)
        dialog.submitted.connect(lambda old, new: self.change(old, new, dialog))
        self.passphrase_dialog = dialog
        dialog.open()

    def change(self, old: str, new: str, dialog: ChangePassphraseDialog | None = None) -> None:
        """Change the passphrase off the Qt thread; a refusal is said in ``dialog`` when there is one."""
        secrets = self._secrets
        if secrets is None:
            return

        def failed(error: Exception) -> None:
            if isinstance(error, WrongKey):
                text = _WRONG_CURRENT
            elif isinstance(error, KnownError):
                text = f"The passphrase was not changed: {error}"
            else:
                self._ops.report(error)
                text = "The passphrase was not changed because of an internal error; the log has the details."
            if dialog is not None:
                dialog.refused(text)
                self.saved.emit(text)
            else:
                self._say(self.key_message, text)

        def done(_: None) -> None:
            if dialog is not None:
                dialog.changed()
            self._say(self.key_message, PASSPHRASE_CHANGED)

        self._ops.run(lambda: secrets.change_passphrase(old, new), done, failed)

    # -- backups -------------------------------------------------------------------------------

    def refresh_backups(self) -> None:
        folder = self.backup_folder
        self._ops.run(lambda: list_backups(folder), self._show_backups)

    def _show_backups(self, found: list[BackupInfo]) -> None:
        if not found:
            self.backups_state.setText(f"No backups yet. They are kept in {self.backup_folder}.")
            return
        newest = found[0].taken_at.astimezone().strftime("%Y-%m-%d %H:%M")
        count = f"{len(found)} backup{'s' if len(found) != 1 else ''}"
        self.backups_state.setText(f"{count} in {self.backup_folder}; the newest from {newest}.")

    def back_up(self) -> None:
        service, folder = self._backend.service, self.backup_folder
        self.backup_button.setEnabled(False)

        def done(path: Path) -> None:
            self.backup_button.setEnabled(True)
            self._say(self.backup_message, f"Backed up to {path}.")
            self.refresh_backups()

        def failed(error: Exception) -> None:
            self.backup_button.setEnabled(True)
            if isinstance(error, KnownError):
                self._say(self.backup_message, f"No backup was made: {error}")
            else:
                self._ops.report(error)

        self._ops.run(lambda: service.backup_now(folder), done, failed)

    # -- model ---------------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh_backups()
        self.refresh_model()
        self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()
        super().hideEvent(event)

    def refresh_model(self) -> None:
        self._ops.run(self._backend.service.model_status, self.show_model)

    def show_model(self, status: ModelStatus) -> None:
        self.model_state.setText(status.detail)
        downloading = status.state is ModelState.DOWNLOADING
        self.model_progress.setVisible(downloading)
        if downloading and status.progress is not None:
            self.model_progress.setRange(0, 1000)
            self.model_progress.setValue(round(status.progress * 1000))
        elif downloading:
            self.model_progress.setRange(0, 0)  # busy: the size is not known

    def _show_model_folder(self, folder: Path | None) -> None:
        if folder is None:
            self.model_folder.setText("Model folder: none chosen; Tallei uses the model it downloads.")
        else:
            self.model_folder.setText(f"Model folder: {folder}")

    def ask_model_folder(self) -> None:
        """Ask for a folder holding the model's ONNX export (non-modal) and save it as ``model_dir``."""
        start = self._settings.model_dir or Path.home()
        self.model_dialog = open_folder_dialog(
            self, "Choose the folder of the embedding model", start, self.set_model_folder
        )

    def set_model_folder(self, folder: Path) -> None:
        """Write ``folder`` as the model folder (off the Qt thread); it applies at the next start."""
        save = self._save

        def done(_: object) -> None:
            self._settings = replace(self._settings, model_dir=folder)
            self._show_model_folder(folder)
            self._say(
                self.model_message,
                f"Saved. Tallei loads the model from {folder} the next time it starts; "
                "quit it from the tray and start it again to use it now.",
            )

        def failed(error: Exception) -> None:
            if isinstance(error, KnownError):
                self._say(self.model_message, f"The model folder was not saved: {error}")
            else:
                self._ops.report(error)

        self._ops.run(lambda: save({"model_dir": folder}), done, failed)

    # -- settings ------------------------------------------------------------------------------

    def changes(self) -> dict[str, object]:
        """The settings as the form shows them, where they differ from those Tallei started with."""
        shown: dict[str, object] = {
            "short_term_days": self.short_term_days.value(),
            "preference_budget": self.preference_budget.value(),
            "long_term_budget": self.long_term_budget.value(),
            "short_term_budget": self.short_term_budget.value(),
            "http_port": self.http_port.value(),
            "backup_keep": self.backup_keep.value(),
            "notify_conflicts": self.notify_conflicts.isChecked(),
            "start_at_login": self.start_at_login.isChecked(),
        }
        return {k: v for k, v in shown.items() if getattr(self._settings, k) != v}

    def save(self) -> None:
        changes = self.changes()
        if not changes:
            self._say(self.status, "Nothing to save: the settings are as Tallei started with them.")
            return

        def write() -> object:
            path = self._save(changes)
            if "start_at_login" in changes:
                apply_start_at_login(bool(changes["start_at_login"]), config_home=self._config_home)
            return path

        def done(path: object) -> None:
            self._settings = replace(self._settings, **changes)  # type: ignore[arg-type]
            self._say(self.status, f"Saved to {path}. The changes apply the next time Tallei starts.")

        def failed(error: Exception) -> None:
            if isinstance(error, KnownError):
                self._say(self.status, f"Not saved: {error}")
            else:
                self._ops.report(error)

        self._ops.run(write, done, failed)

    def _say(self, where: QLabel, text: str) -> None:
        """Say ``text`` in the box it is about."""
        where.setText(text)
        where.show()
        self.saved.emit(text)
