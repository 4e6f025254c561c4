"""Every text an edit replaced stays in the history and can be brought back, as the person's edit."""

from __future__ import annotations

import pytest

from tallei_desktop.core import APP_PLATFORM, EventKind, InvalidInput, MemoryService, NotFound
from tests.core.conftest import Clock, ServiceFactory


def test_earlier_texts_are_listed_newest_first_with_when_and_by_whom(
    service: MemoryService, clock: Clock
) -> None:
    mid = service.save("The spare key is under the mat", type="fact", platform="chatgpt").id
    clock.advance(minutes=1)
    first_edit = clock.now
    service.update(mid, content="The spare key is with the neighbour", platform="gemini")
    clock.advance(minutes=1)
    service.update(mid, content="The spare key is in the lockbox")
    earlier = service.history(mid).earlier
    assert [(t.content, t.replaced_by, t.replaced_at) for t in earlier] == [
        ("The spare key is with the neighbour", APP_PLATFORM, clock.now),
        ("The spare key is under the mat", "gemini", first_edit),
    ]
    assert len({t.id for t in earlier}) == 2


def test_bringing_back_an_earlier_text_is_an_edit_by_the_person_that_keeps_the_current_text(
    make_service: ServiceFactory, clock: Clock
) -> None:
    service = make_service()
    other_process = make_service()  # a second connection on the same file, as an MCP server has
    mid = service.save("The boiler was serviced in March", type="fact", platform="claude").id
    service.update(mid, content="The boiler was serviced in April", platform="cursor")
    service.drain()
    assert "April" in other_process.recall("boiler serviced").text  # now cached there
    [march] = service.history(mid).earlier
    seq = service.last_change_seq()
    clock.advance(minutes=3)

    back = service.bring_back_text(march.id)

    assert back.content == "The boiler was serviced in March"
    assert back.platform == "claude"  # who first saved it does not change
    last = back.provenance[-1]
    assert (last.action, last.platform, last.at, last.previous) == (
        "edited",
        APP_PLATFORM,
        clock.now,
        "The boiler was serviced in April",
    )
    assert [t.content for t in service.history(mid).earlier] == [
        "The boiler was serviced in April",
        "The boiler was serviced in March",
    ]
    [event] = service.changes_since(seq).events
    assert (event.kind, event.memory_id, event.platform) == (EventKind.MEMORY_EDITED, mid, APP_PLATFORM)
    for svc in (service, other_process):  # no recall cache anywhere still answers with April
        text = svc.recall("boiler serviced").text
        assert "March" in text and "April" not in text
    assert service.status().pending_embeddings == 1  # the brought-back text is embedded again


def test_bringing_back_the_text_a_memory_already_has_changes_nothing(service: MemoryService) -> None:
    mid = service.save("Dinner is at seven", type="fact", platform="claude").id
    service.update(mid, content="Dinner is at eight")
    service.update(mid, content="Dinner is at seven")
    same = next(t for t in service.history(mid).earlier if t.content == "Dinner is at seven")
    seq = service.last_change_seq()
    assert service.bring_back_text(same.id).content == "Dinner is at seven"
    assert service.changes_since(seq).events == ()


def test_an_earlier_text_of_a_forgotten_or_erased_memory_cannot_be_brought_back(
    service: MemoryService,
) -> None:
    mid = service.save("Lunch is at one", type="fact", platform="claude").id
    service.update(mid, content="Lunch is at two")
    [one] = service.history(mid).earlier
    service.forget(mid)
    with pytest.raises(InvalidInput, match="only active memories can be edited"):
        service.bring_back_text(one.id)
    service.purge(mid)
    with pytest.raises(NotFound, match="No earlier text has the id"):
        service.bring_back_text(one.id)
    with pytest.raises(InvalidInput, match="is not the id of an earlier text"):
        service.bring_back_text("not an id")


def test_the_person_in_tallei_is_not_an_assistant_to_list_or_pause(service: MemoryService) -> None:
    a = service.save("I prefer tabs for indentation", platform="claude").id
    service.save("I prefer spaces for indentation", platform="chatgpt")
    service.update(a, content="I prefer tabs for all indentation")
    service.drain()
    [conflict] = service.conflicts()
    service.resolve_conflict(conflict.id, "replace", content="Tabs in Go, spaces in Python")
    assert {u.platform for u in service.platform_usage()} == {"claude", "chatgpt"}
    with pytest.raises(InvalidInput, match="not an assistant"):
        service.set_platform_paused(APP_PLATFORM, True)
    assert service.paused_platforms() == frozenset()


def test_earlier_texts_come_along_in_an_export_and_can_be_brought_back_after_import(
    service: MemoryService, make_service: ServiceFactory
) -> None:
    mid = service.save("The recycling goes out on Mondays", type="fact", platform="claude").id
    service.update(mid, content="The recycling goes out on Tuesdays", platform="gemini")
    other = make_service(path=service.db.path.with_name("other.db"))
    other.import_memories(service.export_memories())
    [monday] = other.history(mid).earlier
    assert (monday.content, monday.replaced_by) == ("The recycling goes out on Mondays", "gemini")
    assert other.bring_back_text(monday.id).content == "The recycling goes out on Mondays"
