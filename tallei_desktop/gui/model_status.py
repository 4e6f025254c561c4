"""The embedding model's state for a person: a sentence and, while it downloads, a progress bar.

:class:`ModelWatch` follows the model through the embedder's ``subscribe`` (its callbacks run on
the loading thread; a queued signal brings each status to the Qt thread), or by asking the service
now and then where the embedder offers no subscription. :class:`ModelStatusBox` shows it, and says
plainly when semantic search is off and why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tallei_desktop.core import ModelState, ModelStatus
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.ops import Ops

__all__ = ["ModelStatusBox", "ModelWatch", "describe_model", "open_folder_dialog"]

#: How often a model without a subscription is asked about while it is not settled.
_POLL_MS = 500
_SETTLED = (ModelState.READY, ModelState.UNAVAILABLE)
_MB = 1_000_000


def describe_model(status: ModelStatus) -> str:
    """One or two plain sentences on what the model's state means for the person."""
    if status.state is ModelState.READY:
        return "Semantic search is on: memories are found by meaning as well as by their words."
    if status.state is ModelState.UNAVAILABLE:
        return (
            f"Semantic search is off. {status.detail} Tallei still finds memories by their words "
            "and how recent they are."
        )
    if status.state is ModelState.DOWNLOADING:
        size = ""
        if status.bytes_done is not None and status.bytes_total:
            size = f" ({status.bytes_done / _MB:.0f} of about {status.bytes_total / _MB:.0f} MB)"
        elif status.bytes_done is not None:
            size = f" ({status.bytes_done / _MB:.0f} MB so far)"
        return (
            f"Downloading the embedding model for search by meaning{size}. Until it is here, memories "
            "are found by their words and how recent they are."
        )
    return "Loading the embedding model for search by meaning; search by words works meanwhile."


class ModelWatch(QObject):
    """Emits :attr:`changed` on the Qt thread with each new model status, the current one first."""

    changed = Signal(object)  # ModelStatus

    def __init__(self, backend: Backend, ops: Ops, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._backend = backend
        self._ops = ops
        self._unsubscribe: Callable[[], None] | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(_POLL_MS)
        self._timer.timeout.connect(self._poll)
        self.last: ModelStatus | None = None

    def start(self) -> None:
        subscribe = getattr(self._backend.service.embedder, "subscribe", None)
        if callable(subscribe):
            # Subscribe first, then read: no change falls in between.
            self._unsubscribe = subscribe(self.changed.emit)
        else:
            self._timer.start()
        self.changed.connect(self._remember)
        self._poll()

    def stop(self) -> None:
        """Hear nothing more; call before the receivers go away."""
        self._timer.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _poll(self) -> None:
        self._ops.run(self._backend.service.model_status, self.changed.emit)

    def _remember(self, status: ModelStatus) -> None:
        self.last = status
        if status.state in _SETTLED:
            self._timer.stop()


def open_folder_dialog(
    parent: QWidget, title: str, start: Path, chosen: Callable[[Path], object]
) -> QFileDialog:
    """Open a non-modal folder chooser at ``start``; ``chosen`` gets the folder the person picks.

    The dialog is returned so the caller can keep it alive while it shows.
    """
    dialog = QFileDialog(parent, title, str(start))
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    dialog.fileSelected.connect(lambda path: chosen(Path(path)))
    dialog.open()
    return dialog


class ModelStatusBox(QFrame):
    """The model's state in a compact notice: a sentence, a progress bar while it downloads (busy if
    the size is unknown), "Choose folder…" while semantic search is off, and a close button."""

    #: The person asked to choose the model's folder.
    choose_folder = Signal()
    #: The person closed the notice.
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Search by meaning")
        self.state = QLabel(self)
        self.state.setWordWrap(True)
        self.state.setAccessibleName("Embedding model state")
        self.progress = QProgressBar(self)
        self.progress.setAccessibleName("Model download progress")
        self.progress.setRange(0, 1000)
        self.progress.setMaximumHeight(12)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.choose = QPushButton("Choose &folder…", self)
        self.choose.setAccessibleName("Choose the model folder")
        self.choose.clicked.connect(self.choose_folder)
        self.choose.hide()
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Hide this notice")
        self.close_button.setAccessibleName("Hide the search by meaning notice")
        self.close_button.clicked.connect(self.dismissed)
        text = QVBoxLayout()
        text.setSpacing(2)
        text.addWidget(self.state)
        text.addWidget(self.progress)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addLayout(text, 1)
        layout.addWidget(self.choose, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.status: ModelStatus | None = None

    def show_status(self, status: ModelStatus) -> None:
        self.status = status
        self.state.setText(describe_model(status))
        self.choose.setVisible(status.state is ModelState.UNAVAILABLE)
        busy = status.state in (ModelState.DOWNLOADING, ModelState.LOADING, ModelState.NOT_LOADED)
        self.progress.setVisible(busy)
        if status.state is ModelState.DOWNLOADING and status.progress is not None:
            self.progress.setRange(0, 1000)
            self.progress.setValue(round(status.progress * 1000))
        elif busy:
            self.progress.setRange(0, 0)  # busy: how long is not known
