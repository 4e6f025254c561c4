"""The first run shows the embedding model's state, with a progress bar while it downloads, and says
plainly when semantic search is off and why."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tallei_desktop.config import load_settings
from tallei_desktop.core.embeddings import FastEmbedEmbedder, ModelState, ModelStatus
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.main_window import MainWindow
from tallei_desktop.gui.ops import Ops
from tests.gui.conftest import BUDGETS, KEY, WAIT_MS
from tests.support.fake_embedder import HashEmbedder


class SteppedEmbedder(HashEmbedder):
    """A model whose status the test moves on, announced to subscribers from another thread, as the
    real embedder announces them from its loading thread."""

    def __init__(self) -> None:
        super().__init__()
        self._now = ModelStatus(ModelState.NOT_LOADED, "The embedding model has not been loaded yet.")
        self._subscribers: list[Callable[[ModelStatus], None]] = []

    @property
    def state(self) -> ModelState:
        return self._now.state

    @property
    def status(self) -> ModelStatus:
        return self._now

    def subscribe(self, callback: Callable[[ModelStatus], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def step(self, status: ModelStatus) -> None:
        def announce() -> None:
            self._now = status
            for callback in list(self._subscribers):
                callback(status)

        loader = threading.Thread(target=announce)
        loader.start()
        loader.join()


@contextmanager
def _window(tmp_path: Path, embedder: object, ops: Ops, qtbot: QtBot) -> Iterator[MainWindow]:
    service = MemoryService(
        Database(tmp_path / "m.db", KEY, key_source="test key"), embedder, budgets=BUDGETS
    )  # type: ignore[arg-type]
    settings = load_settings(
        environ={"TALLEI_DATA_DIR": str(tmp_path / "data")}, config_path=tmp_path / "x.toml"
    )
    window = MainWindow(settings, Backend(service), ops, has_tray=True)
    qtbot.addWidget(window)
    window.show()
    yield window
    window.stop_following_model()
    ops.shutdown()
    service.close()


@pytest.fixture
def stepped() -> SteppedEmbedder:
    return SteppedEmbedder()


@pytest.fixture
def first_run(tmp_path: Path, stepped: SteppedEmbedder, ops: Ops, qtbot: QtBot) -> Iterator[MainWindow]:
    with _window(tmp_path, stepped, ops, qtbot) as window:
        yield window


def test_first_run_shows_the_download_with_progress_then_that_search_by_meaning_is_on(
    qtbot: QtBot, first_run: MainWindow, stepped: SteppedEmbedder
) -> None:
    box = first_run.model_box
    with qtbot.waitSignal(first_run.model_shown, timeout=WAIT_MS):
        first_run.follow_model(always=True)
    assert box.isVisible() and "Loading the embedding model" in box.state.text()
    assert box.progress.isVisible() and box.progress.maximum() == 0  # busy: no size yet

    downloading = ModelStatus(ModelState.DOWNLOADING, "Downloading…", 0.25, 22_500_000, 90_000_000)
    with qtbot.waitSignal(first_run.model_shown, timeout=WAIT_MS):
        stepped.step(downloading)
    assert box.progress.isVisible() and (box.progress.maximum(), box.progress.value()) == (1000, 250)
    assert "Downloading the embedding model for search by meaning (22 of about 90 MB)" in box.state.text()
    assert "found by their words" in box.state.text()

    with qtbot.waitSignal(first_run.model_shown, timeout=WAIT_MS):
        stepped.step(ModelStatus(ModelState.READY, "Ready."))
    assert box.isVisible() and not box.progress.isVisible()
    assert box.state.text().startswith("Semantic search is on")


def test_after_the_first_run_the_state_shows_only_while_downloading_or_when_search_is_off(
    qtbot: QtBot, first_run: MainWindow, stepped: SteppedEmbedder
) -> None:
    box = first_run.model_box
    with qtbot.waitSignal(first_run.model_shown, timeout=WAIT_MS):
        first_run.follow_model(always=False)
    assert not box.isVisible()
    with qtbot.waitSignal(first_run.model_shown, timeout=WAIT_MS):
        stepped.step(ModelStatus(ModelState.DOWNLOADING, "Downloading…", None, 1_000_000, None))
    assert box.isVisible() and box.progress.maximum() == 0 and "(1 MB so far)" in box.state.text()
    reason = "The embedding model could not be downloaded: the network is unreachable."
    with qtbot.waitSignal(first_run.model_shown, timeout=WAIT_MS):
        stepped.step(ModelStatus(ModelState.UNAVAILABLE, reason))
    assert box.isVisible() and not box.progress.isVisible()
    assert box.state.text() == (
        f"Semantic search is off. {reason} Tallei still finds memories by their words and how recent they are."
    )
    first_run.stop_following_model()
    assert not stepped._subscribers


def test_a_missing_model_folder_says_semantic_search_is_off_and_why(
    qtbot: QtBot, tmp_path: Path, ops: Ops
) -> None:
    embedder = FastEmbedEmbedder(model_dir=tmp_path / "no-model", allow_download=False)
    with _window(tmp_path, embedder, ops, qtbot) as window:
        watch = window.follow_model(always=True)
        embedder.preload_in_background()
        qtbot.waitUntil(
            lambda: watch.last is not None and watch.last.state is ModelState.UNAVAILABLE, timeout=WAIT_MS
        )
        text = window.model_box.state.text()
        assert text.startswith("Semantic search is off.") and str(tmp_path / "no-model") in text
        assert window.model_box.isVisible() and not window.model_box.progress.isVisible()


def test_an_embedder_without_subscriptions_is_asked_until_it_settles(
    qtbot: QtBot, tmp_path: Path, ops: Ops
) -> None:
    embedder = HashEmbedder()
    embedder.make_unavailable("No model here.")
    with _window(tmp_path, embedder, ops, qtbot) as window:
        watch = window.follow_model(always=False)
        qtbot.waitUntil(lambda: watch.last is not None, timeout=WAIT_MS)
        assert (
            window.model_box.isVisible()
            and "Semantic search is off. No model here." in window.model_box.state.text()
        )
