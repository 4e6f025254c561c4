"""Settings: the data folder and key, the passphrase, the model's state, recall and the HTTP port.

Changes are written to config.toml (atomically, keeping what else it holds) and apply the next time
Tallei starts; the passphrase is changed in the key file at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
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
    backups_dir,
    list_backups,
)
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops

__all__ = ["ChangePassphraseDialog", "SettingsPage"]

_MODEL_POLL_MS = 1_000


def _spin(low: int, high: int, value: int, name: str, suffix: str, parent: QWidget) -> QSpinBox:
    box = QSpinBox(parent)
    box.setRange(low, high)
    box.setValue(value)
    box.setSuffix(suffix)
    box.setAccessibleName(name)
    box.setGroupSeparatorShown(True)
    return box


class ChangePassphraseDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Change passphrase")
        self.old = QLineEdit(self)
        self.new = QLineEdit(self)
        self.again = QLineEdit(self)
        form = QFormLayout()
        for field, label in (
            (self.old, "&Current passphrase:"),
            (self.new, "&New passphrase:"),
            (self.again, "New, &again:"),
        ):
            field.setEchoMode(QLineEdit.EchoMode.Password)
            field.setAccessibleName(label.replace("&", "").rstrip(":"))
            form.addRow(label, field)
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self._check)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)

    def say(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()

    def _check(self) -> None:
        if not self.new.text():
            self.say("Type a new passphrase.")
        elif self.new.text() != self.again.text():
            self.say("The two new passphrases differ; type the same one twice.")
        else:
            self.accept()


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

        store = QGroupBox("Your memories", self)
        store_form = QFormLayout(store)
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

        backups = QGroupBox("Backups", self)
        backup_row = QHBoxLayout(backups)
        self.backup_folder = backups_dir(settings.db_path)
        self.backups_state = QLabel(backups)
        self.backups_state.setWordWrap(True)
        self.backups_state.setAccessibleName("Backups")
        self.backup_button = QPushButton("Back &up now", backups)
        self.backup_button.setAccessibleName("Back up now")
        self.backup_button.clicked.connect(self.back_up)
        backup_row.addWidget(self.backups_state, 1)
        backup_row.addWidget(self.backup_button)

        model = QGroupBox("Semantic search", self)
        model_layout = QVBoxLayout(model)
        self.model_state = QLabel(model)
        self.model_state.setWordWrap(True)
        self.model_state.setAccessibleName("Embedding model state")
        self.model_progress = QProgressBar(model)
        self.model_progress.setRange(0, 1000)
        self.model_progress.setAccessibleName("Model download progress")
        self.model_progress.hide()
        model_layout.addWidget(self.model_state)
        model_layout.addWidget(self.model_progress)

        prefs = QGroupBox("Recall and the app (apply at the next start)", self)
        form = QFormLayout(prefs)
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
        self.backup_keep = _spin(1, 1000, settings.backup_keep, "Backups kept", " backups", prefs)
        self.notify_conflicts = QCheckBox("&Notify me when assistants disagree", prefs)
        self.notify_conflicts.setChecked(settings.notify_conflicts)
        self.start_at_login = QCheckBox("Start Tallei when I &log in", prefs)
        self.start_at_login.setChecked(settings.start_at_login)
        form.addRow("Recent memories:", self.short_term_days)
        form.addRow("Preferences budget:", self.preference_budget)
        form.addRow("Long-term budget:", self.long_term_budget)
        form.addRow("Recent budget:", self.short_term_budget)
        form.addRow("HTTP port:", self.http_port)
        form.addRow("Keep:", self.backup_keep)
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
        form.addRow(save_row)

        layout = QVBoxLayout(self)
        layout.addWidget(store)
        layout.addWidget(backups)
        layout.addWidget(model)
        layout.addWidget(prefs)
        layout.addStretch(1)

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
        dialog.accepted.connect(lambda: self.change(dialog.old.text(), dialog.new.text()))
        self.passphrase_dialog = dialog
        dialog.open()

    def change(self, old: str, new: str) -> None:
        secrets = self._secrets
        if secrets is None:
            return

        def failed(error: Exception) -> None:
            if isinstance(error, KnownError):
                self._say(f"The passphrase was not changed: {error}")
            else:
                self._ops.report(error)

        self._ops.run(
            lambda: secrets.change_passphrase(old, new),
            lambda _: self._say("The passphrase is changed."),
            failed,
        )

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
            self._say(f"Backed up to {path}.")
            self.refresh_backups()

        def failed(error: Exception) -> None:
            self.backup_button.setEnabled(True)
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
            self._say("Nothing to save: the settings are as Tallei started with them.")
            return

        def write() -> object:
            path = self._save(changes)
            if "start_at_login" in changes:
                apply_start_at_login(bool(changes["start_at_login"]), config_home=self._config_home)
            return path

        def done(path: object) -> None:
            self._settings = replace(self._settings, **changes)  # type: ignore[arg-type]
            self._say(f"Saved to {path}. The changes apply the next time Tallei starts.")

        def failed(error: Exception) -> None:
            if isinstance(error, KnownError):
                self._say(f"Not saved: {error}")
            else:
                self._ops.report(error)

        self._ops.run(write, done, failed)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.saved.emit(text)
