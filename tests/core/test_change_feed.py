"""The change feed: every change writes its events in its own transaction; readers follow by seq."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tallei_desktop.core.errors import InvalidInput
from tallei_desktop.core.models import ChangeEvent, EventKind, MemoryStatus, MemoryType
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store import events as se
from tallei_desktop.core.store import memories as sm
from tallei_desktop.core.store.connection import open_connection
from tallei_desktop.core.store.database import Database
from tallei_desktop.core.store.migrations import MIGRATIONS, SCHEMA_VERSION
from tests.conftest import REPO_ROOT
from tests.core.conftest import KEY, Clock, ServiceFactory
from tests.support.fake_embedder import HashEmbedder

E = EventKind


def _since(svc: MemoryService, seq: int) -> list[ChangeEvent]:
    return list(svc.changes_since(seq).events)


def _kinds(events: list[ChangeEvent]) -> list[tuple[EventKind, str | None]]:
    return [(e.kind, e.memory_id) for e in events]


def test_each_memory_change_writes_exactly_its_events(service: MemoryService, clock: Clock) -> None:
    assert service.last_change_seq() == 0
    mid = service.save("The office wifi is called Larkspur", platform="claude").id
    [saved] = _since(service, 0)
    assert (saved.kind, saved.memory_id, saved.platform, saved.detail) == (
        E.MEMORY_SAVED,
        mid,
        "claude",
        "fact",
    )
    assert saved.at == clock.now and saved.conflict_id is None

    seq = service.last_change_seq()
    service.save("the office wifi is called larkspur.", platform="cursor")
    assert [(e.kind, e.memory_id, e.platform) for e in _since(service, seq)] == [
        (E.MEMORY_CONFIRMED, mid, "cursor")
    ]

    steps: list[tuple[object, list[tuple[EventKind, str | None]]]] = [
        (lambda: service.update(mid, content="The office wifi is Larkspur-5G"), [(E.MEMORY_EDITED, mid)]),
        (lambda: service.update(mid, type="decision"), [(E.MEMORY_RETYPED, mid)]),
        (lambda: service.pin(mid), [(E.MEMORY_PINNED, mid)]),
        (lambda: service.unpin(mid), [(E.MEMORY_UNPINNED, mid)]),
        (
            lambda: service.update(mid, content="The office wifi is Larkspur-6", pinned=True),
            [(E.MEMORY_EDITED, mid), (E.MEMORY_PINNED, mid)],
        ),
        (lambda: service.forget(mid), [(E.MEMORY_FORGOTTEN, mid)]),
        (lambda: service.forget(mid), []),  # already forgotten: nothing changed, nothing recorded
        (lambda: service.restore(mid), [(E.MEMORY_RESTORED, mid)]),
        (lambda: service.purge(mid), [(E.MEMORY_PURGED, mid)]),
    ]
    for step, expected in steps:
        seq = service.last_change_seq()
        step()  # type: ignore[operator]
        assert _kinds(_since(service, seq)) == expected
    retyped = [e for e in _since(service, 0) if e.kind is E.MEMORY_RETYPED]
    assert [e.detail for e in retyped] == ["decision"]


def test_a_change_that_fails_leaves_no_event(service: MemoryService) -> None:
    mid = service.save("Rollback check memory").id
    seq = service.last_change_seq()
    with pytest.raises(RuntimeError), service.db.write() as conn:
        sm.insert_memory(
            conn, content="never committed", type=MemoryType.FACT, platform="x", now=1.0, occurred_at=1.0
        )
        raise RuntimeError("fail mid-transaction")
    service.forget(mid)
    with pytest.raises(InvalidInput):
        service.update(mid, content="cannot edit a forgotten memory")
    assert _kinds(_since(service, seq)) == [(E.MEMORY_FORGOTTEN, mid)]
    # The rolled-back event vanished with its transaction, sequence number included.
    assert service.last_change_seq() == seq + 1
    with pytest.raises(InvalidInput, match="negative"):
        service.changes_since(-1)


def test_worker_outcomes_land_in_the_feed(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder
) -> None:
    svc = make_service(embedder=real_embedder)
    dark = svc.save("I prefer dark mode", platform="claude").id
    like = svc.save("I like dark mode", platform="chatgpt").id
    tabs_old = svc.save("I prefer tabs for indentation", platform="claude").id
    seq = svc.last_change_seq()
    svc.drain()
    spaces = svc.save("I prefer spaces for indentation", platform="claude").id
    svc.drain()
    tabs = svc.save("I prefer tabs for indentation, always", platform="chatgpt").id
    svc.drain()
    events = _since(svc, seq)
    merged = [e for e in events if e.kind is E.MEMORY_MERGED]
    assert [(e.memory_id, e.detail, e.platform) for e in merged] == [(like, dark, "chatgpt")]
    superseded = [e for e in events if e.kind is E.MEMORY_SUPERSEDED]
    assert [(e.memory_id, e.detail) for e in superseded] == [(tabs_old, spaces)]
    [opened] = [e for e in events if e.kind is E.CONFLICT_OPENED]
    [conflict] = svc.conflicts()
    assert (opened.conflict_id, opened.memory_id, opened.detail, opened.platform) == (
        conflict.id,
        tabs,
        spaces,
        "chatgpt",
    )

    seq = svc.last_change_seq()
    svc.resolve_conflict(conflict.id, "keep_first")
    assert [(e.kind, e.memory_id, e.conflict_id, e.detail) for e in _since(svc, seq)] == [
        (E.MEMORY_SUPERSEDED, tabs, conflict.id, spaces),
        (E.CONFLICT_RESOLVED, None, conflict.id, "keep_first"),
    ]


def test_resolving_by_replacing_and_forgetting_a_side_record_their_events(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder
) -> None:
    svc = make_service(embedder=real_embedder)
    a = svc.save("I prefer tabs for indentation", platform="claude").id
    b = svc.save("I prefer spaces for indentation", platform="chatgpt").id
    svc.drain()
    [first] = svc.conflicts()
    seq = svc.last_change_seq()
    svc.resolve_conflict(first.id, "replace", content="Tabs in Go, spaces everywhere else")
    events = _since(svc, seq)
    [new] = [e.memory_id for e in events if e.kind is E.MEMORY_SAVED]
    assert [(e.kind, e.memory_id) for e in events] == [
        (E.MEMORY_SAVED, new),
        (E.MEMORY_SUPERSEDED, a),
        (E.MEMORY_SUPERSEDED, b),
        (E.CONFLICT_RESOLVED, None),
    ]
    assert events[0].platform == "tallei" and events[1].detail == new

    c = svc.save("I prefer light mode", platform="claude").id
    d = svc.save("I prefer dark mode", platform="gemini").id
    svc.drain()
    [second] = svc.conflicts()
    seq = svc.last_change_seq()
    svc.forget(c)
    assert [(e.kind, e.memory_id, e.conflict_id, e.detail) for e in _since(svc, seq)] == [
        (E.MEMORY_FORGOTTEN, c, None, ""),
        (E.CONFLICT_RESOLVED, None, second.id, "forgotten"),
    ]
    assert svc.get(d).status is MemoryStatus.ACTIVE


def test_maintenance_and_recall_hits_record_promotions_archives_and_revivals(
    service: MemoryService, clock: Clock
) -> None:
    old = service.save("The router admin password hint is the cat", type="fact").id
    event = service.save("Dentist appointment about the cracked molar", type="event").id
    service.drain()
    clock.advance(days=400)
    seq = service.last_change_seq()
    assert service.run_maintenance() == (0, 1)
    assert _kinds(_since(service, seq)) == [(E.MEMORY_ARCHIVED, old)]

    seq = service.last_change_seq()
    service.recall("router admin password", count_use=True)  # a hit on an archived memory brings it back
    service.drain()
    revived = _since(service, seq)
    assert [(e.kind, e.memory_id, e.detail) for e in revived] == [(E.MEMORY_RESTORED, old, "recalled")]

    for _ in range(3):
        service.recall("cracked molar dentist", count_use=True)
        service.drain()
    promoted = [e for e in _since(service, seq) if e.kind is E.MEMORY_PROMOTED]
    assert [(e.memory_id, e.detail) for e in promoted] == [(event, "long_term")]


def test_pruning_keeps_recent_events_and_tells_a_reader_that_fell_behind_to_reload(
    service: MemoryService, clock: Clock
) -> None:
    ids = [service.save(f"Pruning memory number {i} about widgets").id for i in range(6)]
    clock.advance(days=31)
    late = service.save("A memory saved a month later").id
    with service.db.write() as conn:
        # Older than 30 days and beyond the newest 3: the first four go.
        assert se.prune_events(conn, clock.now.timestamp(), keep=3) == 4
    fresh = service.changes_since(4)
    assert not fresh.reload
    assert [e.memory_id for e in fresh.events] == [*ids[4:], late]
    behind = service.changes_since(2)
    assert behind.reload and behind.last_seq == 7
    assert [e.memory_id for e in behind.events] == [*ids[4:], late]
    # Never more than the newest KEEP_EVENTS, and nothing younger than the age limit, are pruned.
    page = service.changes_since(4, limit=1)
    assert not page.reload and [e.memory_id for e in page.events] == [ids[4]] and page.last_seq == 5
    with service.db.write() as conn:
        assert se.prune_events(conn, clock.now.timestamp(), keep=0) == 2
    assert [e.memory_id for e in service.changes_since(6).events] == [late]
    # A reader ahead of the store (it was replaced, say from a backup) reloads too.
    ahead = service.changes_since(99)
    assert ahead.reload and ahead.events == () and ahead.last_seq == 7


def test_maintenance_prunes_old_events(
    service: MemoryService, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(4):
        service.save(f"Maintenance pruning memory {i}")
    clock.advance(days=31)
    monkeypatch.setattr(se, "KEEP_EVENTS", 1)
    service.run_maintenance()
    batch = service.changes_since(0)
    assert batch.reload and [e.seq for e in batch.events] == [4]


_COMMIT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from tallei_desktop.core.recall import Budgets
    from tallei_desktop.core.service import MemoryService
    from tallei_desktop.core.store.database import Database
    from tests.support.fake_embedder import HashEmbedder
    db = Database(Path({path!r}), bytes(range(32)), key_source="k")
    service = MemoryService(db, HashEmbedder(), budgets=Budgets(1500, 4800, 1700, 60))
    print(service.save("Saved by another process", platform="cursor").id)
    service.close()
    """
)


def test_store_changed_flips_on_any_commit_and_not_otherwise(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    watcher = make_service(embedder=HashEmbedder())
    other = make_service(embedder=HashEmbedder())
    assert watcher.store_changed() is False
    watcher.recall("anything")
    watcher.search("anything")
    watcher.status()
    watcher.changes_since(0)
    assert watcher.store_changed() is False  # reads commit nothing
    other.save("Saved through another connection")
    assert watcher.store_changed() is True
    assert watcher.store_changed() is False  # once per change
    watcher.save("Saved through the watcher's own writer")
    assert watcher.store_changed() is True

    script = _COMMIT.format(root=str(REPO_ROOT), path=str(tmp_path / "tallei.db"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert watcher.store_changed() is True
    [event] = watcher.changes_since(2).events
    assert (event.kind, event.memory_id, event.platform) == (E.MEMORY_SAVED, done.stdout.strip(), "cursor")
    assert watcher.store_changed() is False


def test_a_store_from_before_the_feed_gains_it_on_open(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    conn = open_connection(path, KEY, key_source="k")
    feed = [name for name, _ in MIGRATIONS].index("change feed")
    for version, (_name, step) in enumerate(MIGRATIONS[:feed]):
        with conn:
            step(conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
    conn.close()
    db = Database(path, KEY, key_source="k")
    try:
        assert db.schema_version == SCHEMA_VERSION
        with db.write() as w:
            sm.insert_memory(
                w, content="after the upgrade", type=MemoryType.NOTE, platform="x", now=5.0, occurred_at=5.0
            )
        with db.read() as r:
            [event] = se.read_changes(r, 0, 10).events
        assert (event.seq, event.kind, event.detail) == (1, E.MEMORY_SAVED, "note")
    finally:
        db.close()
