"""Only an assistant's use counts: the person looking (a preview, a search) leaves counts alone."""

from __future__ import annotations

from tallei_desktop.core import Confidence, MemoryService
from tallei_desktop.core.recall import CONFIRMED_LEGEND
from tests.core.conftest import Clock, ServiceFactory


def _counts(service: MemoryService, memory_id: str) -> tuple[int, object]:
    m = service.get(memory_id)
    return m.reference_count, m.last_referenced_at


def test_looking_through_recall_and_search_leaves_counts_and_last_use_alone(service: MemoryService) -> None:
    mid = service.save("I like my coffee black, no sugar", platform="claude").id
    service.drain()
    before = _counts(service, mid)
    assert before == (1, None)
    for _ in range(3):  # the second and third answers come from the cache
        assert mid in {i.memory.id for i in service.recall("how do I take my coffee").items}
        assert mid in {h.memory.id for h in service.search("coffee black")}
    service.drain()
    assert _counts(service, mid) == before
    assert service.get(mid).confidence is Confidence.UNCONFIRMED


def test_an_assistants_recall_and_search_count_once_per_hit_cached_or_not(
    service: MemoryService, clock: Clock
) -> None:
    mid = service.save("I like my coffee black, no sugar", platform="claude").id
    service.drain()
    first = service.recall("how do I take my coffee", count_use=True)
    assert service.recall("how do I take my coffee", count_use=True) is first  # cached, counted too
    service.drain()  # the background round writes the queued counts
    assert _counts(service, mid) == (3, clock.now)
    clock.advance(minutes=5)
    service.search("coffee black", count_use=True)
    service.recall("how do I take my coffee")  # the person looking in between counts for nothing
    service.drain()
    assert _counts(service, mid) == (4, clock.now)
    assert service.get(mid).confidence is Confidence.MED


def test_counts_queued_by_an_assistant_are_written_when_the_service_closes(
    make_service: ServiceFactory,
) -> None:
    first = make_service()
    mid = first.save("The spare bike key hangs by the door", type="fact").id
    first.recall("bike key", count_use=True)
    first.close()
    assert make_service().get(mid).reference_count == 2


def test_the_legend_says_what_the_confidence_counts() -> None:
    assert "used or confirmed 2+ and 5+ times" in CONFIRMED_LEGEND
    assert "saved once and not used since" in CONFIRMED_LEGEND
