"""Fixtures for the core: real encrypted stores in tmp_path, a controllable clock, both embedders."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tallei_desktop.core.embeddings import Embedder, FastEmbedEmbedder
from tallei_desktop.core.recall import Budgets
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tests.support.fake_embedder import HashEmbedder

KEY = bytes(range(32))
BUDGETS = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="session")
def real_embedder(model_dir: Path) -> FastEmbedEmbedder:
    """The real all-MiniLM-L6-v2, loaded once for the whole session."""
    embedder = FastEmbedEmbedder(model_dir=model_dir)
    embedder.load()
    return embedder


ServiceFactory = Callable[..., MemoryService]


@pytest.fixture
def make_service(tmp_path: Path, clock: Clock) -> Iterator[ServiceFactory]:
    """Open a MemoryService on a real encrypted store; every service opened is closed afterwards."""
    opened: list[MemoryService] = []

    def make(
        *,
        embedder: Embedder | None = None,
        path: Path | None = None,
        budgets: Budgets = BUDGETS,
        background: bool = False,
        use_clock: bool = True,
    ) -> MemoryService:
        db = Database(path or tmp_path / "tallei.db", KEY, key_source="test key")
        kwargs = {"clock": clock} if use_clock else {}
        service = MemoryService(db, embedder or HashEmbedder(), budgets=budgets, **kwargs)  # type: ignore[arg-type]
        if background:
            service.start_background(poll_s=0.2)
        opened.append(service)
        return service

    yield make
    for service in opened:
        service.close()


@pytest.fixture
def service(make_service: ServiceFactory) -> MemoryService:
    return make_service()
