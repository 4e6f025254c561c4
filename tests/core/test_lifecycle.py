"""Dedup, supersede, cross-platform conflicts and their resolution, with the real model."""

from __future__ import annotations

import pytest

from tallei_desktop.core.conflicts import distinctive_tokens, is_duplicate, subject_words
from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.models import ConflictResolution, MemoryStatus
from tallei_desktop.core.service import MemoryService
from tests.core.conftest import ServiceFactory


@pytest.fixture
def svc(make_service: ServiceFactory, real_embedder: FastEmbedEmbedder) -> MemoryService:
    return make_service(embedder=real_embedder)


def test_near_identical_text_confirms_the_existing_memory(svc: MemoryService) -> None:
    first = svc.save("I prefer dark mode", platform="claude").id
    second = svc.save("I like dark mode", platform="chatgpt").id
    svc.drain()
    assert svc.get(second).status is MemoryStatus.MERGED
    kept = svc.get(first)
    assert kept.status is MemoryStatus.ACTIVE
    assert kept.reference_count == 2
    assert kept.platforms == ("claude", "chatgpt")
    assert [i.memory.id for i in svc.recall("theme").preferences] == [first]
    assert not svc.conflicts()


def test_alike_sentences_with_different_details_are_not_merged(svc: MemoryService) -> None:
    monday = svc.save("The planning meeting is on Monday", type="event").id
    tuesday = svc.save("The planning meeting is on Tuesday", type="event").id
    nine = svc.save("My flight to Oslo leaves at 9am", type="fact").id
    eleven = svc.save("My flight to Oslo leaves at 11am", type="fact").id
    svc.drain()
    for mid in (monday, tuesday, nine, eleven):
        assert svc.get(mid).status is MemoryStatus.ACTIVE


def test_new_preference_from_same_platform_supersedes_the_old(svc: MemoryService) -> None:
    old = svc.save("I prefer tabs for indentation", platform="claude").id
    new = svc.save("I prefer spaces for indentation", platform="claude").id
    svc.drain()
    retired = svc.get(old)
    assert retired.status is MemoryStatus.SUPERSEDED
    assert retired.superseded_by == new
    recalled = {i.memory.id for i in svc.recall("indentation").items}
    assert new in recalled and old not in recalled
    assert svc.list(status="superseded")[0].id == old  # the chain is kept


def test_unrelated_preferences_from_one_platform_both_stay(svc: MemoryService) -> None:
    a = svc.save("I prefer dark mode", platform="claude").id
    b = svc.save("I prefer Python for scripting", platform="claude").id
    c = svc.save("I prefer Python type hints everywhere", platform="claude").id
    svc.drain()
    assert all(svc.get(m).status is MemoryStatus.ACTIVE for m in (a, b, c))


def test_platforms_that_disagree_raise_a_conflict_that_recall_shows(svc: MemoryService) -> None:
    tabs = svc.save("I prefer tabs for indentation", platform="claude").id
    spaces = svc.save("I prefer spaces for indentation", platform="chatgpt").id
    svc.drain()
    [conflict] = svc.conflicts()
    assert {conflict.memory_a.id, conflict.memory_b.id} == {tabs, spaces}
    assert {conflict.memory_a.platform, conflict.memory_b.platform} == {"claude", "chatgpt"}
    result = svc.recall("code style")
    assert result.open_conflicts == 1
    assert f"CONFLICT {conflict.id}" in result.text
    marked = [i for i in result.preferences if i.conflict_ids]
    assert {i.memory.id for i in marked} == {tabs, spaces}


@pytest.mark.parametrize(
    ("resolution", "active"),
    [("keep_first", {"a"}), ("keep_second", {"b"}), ("keep_both", {"a", "b"})],
)
def test_resolving_a_conflict(svc: MemoryService, resolution: str, active: set[str]) -> None:
    ids = {
        "a": svc.save("I prefer window seats on flights", platform="claude").id,
        "b": svc.save("I prefer aisle seats on flights", platform="gemini").id,
    }
    svc.drain()
    [conflict] = svc.conflicts()
    done = svc.resolve_conflict(conflict.id, resolution)
    assert done.status == "resolved" and done.resolution == resolution
    assert not svc.conflicts()
    survivors = {k for k, mid in ids.items() if svc.get(mid).status is MemoryStatus.ACTIVE}
    assert survivors == active
    with pytest.raises(InvalidInput, match="already resolved"):
        svc.resolve_conflict(conflict.id, "keep_both")


def test_resolving_by_replacing_with_edited_text(svc: MemoryService) -> None:
    svc.save("I prefer window seats on flights", platform="claude")
    svc.save("I prefer aisle seats on flights", platform="gemini")
    svc.drain()
    [conflict] = svc.conflicts()
    svc.resolve_conflict(conflict.id, "replace", content="Window seat on long flights, aisle on short ones")
    svc.drain()
    prefs = [i.memory for i in svc.recall("seats").preferences]
    assert [m.content for m in prefs] == ["Window seat on long flights, aisle on short ones"]
    assert not svc.conflicts()


def test_bad_conflict_resolutions_change_nothing(svc: MemoryService) -> None:
    svc.save("I prefer window seats on flights", platform="claude")
    svc.save("I prefer aisle seats on flights", platform="gemini")
    svc.drain()
    [conflict] = svc.conflicts()
    with pytest.raises(InvalidInput):
        svc.resolve_conflict(conflict.id, "flip_a_coin")
    with pytest.raises(InvalidInput):
        svc.resolve_conflict(conflict.id, "replace")  # no text
    with pytest.raises(InvalidInput):
        svc.resolve_conflict(conflict.id, "keep_first", content="extra")
    with pytest.raises(NotFound):
        svc.resolve_conflict("c0123456789ab", "keep_first")
    assert [c.id for c in svc.conflicts()] == [conflict.id]


def test_pinned_preference_is_never_superseded_silently(svc: MemoryService) -> None:
    pinned = svc.save("I prefer tabs for indentation", platform="claude", pinned=True).id
    svc.save("I prefer spaces for indentation", platform="claude")
    svc.drain()
    assert svc.get(pinned).status is MemoryStatus.ACTIVE
    assert len(svc.conflicts()) == 1


def test_forgetting_one_side_closes_its_conflict(svc: MemoryService) -> None:
    a = svc.save("I prefer vim keybindings", platform="cursor").id
    svc.save("I prefer emacs keybindings", platform="claude")
    svc.drain()
    assert len(svc.conflicts()) == 1
    svc.forget(a)
    assert not svc.conflicts()
    [closed] = svc.conflicts(include_resolved=True)
    assert closed.resolution is ConflictResolution.FORGOTTEN
    assert [c.resolution for c in svc.history(a).conflicts] == [ConflictResolution.FORGOTTEN]


def test_forgotten_is_not_a_resolution_anyone_can_choose(svc: MemoryService) -> None:
    svc.save("I prefer vim keybindings", platform="cursor")
    svc.save("I prefer emacs keybindings", platform="claude")
    svc.drain()
    [conflict] = svc.conflicts()
    with pytest.raises(InvalidInput, match="keep_first, keep_second, keep_both, replace") as info:
        svc.resolve_conflict(conflict.id, "forgotten")
    assert "\n" not in str(info.value)
    assert [c.id for c in svc.conflicts()] == [conflict.id]


def test_text_helpers() -> None:
    assert subject_words("I prefer tabs for indentation") == {"tabs", "indentation"}
    assert distinctive_tokens("Meeting with Ana on Monday at 10") == {"ana", "monday", "10"}
    assert is_duplicate("I prefer dark mode", "I like dark mode", 0.96)
    assert not is_duplicate("The meeting is on Monday", "The meeting is on Tuesday", 0.99)
    assert not is_duplicate("I prefer dark mode", "I like dark mode", 0.85)
