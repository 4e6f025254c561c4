"""A memory a newer one replaced can be brought back in one step; both then stay."""

from __future__ import annotations

import pytest

from tallei_desktop.core import EventKind, InvalidInput, MemoryService, MemoryStatus, NotFound
from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tests.core.conftest import Clock, ServiceFactory


@pytest.fixture
def svc(make_service: ServiceFactory, real_embedder: FastEmbedEmbedder) -> MemoryService:
    return make_service(embedder=real_embedder)


def _supersede(svc: MemoryService) -> tuple[str, str]:
    old = svc.save("I prefer tabs for indentation", platform="claude").id
    new = svc.save("I prefer spaces for indentation", platform="claude").id
    svc.drain()
    assert svc.get(old).status is MemoryStatus.SUPERSEDED
    assert svc.get(old).superseded_by == new
    return old, new


def test_bringing_back_a_replaced_preference_keeps_both_and_reaches_every_process(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    svc = make_service(embedder=real_embedder)
    other_process = make_service(embedder=real_embedder)  # a second connection, as an MCP server has
    old, new = _supersede(svc)
    for s in (svc, other_process):  # now cached in both, without the replaced one
        assert {i.memory.id for i in s.recall("indentation").items} == {new}
    seq = svc.last_change_seq()
    clock.advance(minutes=2)

    back = svc.bring_back_replaced(old)

    assert back.id == old
    assert back.status is MemoryStatus.ACTIVE
    assert back.superseded_by is None
    assert svc.get(new).status is MemoryStatus.ACTIVE
    [event] = svc.changes_since(seq).events
    assert (event.kind, event.memory_id) == (EventKind.MEMORY_RESTORED, old)
    for s in (svc, other_process):
        assert {i.memory.id for i in s.recall("indentation").items} == {old, new}
    assert svc.list(status="superseded") == []

    svc.drain()  # the background pass embeds it again and does not retire it a second time
    assert svc.get(old).status is MemoryStatus.ACTIVE
    assert svc.get(new).status is MemoryStatus.ACTIVE
    assert svc.status().pending_embeddings == 0
    assert {i.memory.id for i in svc.recall("indentation").items} == {old, new}


def test_only_a_replaced_memory_can_be_brought_back(svc: MemoryService) -> None:
    old, new = _supersede(svc)
    forgotten = svc.save("The gate code is 4411", type="fact", platform="claude").id
    svc.forget(forgotten)
    seq = svc.last_change_seq()

    with pytest.raises(InvalidInput, match=r"not replaced by a newer one \(it is active\)"):
        svc.bring_back_replaced(new)
    with pytest.raises(InvalidInput, match=r"\(it is forgotten\)"):
        svc.bring_back_replaced(forgotten)
    with pytest.raises(NotFound):
        svc.bring_back_replaced("0123456789ab")
    with pytest.raises(InvalidInput, match="is not a memory id"):
        svc.bring_back_replaced("not an id!")

    assert svc.changes_since(seq).events == ()
    assert svc.get(old).status is MemoryStatus.SUPERSEDED
    assert svc.get(forgotten).status is MemoryStatus.DELETED
