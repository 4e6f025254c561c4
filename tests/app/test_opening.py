"""Finishing pending work in a short-lived process, on a real encrypted store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tallei_desktop.app.opening import finish_pending
from tallei_desktop.core import Budgets, Database, FastEmbedEmbedder, MemoryService, ModelState
from tests.support.fake_embedder import HashEmbedder

KEY = bytes(range(32))
BUDGETS = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)


@pytest.fixture
def gated() -> Iterator[HashEmbedder]:
    embedder = HashEmbedder(gated=True)
    yield embedder
    embedder.open_gate()  # never leave the worker blocked when the service closes


def open_service(path: Path, embedder: object) -> MemoryService:
    return MemoryService(Database(path, KEY, key_source="test key"), embedder, budgets=BUDGETS)  # type: ignore[arg-type]


def test_pending_saves_are_finished_within_the_time_given(tmp_path: Path) -> None:
    service = open_service(tmp_path / "tallei.db", HashEmbedder())
    try:
        for text in ("The boat is moored at pier 4", "The boat needs new sails"):
            service.save(text)
        assert service.status().pending_embeddings == 2

        left = finish_pending(service, timeout=30.0)

        assert left == 0
        assert service.status().pending_embeddings == 0
    finally:
        service.close()


def test_work_still_running_when_time_is_up_is_counted(tmp_path: Path, gated: HashEmbedder) -> None:
    service = open_service(tmp_path / "tallei.db", gated)
    try:
        service.save("The boat is moored at pier 4")
        service.save("The car is parked on level 2")

        assert finish_pending(service, timeout=0.2) == 2

        gated.open_gate()
        assert finish_pending(service, timeout=30.0) == 0
    finally:
        service.close()


def test_nothing_pending_loads_nothing(tmp_path: Path) -> None:
    model = FastEmbedEmbedder(model_dir=tmp_path / "no-model-here", allow_download=False)
    service = open_service(tmp_path / "tallei.db", model)
    try:
        assert finish_pending(service, timeout=30.0) == 0
        assert model.state is ModelState.NOT_LOADED
    finally:
        service.close()
