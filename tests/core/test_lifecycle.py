"""Dedup, supersede, cross-platform conflicts and their resolution, with the real model."""

from __future__ import annotations

import pytest

from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.lifecycle.text import (
    claims_differ,
    content_sequence,
    distinctive_tokens,
    is_duplicate,
    replaces_value,
    subject_words,
)
from tallei_desktop.core.models import ConflictResolution, MemoryStatus
from tallei_desktop.core.recall import Budgets, estimate_tokens
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
    for mid in (monday, tuesday, eleven):
        assert svc.get(mid).status is MemoryStatus.ACTIVE
    # Not merged: the later time is the same claim with another value, so it replaces the earlier.
    assert svc.get(nine).status is MemoryStatus.SUPERSEDED
    assert svc.get(nine).superseded_by == eleven


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
    # Settling pins nothing: keeping both does not make two contradicting memories lead every recall.
    assert not any(svc.get(mid).pinned for mid in ids.values())
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


def test_no_labelled_contradiction_counts_as_a_duplicate_however_similar() -> None:
    from tests.core.test_quality_sets import CONFLICT_PAIRS, load_pairs

    conflicting = [p for p in load_pairs(CONFLICT_PAIRS) if p.conflicting]
    assert len(conflicting) >= 50
    merged = [(p.first, p.second) for p in conflicting if is_duplicate(p.first, p.second, 1.0)]
    assert merged == []


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Likes trains over planes for short trips", "Likes planes over trains for short trips"),
        ("User likes cats more than dogs", "User likes cats less than dogs"),
        ("The daughter is seven years old", "The daughter is nine years old"),
        ("Wants emails in a formal tone", "Wants emails in a casual tone"),
        ("The user is vegetarian", "The user is not vegetarian"),
        ("User likes bullet points", "User dislikes bullet points"),
        ("Decided to accept the offer", "Decided to turn down the offer"),
    ],
)
def test_contradictions_are_not_duplicates(a: str, b: str) -> None:
    assert not is_duplicate(a, b, 0.99)
    assert not is_duplicate(b, a, 0.99)


def test_same_claim_in_other_words_is_a_duplicate() -> None:
    assert is_duplicate("The daughter is 7 years old", "The daughter is seven years old", 0.95)
    assert is_duplicate("Prefers dark mode in all apps", "I prefer dark mode in all app", 0.95)
    assert is_duplicate("The trip is booked for the weekend", "The trip is booked for the weekend now", 0.95)


def test_a_contradicting_save_from_another_platform_is_kept_not_merged(svc: MemoryService) -> None:
    first = svc.save("Likes trains over planes for trips under 800 km.", platform="chatgpt").id
    second = svc.save("Likes planes over trains for trips under 800 km.", platform="gemini").id
    svc.drain()
    assert svc.get(first).status is MemoryStatus.ACTIVE
    assert svc.get(second).status is not MemoryStatus.MERGED
    assert svc.get(first).reference_count == 1


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("User lives in Lisbon.", "User lives in Madrid."),
        ("The team is going with AWS for hosting.", "The team is going with Google Cloud for hosting."),
        ("The user is vegetarian.", "The user is not vegetarian and eats meat."),
        ("User decided to accept the job offer.", "User decided to turn down the job offer."),
    ],
)
def test_same_claim_with_another_value_differs(a: str, b: str) -> None:
    assert claims_differ(a, b) and claims_differ(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The user's sister is a doctor.", "The user's brother is a lawyer."),
        ("User was born in Porto.", "User grew up in Porto and Braga."),
        ("The API is written in Go.", "The frontend is written in TypeScript."),
        ("User lives in Lisbon.", "User lives in Lisbon."),
        ("Chose PostgreSQL as the main database.", "Chose Redis for caching."),
    ],
)
def test_facts_that_can_both_be_true_do_not_differ(a: str, b: str) -> None:
    assert not claims_differ(a, b)


def test_facts_from_two_platforms_that_contradict_open_a_conflict(svc: MemoryService) -> None:
    lisbon = svc.save("User lives in Lisbon.", type="fact", platform="claude").id
    madrid = svc.save("User lives in Madrid.", type="fact", platform="chatgpt").id
    works = svc.save("User works in Lisbon at a design agency.", type="fact", platform="gemini").id
    svc.drain()
    pairs = {frozenset((c.memory_a.id, c.memory_b.id)) for c in svc.conflicts()}
    assert frozenset((lisbon, madrid)) in pairs
    # Working in Lisbon agrees with living there; against living in Madrid the person may be asked.
    assert frozenset((lisbon, works)) not in pairs


def test_newer_fact_from_the_same_platform_supersedes_keeping_the_chain(svc: MemoryService) -> None:
    old = svc.save("The office is in Berlin.", type="fact", platform="claude").id
    new = svc.save("The office is in Munich.", type="fact", platform="claude").id
    other = svc.save("The office has a rooftop terrace.", type="fact", platform="claude").id
    svc.drain()
    assert svc.get(old).status is MemoryStatus.SUPERSEDED
    assert svc.get(old).superseded_by == new
    assert svc.get(new).status is MemoryStatus.ACTIVE
    assert svc.get(other).status is MemoryStatus.ACTIVE
    assert not svc.conflicts()


def test_remarks_sharing_only_names_and_dates_do_not_replace_each_other() -> None:
    assert replaces_value("The office is in Munich.", "The office is in Berlin.")
    assert not replaces_value("[8 May 2023] Ben: Thanks!", "[8 May 2023] Ana: Thanks!")
    assert not replaces_value("Ben: see you soon!", "Ana: see you soon!")


def test_a_conversation_saved_turn_by_turn_keeps_every_turn(svc: MemoryService) -> None:
    turns = [
        "[8 May 2023] Ana: Thanks, see you soon!",
        "[8 May 2023] Ben: Thanks, see you soon!",
        "Ana: I went to the pottery class.",
        "Ben: I went to the climbing class.",
    ]
    ids = [svc.save(t, type="fact", platform="claude").id for t in turns]
    svc.drain()
    assert [svc.get(i).status for i in ids] == [MemoryStatus.ACTIVE] * 4


def test_a_memory_in_many_conflicts_lists_two_in_recall_and_the_block_keeps_its_total(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder
) -> None:
    budgets = Budgets(preference=300, long_term=100, short_term=100, short_term_days=60)
    svc = make_service(embedder=real_embedder, budgets=budgets)
    ways = {"claude": "tabs", "chatgpt": "spaces", "gemini": "two spaces", "cursor": "four spaces"}
    ids = {
        p: svc.save(f"I prefer {w} for indentation", platform=p, pinned=p == "claude").id
        for p, w in ways.items()
    }
    svc.drain()
    tabs = ids["claude"]
    against_tabs = [c for c in svc.conflicts() if tabs in {c.memory_a.id, c.memory_b.id}]
    assert len(against_tabs) == 3
    result = svc.recall("indentation")
    [item] = [i for i in result.preferences if i.memory.id == tabs]
    assert set(item.conflict_ids) == {c.id for c in against_tabs}
    line = result.text[result.text.index(f"id {tabs}") :].split("\n- ")[0]
    assert line.count("⚠ CONFLICT") == 2 and "⚠ 1 more open conflicts with this memory" in line
    # The warnings count against the preference budget: not every preference fits 300 tokens.
    assert 0 < len(result.preferences) < len(ways)
    assert estimate_tokens(result.text) <= budgets.total


#: What two assistants learn about one person in the first days: about different things, each true
#: beside every other. In a store this small every memory is every other's nearest neighbour.
FIRST_DAYS = [
    ("preference", "I always want a window seat when I fly."),
    ("preference", "Prefers answers in British English."),
    ("preference", "Likes reading about birdwatching in the evening."),
    ("preference", "Wants code examples in Python unless asked otherwise."),
    ("preference", "Prefers a short summary before the details."),
    ("preference", "Enjoys cooking Thai food at the weekend."),
    ("preference", "Likes meetings after 10 am."),
    ("preference", "Prefers metric units."),
    ("fact", "Has a sister called Ruth who lives in Glasgow."),
    ("fact", "Works as a nurse at St Mary's hospital."),
    ("fact", "Drives a blue Skoda Fabia."),
    ("fact", "Is learning to play the cello."),
    ("fact", "Has two cats, Miso and Tofu."),
    ("fact", "Runs a half marathon every spring."),
    ("fact", "Is allergic to penicillin."),
    ("fact", "Bought a flat in Leith last year."),
]


def test_unrelated_memories_from_two_assistants_raise_no_conflict_and_retire_nothing(
    svc: MemoryService,
) -> None:
    ids = [
        svc.save(text, type=mtype, platform=("claude", "chatgpt")[i % 2]).id
        for i, (mtype, text) in enumerate(FIRST_DAYS)
    ]
    svc.drain()
    assert [svc.get(i).status for i in ids] == [MemoryStatus.ACTIVE] * len(ids)
    assert [(c.memory_a.content, c.memory_b.content) for c in svc.conflicts()] == []


#: Records one assistant keeps about several projects, teams and people, each in the same words
#: but about another one: none replaces another.
RECORDS_OF_ONE_SHAPE = (
    "Our production cluster for Lumen runs 31 nodes in Render ap-south-1.",
    "Our production cluster for Eclipse runs 12 nodes in Render ca-central-1.",
    "Settled on 2-week sprints for the data team starting in March.",
    "Settled on 3-week sprints for the mobile team starting in October.",
    "My partner Priya works as a developer advocate at Juno Travel and commutes to Lyon on Fridays.",
    "My colleague Anya works as a data scientist at Hearth Insurance and commutes to Lyon on Mondays.",
    "We opted for Obsidian over Confluence for note taking across all data repositories.",
    "We opted for Grafana over Datadog for dashboards across all platform repositories.",
)


def test_records_of_one_shape_about_other_things_retire_nothing(svc: MemoryService) -> None:
    ids = [
        svc.save(
            text, type="decision" if text.startswith(("Settled", "We opted")) else "fact", platform="claude"
        ).id
        for text in RECORDS_OF_ONE_SHAPE
    ]
    svc.drain()
    retired = [svc.get(i).content for i in ids if svc.get(i).status is not MemoryStatus.ACTIVE]
    assert retired == []


def test_content_words_compare_by_a_light_stem() -> None:
    assert content_sequence("Never flies anywhere") == content_sequence("Flying anywhere")
    assert content_sequence("Visited three cities") == content_sequence("Visited three city")
    assert content_sequence("Drafted the apps") == content_sequence("Draft the app")
