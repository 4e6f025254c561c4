"""The main window: a list of pages on the left, the page on the right, messages on top and below."""

from __future__ import annotations

import enum

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMainWindow,
    QPushButton,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.app.clients import connect as connect_client
from tallei_desktop.app.clients import detected_clients
from tallei_desktop.config import Settings
from tallei_desktop.core import Conflict, Memory, ModelState, ModelStatus, SecretStore
from tallei_desktop.gui.backend import Backend, View, view_holding
from tallei_desktop.gui.icons import app_icon
from tallei_desktop.gui.model_status import ModelStatusBox, ModelWatch
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.assistants import AssistantsPage
from tallei_desktop.gui.pages.conflicts import ConflictsPage
from tallei_desktop.gui.pages.memories import MemoriesPage
from tallei_desktop.gui.pages.recall import RecallPage
from tallei_desktop.gui.pages.settings import SettingsPage

__all__ = ["MainWindow", "PageName"]


class PageName(enum.StrEnum):
    PREFERENCES = "preferences"
    LONG_TERM = "long_term"
    RECENT = "recent"
    ARCHIVED = "archived"
    FORGOTTEN = "forgotten"
    REPLACED = "replaced"
    CONFLICTS = "conflicts"
    RECALL = "recall"
    ASSISTANTS = "assistants"
    SETTINGS = "settings"


_TITLES = {
    PageName.CONFLICTS: "Conflicts",
    PageName.RECALL: "Recall preview",
    PageName.ASSISTANTS: "Assistants",
    PageName.SETTINGS: "Settings",
}


class MainWindow(QMainWindow):
    #: The window was closed while there is no tray to bring it back from: the app should quit.
    quit_requested = Signal()
    #: The model's state was shown (after each change the model announced).
    model_shown = Signal()

    def __init__(
        self,
        settings: Settings,
        backend: Backend,
        ops: Ops,
        *,
        has_tray: bool,
        secrets: SecretStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.has_tray = has_tray
        self.setWindowTitle("Tallei")
        self.setWindowIcon(app_icon())
        self.resize(1100, 680)
        self.memory_pages = {View(v): MemoriesPage(View(v), backend, ops, self) for v in View}
        for memory_page in self.memory_pages.values():
            memory_page.open_conflict.connect(self.show_conflict)
            memory_page.open_memory.connect(self.show_memory)
        self.conflicts_page = ConflictsPage(backend, ops, self)
        self.recall_page = RecallPage(backend, ops, self)
        self.assistants_page = AssistantsPage(
            backend,
            ops,
            connect=lambda client: connect_client(settings, client),
            detect=detected_clients,
            settings=settings,
            parent=self,
        )
        self.settings_page = SettingsPage(settings, backend, ops, secrets=secrets, parent=self)
        pages: dict[PageName, QWidget] = {PageName(v.value): p for v, p in self.memory_pages.items()}
        pages[PageName.CONFLICTS] = self.conflicts_page
        pages[PageName.RECALL] = self.recall_page
        pages[PageName.ASSISTANTS] = self.assistants_page
        pages[PageName.SETTINGS] = self.settings_page
        self._order = list(pages)

        self.nav = QListWidget(self)
        self.nav.setAccessibleName("Pages")
        self.stack = QStackedWidget(self)
        for name, page in pages.items():
            self.nav.addItem(_TITLES.get(name) or View(name.value).label)
            self.stack.addWidget(page)
        self.nav.setFixedWidth(170)
        self.nav.setSpacing(3)
        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)

        # The notices on top: one compact bar the person can close; a closed notice stays away
        # until its text changes.
        self.notice_bar = QFrame(self)
        self.notice_bar.setObjectName("notice")
        self.notice_bar.setStyleSheet(
            "QFrame#notice { background: palette(highlight); }"
            "QFrame#notice QLabel, QFrame#notice QToolButton { color: palette(highlighted-text); }"
        )
        self.banner = QLabel(self.notice_bar)
        self.banner.setWordWrap(True)
        self.banner.setAccessibleName("Notice")
        self.notice_close = QToolButton(self.notice_bar)
        self.notice_close.setText("✕")
        self.notice_close.setAutoRaise(True)
        self.notice_close.setToolTip("Hide this notice")
        self.notice_close.setAccessibleName("Hide the notice")
        self.notice_close.clicked.connect(self.dismiss_notices)
        notice_row = QHBoxLayout(self.notice_bar)
        notice_row.setContentsMargins(8, 3, 3, 3)
        notice_row.addWidget(self.banner, 1)
        notice_row.addWidget(self.notice_close, 0, Qt.AlignmentFlag.AlignTop)
        self.banner.hide()
        self.notice_bar.hide()
        self._dismissed: dict[str, str] = {}
        self.conflict_banner = QPushButton(self)
        self.conflict_banner.setAccessibleName("Open the conflicts")
        self.conflict_banner.clicked.connect(lambda: self.show_page(PageName.CONFLICTS))
        self.conflict_banner.hide()
        self._notices: dict[str, str] = {}
        self._backend = backend
        self._ops = ops
        self.model_box = ModelStatusBox(self)
        self.model_box.hide()
        self.model_box.dismissed.connect(self._dismiss_model)
        self.model_box.choose_folder.connect(self._choose_model_folder)
        self.model_watch: ModelWatch | None = None
        self._model_always = False
        self._model_dismissed: ModelState | None = None

        body = QHBoxLayout()
        body.addWidget(self.nav)
        body.addWidget(self.stack, 1)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setSpacing(4)
        layout.addWidget(self.notice_bar)
        layout.addWidget(self.conflict_banner)
        layout.addWidget(self.model_box)
        layout.addLayout(body, 1)
        self.setCentralWidget(central)
        ops.message.connect(lambda text: self.statusBar().showMessage(text, 15_000))
        for row in range(min(10, len(self._order))):
            shortcut = QShortcut(QKeySequence(f"Ctrl+{(row + 1) % 10}"), self)  # the tenth is Ctrl+0
            shortcut.activated.connect(lambda r=row: self.nav.setCurrentRow(r))
        self.nav.setCurrentRow(0)

    def show_page(self, name: PageName) -> None:
        self.nav.setCurrentRow(self._order.index(name))
        self.bring_forward()

    def show_conflict(self, conflict_id: str) -> None:
        self.conflicts_page.show_conflict(conflict_id)
        self.show_page(PageName.CONFLICTS)

    def show_memory(self, memory_id: str) -> None:
        """Open the page that lists ``memory_id`` as it is now and select it there."""
        backend = self._backend

        def landed(memory: Memory | None) -> None:
            view = view_holding(memory) if memory is not None else None
            if view is None:
                self._ops.message.emit(
                    "That memory is no longer listed: it was erased or folded into another."
                )
                return
            self.show_page(PageName(view.value))
            self.memory_pages[view].show_memory(memory_id)

        self._ops.run(lambda: backend.memory_or_none(memory_id), landed)

    def bring_forward(self) -> None:
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()

    def set_notice(self, key: str, text: str | None) -> None:
        """Show (or, with None, clear) a lasting notice on top of the window."""
        if text:
            self._notices[key] = text
        else:
            self._notices.pop(key, None)
        self._show_notices()

    def dismiss_notices(self) -> None:
        """Hide the notices shown now; one that changes its text later shows again."""
        self._dismissed.update(self._notices)
        self._show_notices()

    def _show_notices(self) -> None:
        shown = [text for key, text in self._notices.items() if self._dismissed.get(key) != text]
        self.banner.setText("\n".join(shown))
        self.banner.setVisible(bool(shown))
        self.notice_bar.setVisible(bool(shown))

    def follow_model(self, *, always: bool) -> ModelWatch:
        """Follow the embedding model's state. ``always`` (the first run) shows it throughout, with
        a progress bar while it downloads; otherwise it shows only while the model downloads or
        when semantic search is off."""
        self._model_always = always
        watch = ModelWatch(self._backend, self._ops, self)
        watch.changed.connect(self.show_model)
        self.model_watch = watch
        watch.start()
        return watch

    def stop_following_model(self) -> None:
        if self.model_watch is not None:
            self.model_watch.stop()

    def show_model(self, status: ModelStatus) -> None:
        self.model_box.show_status(status)
        wanted = self._model_always or status.state in (ModelState.DOWNLOADING, ModelState.UNAVAILABLE)
        if self._model_dismissed is not None and self._model_dismissed is not status.state:
            self._model_dismissed = None  # a new state is news again
        self.model_box.setVisible(wanted and self._model_dismissed is None)
        self.model_shown.emit()

    def _dismiss_model(self) -> None:
        status = self.model_box.status
        self._model_dismissed = status.state if status is not None else None
        self.model_box.hide()

    def _choose_model_folder(self) -> None:
        self.show_page(PageName.SETTINGS)
        self.settings_page.ask_model_folder()

    def store_changed(self) -> None:
        for page in self.memory_pages.values():
            page.mark_dirty()
        if self.assistants_page.isVisible():
            self.assistants_page.reload()

    def set_conflicts(self, conflicts: list[Conflict]) -> None:
        self.conflicts_page.set_conflicts(conflicts)
        n = len(conflicts)
        item = self.nav.item(self._order.index(PageName.CONFLICTS))
        item.setText(f"Conflicts ({n})" if n else "Conflicts")
        # With a tray, the tray announces conflicts; without one, the window does.
        self.conflict_banner.setText(
            f"{n} conflict{'s' if n != 1 else ''} between your assistants wait{'s' if n == 1 else ''} for you. "
            "Open them…"
        )
        self.conflict_banner.setVisible(bool(n) and not self.has_tray)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.has_tray:
            event.ignore()
            self.hide()
        else:
            event.accept()
            self.quit_requested.emit()
