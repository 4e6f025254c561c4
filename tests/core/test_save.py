"""Saves: validated, classified, durable at once; the slow part finished later, by any process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.models import MAX_CONTENT_BYTES, Bucket, MemoryStatus, MemoryType
from tallei_desktop.core.service import MemoryService
from tests.conftest import REPO_ROOT
from tests.core.conftest import ServiceFactory
from tests.support.fake_embedder import HashEmbedder


def _count(service: MemoryService) -> int:
    return int(service.db.reader().execute("SELECT count(*) FROM memories").fetchone()[0])


def test_save_classifies_and_returns_id_type_bucket(service: MemoryService) -> None:
    result = service.save("I prefer short answers without bullet points", platform="Claude")
    assert result.type is MemoryType.PREFERENCE
    assert result.bucket is Bucket.PREFERENCE
    assert not result.confirmed_existing
    memory = service.get(result.id)
    assert memory.platform == "claude"
    assert memory.reference_count == 1
    assert [p.platform for p in memory.provenance] == ["claude"]
    assert not memory.embedded


def test_explicit_type_wins_over_classification(service: MemoryService) -> None:
    result = service.save("I prefer short answers", type="note")
    assert (result.type, result.bucket) == (MemoryType.NOTE, Bucket.SHORT_TERM)


@pytest.mark.parametrize(
    ("content", "kwargs", "message"),
    [
        ("", {}, "empty"),
        ("   \n\t ", {}, "empty"),
        ("x" * (MAX_CONTENT_BYTES + 1), {}, "limit"),
        ("é" * (MAX_CONTENT_BYTES // 2 + 1), {}, "limit"),
        ("bad \ud800 surrogate", {}, "surrogate"),
        ("nul \x00 byte", {}, "NUL"),
        ("fine text", {"type": "opinion"}, "Unknown memory type"),
        (123, {}, "must be text"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    service: MemoryService, content: object, kwargs: dict[str, object], message: str
) -> None:
    service.save("an existing memory about gardening")
    before = _count(service)
    generation = service.db.generation()
    with pytest.raises(InvalidInput, match=message) as info:
        service.save(content, **kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
    assert _count(service) == before
    assert service.db.generation() == generation


def test_content_at_the_size_limit_is_accepted(service: MemoryService) -> None:
    result = service.save("y" * MAX_CONTENT_BYTES)
    assert len(service.get(result.id).content) == MAX_CONTENT_BYTES


def test_same_text_again_confirms_instead_of_copying(service: MemoryService) -> None:
    first = service.save("We decided to deploy on Fridays only", platform="claude")
    again = service.save("  we decided to deploy on fridays only.  ", platform="chatgpt")
    assert again.confirmed_existing and again.id == first.id
    assert again.reference_count == 2
    memory = service.get(first.id)
    assert memory.reference_count == 2
    assert memory.platforms == ("claude", "chatgpt")
    assert [p.action for p in memory.provenance] == ["saved", "confirmed"]
    assert _count(service) == 1


def test_occurred_at_is_kept_for_events(service: MemoryService) -> None:
    when = datetime(2026, 3, 3, 9, 30, tzinfo=UTC)
    result = service.save("Dentist appointment went fine", type="event", occurred_at=when)
    assert service.get(result.id).occurred_at == when


def test_save_does_not_embed_on_the_calling_thread(make_service: ServiceFactory) -> None:
    embedder = HashEmbedder(gated=True)  # any embed would block until the gate opens
    service = make_service(embedder=embedder, background=True)
    result = service.save("The staging server lives in Frankfurt")
    assert embedder.texts_embedded == 0
    assert not service.get(result.id).embedded
    embedder.open_gate()
    assert service.wait_idle(10)
    assert service.get(result.id).embedded
    assert embedder.texts_embedded >= 1


def test_unknown_ids_are_reported_not_guessed(service: MemoryService) -> None:
    with pytest.raises(NotFound):
        service.get("0123456789ab")
    with pytest.raises(InvalidInput):
        service.forget("'; DROP TABLE memories; --")


def test_forget_is_soft_and_restore_brings_it_back(service: MemoryService) -> None:
    mid = service.save("My locker code is in the blue notebook").id
    service.drain()
    forgotten = service.forget(mid)
    assert forgotten.status is MemoryStatus.DELETED
    assert mid not in {item.memory.id for item in service.recall("locker code").items}
    assert service.list(status="deleted")[0].id == mid
    service.restore(mid)
    service.drain()
    assert mid in {item.memory.id for item in service.recall("locker code").items}


def test_purge_erases_for_good(service: MemoryService) -> None:
    mid = service.save("temporary secret to purge").id
    service.drain()
    service.purge(mid)
    with pytest.raises(NotFound):
        service.get(mid)
    conn = service.db.reader()
    assert conn.execute("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH 'purge'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 0


_SAVE_AND_DIE = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from tallei_desktop.core.recall import Budgets
    from tallei_desktop.core.service import MemoryService
    from tallei_desktop.core.store.database import Database
    from tests.support.fake_embedder import HashEmbedder
    db = Database(Path({path!r}), bytes(range(32)), key_source="k")
    service = MemoryService(db, HashEmbedder(gated=True), budgets=Budgets(1500, 4800, 1700, 60))
    service.start_background()
    ids = [service.save(f"acknowledged memory {{i}} about sailing").id for i in range(20)]
    print(",".join(ids), flush=True)
    os._exit(9)  # die without closing: the worker never got to embed
    """
)


def test_pending_work_of_a_dead_process_is_finished_by_the_next(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    path = tmp_path / "tallei.db"
    make_service(path=path).close()
    proc = subprocess.run(
        [sys.executable, "-c", _SAVE_AND_DIE.format(root=str(REPO_ROOT), path=str(path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 9, proc.stderr
    ids = proc.stdout.strip().split(",")
    assert len(ids) == 20
    service = make_service(path=path, background=True)
    assert service.status().pending_embeddings == 20
    assert service.wait_idle(20)
    assert service.status().pending_embeddings == 0
    assert all(service.get(mid).embedded for mid in ids)


@pytest.mark.parametrize(
    "when",
    [datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC), datetime(1850, 5, 1), "2026-01-01"],
)
def test_out_of_range_or_wrong_typed_times_are_refused(service: MemoryService, when: object) -> None:
    with pytest.raises(InvalidInput, match=r"date|time"):
        service.save("An event at a strange time", type="event", occurred_at=when)  # type: ignore[arg-type]
    assert _count(service) == 0


def test_listing_limits_are_checked(service: MemoryService) -> None:
    for offset, limit in ((2**63, 10), (-1, 10), (0, 0), (0, 501)):
        with pytest.raises(InvalidInput):
            service.list(offset=offset, limit=limit)
