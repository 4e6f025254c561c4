"""Undoing a conflict's resolution: the sides come back as they were and the conflict is open again."""

from __future__ import annotations

import pytest

from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.models import ConflictStatus, EventKind, Memory, MemoryFilter, MemoryStatus
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.events import record_event
from tests.core.conftest import ServiceFactory


@pytest.fixture
def svc(make_service: ServiceFactory, real_embedder: FastEmbedEmbedder) -> MemoryService:
    return make_service(embedder=real_embedder)


def _conflict(svc: MemoryService) -> tuple[str, str, str]:
    a = svc.save("I prefer window seats on flights", platform="claude").id
    b = svc.save("I prefer aisle seats on flights", platform="gemini").id
    svc.drain()
    [conflict] = svc.conflicts()
    assert (conflict.memory_a.id, conflict.memory_b.id) == (a, b)
    return conflict.id, a, b


@pytest.mark.parametrize("resolution", ["keep_first", "keep_second"])
def test_undoing_keep_one_brings_the_retired_side_back_and_reopens(
    svc: MemoryService, resolution: str
) -> None:
    cid, a, b = _conflict(svc)
    svc.resolve_conflict(cid, resolution)
    retired = b if resolution == "keep_first" else a
    assert svc.get(retired).status is MemoryStatus.SUPERSEDED
    start = svc.last_change_seq()

    reopened = svc.reopen_conflict(cid)

    assert (
        reopened.status is ConflictStatus.OPEN
        and reopened.resolution is None
        and reopened.resolved_at is None
    )
    assert [c.id for c in svc.conflicts()] == [cid]
    for mid in (a, b):
        memory = svc.get(mid)
        assert memory.status is MemoryStatus.ACTIVE and memory.superseded_by is None
    assert [(e.kind, e.memory_id, e.conflict_id) for e in svc.changes_since(start).events] == [
        (EventKind.MEMORY_RESTORED, retired, None),
        (EventKind.CONFLICT_REOPENED, None, cid),
    ]
    svc.drain()  # embedded again: found by meaning, and flagged in recall as disagreeing
    assert svc.get(retired).embedded
    result = svc.recall("seats on a plane")
    assert {i.memory.id for i in result.preferences} == {a, b} and result.open_conflicts == 1
    # Settled again, another way.
    assert svc.resolve_conflict(cid, "keep_both").resolution == "keep_both"


def test_undoing_a_merge_erases_the_merged_memory_and_restores_both(svc: MemoryService) -> None:
    cid, a, b = _conflict(svc)
    svc.pin(a)  # the person's own pin survives the round trip
    svc.resolve_conflict(cid, "replace", content="Window seat on long flights, aisle on short ones")
    svc.drain()  # the merged memory is embedded: it has a vector and a text-index row to lose
    merged = svc.get(a).superseded_by
    assert merged is not None and svc.get(b).superseded_by == merged and svc.get(merged).embedded
    conn = svc.db.reader()
    [(merged_rowid,)] = conn.execute("SELECT rowid FROM memories WHERE id = ?", (merged,)).fetchall()
    start = svc.last_change_seq()

    svc.reopen_conflict(cid)

    with pytest.raises(NotFound):
        svc.get(merged)
    assert merged not in {m.id for m in svc.list(status="deleted")}
    conn = svc.db.reader()
    assert conn.execute("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH 'short'").fetchone()[0] == 0
    vectors = conn.execute("SELECT count(*) FROM memory_vectors WHERE rowid = ?", (merged_rowid,)).fetchone()
    assert vectors[0] == 0
    assert (svc.get(a).status, svc.get(a).pinned) == (MemoryStatus.ACTIVE, True)
    assert (svc.get(b).status, svc.get(b).pinned) == (MemoryStatus.ACTIVE, False)
    assert [c.id for c in svc.conflicts()] == [cid]
    assert [(e.kind, e.memory_id) for e in svc.changes_since(start).events] == [
        (EventKind.MEMORY_RESTORED, a),
        (EventKind.MEMORY_RESTORED, b),
        (EventKind.MEMORY_PURGED, merged),
        (EventKind.CONFLICT_REOPENED, None),
    ]
    svc.drain()
    contents = {i.memory.content for i in svc.recall("seats").preferences}
    assert contents == {"I prefer window seats on flights", "I prefer aisle seats on flights"}


def test_undoing_a_merge_an_assistant_confirmed_since_only_forgets_it(svc: MemoryService) -> None:
    cid, a, _b = _conflict(svc)
    text = "Window seat on long flights, aisle on short ones"
    svc.resolve_conflict(cid, "replace", content=text)
    merged = svc.get(a).superseded_by
    assert svc.save(text, platform="claude").id == merged  # claude said it too
    svc.drain()

    svc.reopen_conflict(cid)

    # Erasing it would lose what claude saved; it is forgotten, where the person can bring it back.
    memory = svc.get(merged)
    assert memory.status is MemoryStatus.DELETED and "claude" in memory.platforms


def test_keep_both_pins_nothing_and_its_undo_changes_no_memory(svc: MemoryService) -> None:
    cid, a, b = _conflict(svc)
    svc.pin(a)  # pinned by the person before: stays pinned
    start = svc.last_change_seq()
    svc.resolve_conflict(cid, "keep_both")
    assert svc.get(a).pinned and not svc.get(b).pinned
    assert [e.kind for e in svc.changes_since(start).events] == [EventKind.CONFLICT_RESOLVED]

    svc.reopen_conflict(cid)

    assert svc.get(a).pinned and not svc.get(b).pinned
    assert {svc.get(m).status for m in (a, b)} == {MemoryStatus.ACTIVE}
    assert [c.id for c in svc.conflicts()] == [cid]


def test_undoing_a_keep_both_that_pinned_both_unpins_only_what_it_pinned(svc: MemoryService) -> None:
    # Earlier versions pinned both sides on keep_both, recording a pin event tied to the conflict.
    cid, a, b = _conflict(svc)
    svc.pin(a)
    svc.resolve_conflict(cid, "keep_both")
    with svc.db.write() as conn:
        conn.execute("UPDATE memories SET pinned = 1 WHERE id = ?", (b,))
        record_event(conn, EventKind.MEMORY_PINNED, at=0.0, memory_id=b, conflict_id=cid)

    svc.reopen_conflict(cid)

    assert svc.get(a).pinned and not svc.get(b).pinned


def _state(memory: Memory) -> tuple[object, ...]:
    """What the person sees of a memory (the time of the last change aside)."""
    provenance = tuple((p.platform, p.action) for p in memory.provenance)
    return (
        memory.content,
        memory.type,
        memory.bucket,
        memory.platform,
        memory.pinned,
        memory.status,
        memory.superseded_by,
        memory.reference_count,
        memory.embedded,
        provenance,
    )


@pytest.mark.parametrize("resolution", ["keep_first", "keep_second", "keep_both", "replace"])
def test_undo_restores_exactly_the_state_before_the_resolution(svc: MemoryService, resolution: str) -> None:
    cid, a, b = _conflict(svc)
    svc.pin(b)
    before = {mid: _state(svc.get(mid)) for mid in (a, b)}
    statuses = {s: svc.count(MemoryFilter(statuses=frozenset({s}))) for s in MemoryStatus}
    content = "Window seat on long flights" if resolution == "replace" else None
    svc.resolve_conflict(cid, resolution, content=content)
    svc.drain()

    svc.reopen_conflict(cid)
    svc.drain()

    assert {mid: _state(svc.get(mid)) for mid in (a, b)} == before
    assert {s: svc.count(MemoryFilter(statuses=frozenset({s}))) for s in MemoryStatus} == statuses
    [again] = svc.conflicts()
    assert (again.id, again.status, again.resolution) == (cid, ConflictStatus.OPEN, None)


def test_a_side_restored_by_hand_since_is_left_alone(svc: MemoryService) -> None:
    cid, _a, b = _conflict(svc)
    svc.resolve_conflict(cid, "keep_first")
    svc.restore(b)
    svc.forget(b)
    svc.reopen_conflict(cid)
    assert svc.get(b).status is MemoryStatus.DELETED


def test_what_cannot_be_undone_is_refused_and_changes_nothing(svc: MemoryService) -> None:
    cid, a, _b = _conflict(svc)
    start = svc.last_change_seq()
    with pytest.raises(InvalidInput, match="is open; there is no outcome to undo"):
        svc.reopen_conflict(cid)
    with pytest.raises(NotFound, match="No conflict has the id"):
        svc.reopen_conflict("c0123456789ab")
    with pytest.raises(InvalidInput, match="is not a conflict id"):
        svc.reopen_conflict("nonsense!")
    assert svc.last_change_seq() == start
    svc.forget(a)  # closes the conflict as "forgotten"
    forgotten_at = svc.last_change_seq()
    with pytest.raises(InvalidInput, match="restore that memory instead"):
        svc.reopen_conflict(cid)
    assert svc.last_change_seq() == forgotten_at
    assert not svc.conflicts()
