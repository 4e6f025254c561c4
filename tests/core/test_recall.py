"""Three-bucket recall: budgets, dump-all vs hybrid, freshness, old strong matches, no model, cache."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from tallei_desktop.core.embeddings import FastEmbedEmbedder, ModelState, NullEmbedder
from tallei_desktop.core.models import RecallMode
from tallei_desktop.core.recall import CONFIRMED_LEGEND, Budgets, RecallTuning, estimate_tokens
from tallei_desktop.core.service import MemoryService
from tests.conftest import REPO_ROOT
from tests.core.conftest import Clock, ServiceFactory
from tests.support.fake_embedder import HashEmbedder

TOPICS = [
    "gardening",
    "kubernetes",
    "sourdough",
    "cycling",
    "tax returns",
    "piano",
    "rust lifetimes",
    "birdwatching",
]


def _ids(items: object) -> set[str]:
    return {item.memory.id for item in items}  # type: ignore[attr-defined]


def _fill_long_term(service: MemoryService, n: int) -> list[str]:
    return [
        service.save(
            f"Fact {i}: the project codename {i} relates to {TOPICS[i % len(TOPICS)]} in some detail",
            type="fact",
        ).id
        for i in range(n)
    ]


def test_each_bucket_gets_its_memories(service: MemoryService) -> None:
    pref = service.save("I prefer metric units", platform="claude").id
    fact = service.save("My sister lives in Lisbon", type="fact").id
    event = service.save("Yesterday I had the quarterly review meeting", type="event").id
    result = service.recall("anything")
    assert _ids(result.preferences) == {pref}
    assert _ids(result.long_term) == {fact}
    assert _ids(result.short_term) == {event}
    assert result.long_term_mode is RecallMode.DUMP_ALL
    text = result.text
    assert text.index("## Preferences") < text.index("## Long-term memory") < text.index("## Recent")
    assert "[preference · claude · " in text and f"id {pref}]" in text
    # Seen once: no line names a confidence, and no legend explains one.
    assert "UNCONFIRMED" not in text and "MED and HIGH" not in text
    service.save("I prefer metric units", platform="chatgpt")  # a second assistant confirms it
    again = service.recall("anything").text
    assert "[preference · MED · claude, chatgpt · " in again and CONFIRMED_LEGEND in again


def test_buckets_stay_within_their_token_budgets(make_service: ServiceFactory) -> None:
    budgets = Budgets(preference=60, long_term=200, short_term=80, short_term_days=60)
    service = make_service(budgets=budgets)
    for i in range(30):
        service.save(f"I prefer option number {i} for the widget colour scheme", type="preference")
        service.save(
            f"Fact {i} about the long term archive of {TOPICS[i % 8]} and {TOPICS[(i // 8) % 8]}", type="fact"
        )
        service.save(f"Note {i}: look again at the {TOPICS[i % 8]} plan", type="note")
    service.drain()
    result = service.recall("widget colour")
    for items, budget in ((result.preferences, 60), (result.long_term, 200), (result.short_term, 80)):
        assert items, "each bucket should hold something"
        assert sum(estimate_tokens(i.memory.content) for i in items) <= budget
    assert result.long_term_mode is RecallMode.HYBRID
    assert sum(estimate_tokens(i.memory.content) for i in result.items) <= 340


def test_budget_a_bucket_leaves_unused_carries_further_matches(make_service: ServiceFactory) -> None:
    budgets = Budgets(preference=600, long_term=60, short_term=60, short_term_days=60)
    service = make_service(budgets=budgets)
    for i in range(12):
        service.save(f"Fact {i}: the widget colour was shade {i} in the {TOPICS[i % 8]} test", type="fact")
        service.save(
            f"Fact {i} about the long term archive of {TOPICS[i % 8]} and {TOPICS[(i // 8) % 8]}", type="fact"
        )
    service.drain()
    result = service.recall("widget colour shade")
    assert not result.preferences
    assert result.long_term_mode is RecallMode.HYBRID
    assert sum(estimate_tokens(i.memory.content) for i in result.long_term) <= 60
    # No preferences: their 600 tokens carry the widget facts long-term had no room for.
    assert result.more and "## More matches" in result.text
    assert not _ids(result.long_term) & _ids(result.more)
    assert all("widget" in i.memory.content for i in result.more)
    assert estimate_tokens(result.text) <= 720
    assert len([i for i in result.items if "widget" in i.memory.content]) == 12


def test_dump_all_orders_by_reference_count(service: MemoryService) -> None:
    low = service.save("The office wifi is called Pelican", type="fact").id
    high = service.save("The car is a blue 2019 Corolla", type="fact").id
    for _ in range(3):
        service.save("The car is a blue 2019 Corolla", type="fact")
    result = service.recall("")
    assert result.long_term_mode is RecallMode.DUMP_ALL
    assert [i.memory.id for i in result.long_term] == [high, low]
    assert result.long_term[0].memory.confidence == "MED"


def test_memory_saved_a_moment_ago_is_recalled_before_its_embedding(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder
) -> None:
    service = make_service(embedder=real_embedder)  # no worker: nothing gets embedded unless drained
    _fill_long_term(service, 400)  # far past the long-term budget: hybrid mode
    service.drain()
    assert service.recall("sourdough").long_term_mode is RecallMode.HYBRID
    fresh = service.save("Decided: the Zanzibar release ships with the new sync engine", type="decision").id
    assert not service.get(fresh).embedded
    by_words = service.recall("Zanzibar release")
    assert fresh in _ids(by_words.long_term)
    by_recency = service.recall("what changed lately")
    assert fresh in _ids(by_recency.long_term)


def test_old_event_that_matches_still_reaches_the_assistant(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    service = make_service(embedder=real_embedder)
    dentist = service.save("Dentist appointment with Dr. Okafor on 14 June at 9am", type="event").id
    clock.advance(days=150)
    service.save("Team lunch at the Thai place", type="event")
    _fill_long_term(service, 300)
    service.drain()
    matching = service.recall("When was my dentist appointment?")
    assert dentist in _ids(matching.items)
    paraphrase = service.recall("that visit to get my teeth checked with Okafor")
    assert dentist in _ids(paraphrase.items)
    unrelated = service.recall("kubernetes cluster upgrades")
    assert dentist not in _ids(unrelated.items), "outside the window and unrelated: left out by default"


def test_old_event_matches_in_dump_all_mode_too(service: MemoryService, clock: Clock) -> None:
    old = service.save("Dentist appointment with Dr. Okafor on 14 June", type="event").id
    clock.advance(days=150)
    service.drain()
    assert old not in _ids(service.recall("").items)
    result = service.recall("dentist")
    assert result.long_term_mode is RecallMode.DUMP_ALL
    assert old in _ids(result.long_term)


def _hybrid_with_the_real_model(make_service: ServiceFactory, embedder: FastEmbedEmbedder) -> MemoryService:
    """A service with the real model and 300 long-term memories: more than the bucket's budget."""
    service = make_service(embedder=embedder)
    _fill_long_term(service, 300)
    return service


def test_semantic_search_finds_paraphrases_with_the_real_model(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder
) -> None:
    service = _hybrid_with_the_real_model(make_service, real_embedder)
    target = service.save("The user's cat is called Miso and is allergic to chicken", type="fact").id
    service.drain()
    result = service.recall("what pet does the person have?")
    assert result.long_term_mode is RecallMode.HYBRID
    assert result.semantic_search
    assert target in _ids(result.long_term)


def test_a_hybrid_recall_shows_every_assistant_that_saved_a_memory(make_service: ServiceFactory) -> None:
    service = make_service()
    _fill_long_term(service, 400)
    port = service.save("The staging database listens on port 5433", type="fact", platform="claude").id
    service.save("The staging database listens on port 5433", type="fact", platform="chatgpt")
    service.drain()
    result = service.recall("staging database port")
    assert result.long_term_mode is RecallMode.HYBRID
    # Read once as a candidate, then given its provenance: both assistants, and the confirmation.
    [item] = [i for i in result.long_term if i.memory.id == port]
    assert item.memory.platforms == ("claude", "chatgpt")
    assert "[fact · MED · claude, chatgpt · " in result.text


def test_search_offers_the_answer_saved_right_after_a_question_with_the_real_model(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder
) -> None:
    service = _hybrid_with_the_real_model(make_service, real_embedder)
    asked = service.save("Which city is the team offsite going to be in this year?", platform="claude").id
    answer = service.save("Lisbon, in the second week of June.", platform="claude").id
    service.drain()
    hits = [h.memory.id for h in service.search("where is the team offsite this year", limit=5)]
    # The answer shares no word and little meaning with the query; it is found through its question.
    assert answer in hits and hits.index(answer) < hits.index(asked)


def test_without_a_model_recall_works_from_text_and_says_so(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    missing = FastEmbedEmbedder(model_dir=tmp_path / "no-model-here")
    service = make_service(embedder=missing)
    keep = service.save("Our staging database is on port 5433", type="fact").id
    _fill_long_term(service, 300)
    service.drain()
    result = service.recall("staging database port")
    assert not result.semantic_search
    assert "Semantic search is off" in result.text
    assert keep in _ids(result.long_term)
    assert service.status().pending_embeddings == 301  # kept for when a model appears
    assert service.search("staging database")[0].memory.id == keep


def test_null_embedder_leaves_lifecycle_working_by_words(make_service: ServiceFactory) -> None:
    service = make_service(embedder=NullEmbedder())
    service.save("I prefer tabs for indentation in Python code", platform="claude")
    service.save("I prefer spaces for indentation in Python code", platform="chatgpt")
    service.drain()
    assert len(service.conflicts()) == 1
    assert service.status().pending_embeddings == 2  # the vectors wait for a model


def test_recall_hits_bump_reference_counts_and_listing_alone_does_not(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder
) -> None:
    service = make_service(embedder=real_embedder)
    hit = service.save("The boat is moored at Pier 39", type="fact").id
    listed = service.save("The printer needs A4 paper", type="fact").id
    service.drain()
    for _ in range(2):
        result = service.recall("where is the boat moored", count_use=True)
        assert {hit, listed} <= _ids(result.long_term)
    service.drain()  # bumps are written by the background round
    assert service.get(hit).reference_count == 3
    assert service.get(hit).last_referenced_at is not None
    assert service.get(listed).reference_count == 1


def test_cached_recall_is_invalidated_by_a_save_in_this_process(service: MemoryService) -> None:
    service.save("The gym opens at 6am", type="fact")
    first = service.recall("gym")
    assert service.recall("gym") is first, "an unchanged store answers from the cache"
    new = service.save("The gym closes at 10pm on weekdays", type="fact").id
    assert new in _ids(service.recall("gym").items)


def test_cached_recall_is_invalidated_by_every_kind_of_change(service: MemoryService) -> None:
    a = service.save("I prefer green tea", platform="claude").id
    service.drain()
    for change in (
        lambda: service.pin(a),
        lambda: service.update(a, content="I prefer jasmine tea"),
        lambda: service.forget(a),
        lambda: service.restore(a),
    ):
        before = service.recall("tea")
        change()
        after = service.recall("tea")
        assert after is not before
        assert after.text != before.text or after.preferences != before.preferences


_OTHER_PROCESS = textwrap.dedent(
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
    action = sys.argv[1]
    if action == "save":
        print(service.save("The spare house key is under the green flowerpot", type="fact").id)
    else:
        service.forget(sys.argv[2])
    service.close()
    """
)


def _other_process(path: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS.format(root=str(REPO_ROOT), path=str(path)), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_recall_after_save_in_other_process_sees_it(make_service: ServiceFactory, tmp_path: Path) -> None:
    path = tmp_path / "tallei.db"
    service = make_service(path=path, use_clock=False)
    service.save("The front door key is with the neighbour", type="fact")
    cached = service.recall("house key")
    assert service.recall("house key") is cached
    new_id = _other_process(path, "save")
    after_save = service.recall("house key")
    assert new_id in _ids(after_save.items)
    _other_process(path, "forget", new_id)
    after_forget = service.recall("house key")
    assert new_id not in _ids(after_forget.items)


def test_promotion_of_busy_short_term_memories(service: MemoryService) -> None:
    note = service.save("Note: the bakery on Elm Street sells rye on Tuesdays", type="note").id
    service.drain()
    for _ in range(2):
        service.recall("bakery rye", count_use=True)
    service.drain()
    promoted = service.get(note)
    assert promoted.reference_count == 3
    assert promoted.bucket == "long_term"
    assert note in _ids(service.recall("bakery").long_term)


def test_eviction_archives_untouched_long_term_memories(service: MemoryService, clock: Clock) -> None:
    stale = service.save("The old VPN endpoint was vpn1.example.net", type="fact").id
    pinned = service.save("My blood type is O negative", type="fact", pinned=True).id
    service.drain()
    clock.advance(days=200)
    # Not a newer value of the stale one: that would retire it (lifecycle), which is not the point here.
    fresh = service.save("The office printer is on the second floor", type="fact").id
    clock.advance(days=170)
    assert service.run_maintenance() == (0, 1)
    assert service.get(stale).status == "archived"
    assert service.get(pinned).status == "active"
    dump = service.recall("")
    assert stale not in _ids(dump.items) and fresh in _ids(dump.items)
    # Archived: not searched by default.
    assert stale not in [hit.memory.id for hit in service.search("vpn1.example.net")]
    assert service.search("vpn1.example.net", include_archived=True)[0].memory.id == stale
    found = service.recall("old VPN endpoint vpn1", count_use=True)
    assert stale in _ids(found.items), "archived memories are still recalled when they match"
    service.drain()
    assert service.get(stale).status == "active", "a hit brings an archived memory back"


def test_short_term_window_is_configurable(make_service: ServiceFactory, clock: Clock) -> None:
    service = make_service(budgets=Budgets(1500, 4800, 1700, short_term_days=7))
    event = service.save("Met Priya for coffee", type="event").id
    clock.advance(days=8)
    service.drain()
    assert event not in _ids(service.recall("").short_term)
    assert timedelta(days=7) < clock() - service.get(event).occurred_at


class _StillLoading(HashEmbedder):
    """A model that is still downloading: loading, never ready in time."""

    @property
    def state(self) -> ModelState:
        return ModelState.LOADING

    def wait_ready(self, timeout: float) -> bool:
        return False


def test_recall_does_not_stall_on_a_model_still_loading(make_service: ServiceFactory) -> None:
    embedder = _StillLoading()
    service = make_service(embedder=embedder)
    mid = service.save("The piano tuner comes every March", type="fact").id
    result = service.recall("piano tuner")
    assert mid in _ids(result.long_term)
    assert not result.semantic_search and "Semantic search is off" in result.text
    assert embedder.texts_embedded == 0


def test_a_full_preference_bucket_keeps_an_older_preference_that_matches(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder, clock: Clock
) -> None:
    budgets = Budgets(preference=120, long_term=200, short_term=100, short_term_days=60)
    service = make_service(embedder=real_embedder, budgets=budgets)
    seats = service.save("I always want a window seat when I fly", type="preference").id
    later = []
    for topic in TOPICS:
        clock.advance(hours=1)
        later.append(service.save(f"I like reading about {topic} in the evening", type="preference").id)
    service.drain()
    # Room for about four preferences: with nothing to match, the newest come first.
    newest = service.recall("").preferences
    assert seats not in _ids(newest) and _ids(newest) <= set(later)
    # Asked about flying, the seat preference is taken before equally confirmed newer ones.
    assert seats in _ids(service.recall("booking a flight").preferences)


def test_recall_with_other_tuning_ranks_with_it_and_leaves_the_cache_alone(service: MemoryService) -> None:
    for i in range(3):
        service.save(f"Rowan keeps bees number {i} behind the barn.", type="fact", platform="claude")
    service.drain()
    cached = service.recall("bees")
    assert service.recall("bees") is cached
    # A hybrid-only variant would not show here (dump-all); counting no text hit as a hit does.
    other = service.recall("bees", tuning=RecallTuning(search_min_similarity=0.0))
    assert other is not cached and other.text == cached.text
    assert service.recall("bees") is cached  # the variant's answer was not kept in its place


def test_tuning_refuses_a_negative_field() -> None:
    with pytest.raises(ValueError, match="alongside_reach is -1"):
        RecallTuning(alongside_reach=-1)
