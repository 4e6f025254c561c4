"""The table view's listing, history and platform usage, on real encrypted stores.

The property tests compare every filter, sort, count, offset page and keyset walk with a brute-force
Python model of the same memories (read back one by one with ``get``).
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tallei_desktop.core.errors import InvalidInput, NotFound
from tallei_desktop.core.models import (
    Bucket,
    ConflictResolution,
    ConflictStatus,
    Memory,
    MemoryFilter,
    MemoryStatus,
    MemoryType,
    SortKey,
)
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store import listing
from tests.core.conftest import Clock, ServiceFactory

PLATFORMS = ("claude", "chatgpt", "cursor", "gemini")
# Words the porter stemmer leaves alone and none of which starts another: FTS prefix matching of
# these is plain ``startswith`` on the words, which the model below can state exactly.
WORDS = ("river", "stone", "cloud", "tiger", "lemon", "piano", "orbit", "mango")
TEXTS = ("", "river", "riv", "RIVER stone", "pia orbit", "zzz", "!!", "mango cloud tiger", "Épée")


@dataclass(frozen=True, slots=True)
class Corpus:
    service: MemoryService
    memories: tuple[Memory, ...]  # in insertion (rowid) order


def build_corpus(service: MemoryService, clock: Clock, *, size: int = 90, seed: int = 7) -> Corpus:
    """A store holding every status, type, bucket and platform, with ties on every sort key."""
    rng = random.Random(seed)
    ids: list[str] = []

    def save(text: str, **kwargs: object) -> None:
        result = service.save(text, **kwargs)  # type: ignore[arg-type]
        if not result.confirmed_existing:
            ids.append(result.id)

    # Long-term memories left untouched for over a year get archived by the first background round.
    for i in range(8):
        save(
            f"Old fact {i} about the {WORDS[i]} and the {WORDS[(i + 3) % 8]}", type="fact", platform="gemini"
        )
    clock.advance(days=400)
    # Same-platform preferences on one subject: the newer supersedes the older.
    save("I prefer tabs for indentation in Python code", platform="claude")
    clock.advance(seconds=5)
    save("I prefer spaces for indentation in Python code", platform="claude")
    # A near-duplicate in other words is merged into the first.
    save("The river trip with Ana is booked for the weekend", type="event", platform="cursor")
    clock.advance(seconds=5)
    save("The river trip with Ana is booked for the weekend now", type="event", platform="chatgpt")
    for i in range(size):
        words = rng.sample(WORDS, rng.randint(1, 3))
        if rng.random() < 0.2:
            words[0] = words[0].capitalize()
        text = " ".join(words) + f" {rng.choice(['note', 'Épée', 'zebra', 'apple', 'éclair'])} {i}"
        occurred = clock.now - timedelta(days=rng.randint(0, 90)) if rng.random() < 0.5 else None
        save(
            text,
            type=rng.choice(list(MemoryType)),
            platform=rng.choice(PLATFORMS),
            pinned=rng.random() < 0.2,
            occurred_at=occurred,
        )
        if rng.random() < 0.5:
            clock.advance(seconds=rng.choice([1, 60, 3600]))
    service.drain()
    service.run_maintenance()
    active = [mid for mid in ids[12:] if service.get(mid).status is MemoryStatus.ACTIVE]
    for mid in rng.sample(active, 12):
        # Confirmation by another platform: the platform shows up in provenance only.
        save(service.get(mid).content, platform=rng.choice(PLATFORMS))
        clock.advance(seconds=rng.choice([0, 30]))
    for mid in rng.sample(active, 5):
        service.update(mid, pinned=True)
    for mid in rng.sample(active, 8):
        service.forget(mid)
    service.drain()
    return Corpus(service, tuple(service.get(mid) for mid in ids))


@pytest.fixture
def corpus(make_service: ServiceFactory, clock: Clock) -> Corpus:
    return build_corpus(make_service(), clock)


def matches(m: Memory, f: MemoryFilter) -> bool:
    words = [w.casefold() for w in "".join(c if c.isalnum() else " " for c in f.text).split()]
    content_words = "".join(c if c.isalnum() else " " for c in m.content.casefold()).split()
    return (
        (not f.statuses or m.status in f.statuses)
        and (not f.buckets or m.bucket in f.buckets)
        and (not f.types or m.type in f.types)
        and (not f.platforms or bool(set(m.platforms) & f.platforms))
        and (f.pinned is None or m.pinned is f.pinned)
        and all(any(_fold(c).startswith(_fold(w)) for c in content_words) for w in words)
    )


def _fold(word: str) -> str:
    # unicode61 removes diacritics: "Épée" is indexed as "epee".
    return word.translate(str.maketrans("éèÉ", "eee"))


_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def sort_value(m: Memory, key: SortKey) -> object:
    match key:
        case SortKey.UPDATED:
            return m.updated_at
        case SortKey.CREATED:
            return m.created_at
        case SortKey.OCCURRED:
            return m.occurred_at
        case SortKey.LAST_USED:
            # Never used sorts as the oldest.
            last = m.last_referenced_at
            return (last is not None, last or datetime.min.replace(tzinfo=UTC))
        case SortKey.REFERENCES:
            return m.reference_count
        case SortKey.CONTENT:
            # SQLite's NOCASE folds ASCII letters only; the rest compares by code point.
            return m.content.translate(_ASCII_FOLD)
        case SortKey.TYPE:
            return str(m.type)
        case SortKey.PLATFORM:
            return m.platform
        case SortKey.PINNED:
            return m.pinned


def model(corpus: Corpus, f: MemoryFilter, key: SortKey, descending: bool) -> list[str]:
    rows = [(sort_value(m, key), rowid, m.id) for rowid, m in enumerate(corpus.memories) if matches(m, f)]
    rows.sort(key=lambda r: (r[0], r[1]), reverse=descending)
    return [mid for _, _, mid in rows]


def walk(
    service: MemoryService, f: MemoryFilter, key: SortKey, descending: bool, limit: int
) -> Iterator[str]:
    cursor: str | None = None
    for _ in range(1_000):
        page = service.list_page(f, sort=key, descending=descending, limit=limit, after=cursor)
        assert len(page.memories) <= limit
        yield from (m.id for m in page.memories)
        if page.next_cursor is None:
            return
        assert len(page.memories) == limit
        cursor = page.next_cursor
    raise AssertionError("keyset paging did not end")


filters = st.builds(
    MemoryFilter,
    buckets=st.frozensets(st.sampled_from(list(Bucket))),
    types=st.frozensets(st.sampled_from(list(MemoryType)), max_size=3),
    platforms=st.frozensets(st.sampled_from([*PLATFORMS, "nobody"]), max_size=2),
    statuses=st.frozensets(st.sampled_from(list(MemoryStatus))),
    pinned=st.sampled_from([None, True, False]),
    text=st.sampled_from(TEXTS),
)
PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def test_corpus_holds_every_status_type_and_platform(corpus: Corpus) -> None:
    mems = corpus.memories
    assert {m.status for m in mems} == set(MemoryStatus)
    assert {m.type for m in mems} == set(MemoryType)
    assert {m.platform for m in mems} == set(PLATFORMS)
    assert any(set(m.platforms) != {m.platform} for m in mems)
    assert any(m.last_referenced_at is None for m in mems) and any(m.last_referenced_at for m in mems)
    assert len({m.updated_at for m in mems}) < len(mems)  # ties, so the rowid tie-break matters


@PROPERTY
@given(f=filters, key=st.sampled_from(list(SortKey)), descending=st.booleans(), limit=st.integers(1, 40))
def test_keyset_walk_and_count_agree_with_the_model(
    corpus: Corpus, f: MemoryFilter, key: SortKey, descending: bool, limit: int
) -> None:
    expected = model(corpus, f, key, descending)
    assert corpus.service.count(f) == len(expected)
    assert list(walk(corpus.service, f, key, descending, limit)) == expected


@PROPERTY
@given(
    f=filters,
    key=st.sampled_from(list(SortKey)),
    descending=st.booleans(),
    limit=st.integers(1, 40),
    offset=st.integers(0, 120),
)
def test_offset_page_agrees_with_the_model(
    corpus: Corpus, f: MemoryFilter, key: SortKey, descending: bool, limit: int, offset: int
) -> None:
    expected = model(corpus, f, key, descending)
    page = corpus.service.list_page(f, sort=key, descending=descending, limit=limit, offset=offset)
    assert [m.id for m in page.memories] == expected[offset : offset + limit]
    assert page.total == len(expected)
    assert (page.next_cursor is not None) == (offset + limit < len(expected))


@pytest.mark.parametrize("key", list(SortKey))
def test_every_sort_both_ways_reverses_exactly(corpus: Corpus, key: SortKey) -> None:
    everything = MemoryFilter(statuses=frozenset())
    up = [m.id for m in corpus.service.list_page(everything, sort=key, descending=False, limit=1000).memories]
    down = [
        m.id for m in corpus.service.list_page(everything, sort=key, descending=True, limit=1000).memories
    ]
    assert up == model(corpus, everything, key, False)
    assert down == list(reversed(up))
    assert len(up) == len(corpus.memories)


@pytest.mark.parametrize("key", list(SortKey))
@pytest.mark.parametrize("descending", [True, False])
def test_keyset_walk_over_every_memory_in_every_order(corpus: Corpus, key: SortKey, descending: bool) -> None:
    everything = MemoryFilter(statuses=frozenset())
    expected = model(corpus, everything, key, descending)
    for limit in (1, 7):
        assert list(walk(corpus.service, everything, key, descending, limit)) == expected


def test_listed_memories_carry_their_provenance(corpus: Corpus) -> None:
    page = corpus.service.list_page(MemoryFilter(statuses=frozenset()), limit=1000)
    by_id = {m.id: m for m in corpus.memories}
    assert all(m.provenance and m == by_id[m.id] for m in page.memories)


def test_default_listing_is_active_memories_latest_change_first(corpus: Corpus) -> None:
    page = corpus.service.list_page()
    active = [m for m in corpus.memories if m.status is MemoryStatus.ACTIVE]
    assert page.total == len(active) == corpus.service.count()
    assert [m.id for m in page.memories] == model(corpus, MemoryFilter(), SortKey.UPDATED, True)[:100]


def test_keyset_paging_neither_repeats_nor_skips_when_memories_arrive_between_pages(
    service: MemoryService, clock: Clock
) -> None:
    ids = []
    for i in range(10):
        ids.append(service.save(f"memory {i}", type="fact").id)
        clock.advance(seconds=1)
    first = service.list_page(sort=SortKey.CREATED, limit=4)
    assert [m.id for m in first.memories] == ids[::-1][:4]
    newer = service.save("a newer memory", type="fact").id
    second = service.list_page(sort=SortKey.CREATED, limit=4, after=first.next_cursor)
    assert [m.id for m in second.memories] == ids[::-1][4:8]
    assert second.total == 11
    by_offset = service.list_page(sort=SortKey.CREATED, limit=4, offset=4)
    assert [m.id for m in by_offset.memories] == ids[::-1][3:7]  # what offsets do; the cursor does not
    assert newer not in {m.id for m in second.memories}


def test_a_cursor_survives_its_anchor_memory_being_edited(service: MemoryService, clock: Clock) -> None:
    ids = []
    for i in range(6):
        ids.append(service.save(f"note {i}", type="note").id)
        clock.advance(seconds=1)
    first = service.list_page(sort=SortKey.UPDATED, limit=3)
    assert [m.id for m in first.memories] == ids[5:2:-1]
    service.update(ids[3], content="note three, edited")  # the anchor moves to the top
    second = service.list_page(sort=SortKey.UPDATED, limit=3, after=first.next_cursor)
    assert [m.id for m in second.memories] == ids[2::-1]


def test_text_filter_needs_every_word_matches_prefixes_and_ignores_fts_syntax(service: MemoryService) -> None:
    lisbon = service.save("My sister lives in Lisbon near the river", type="fact").id
    service.save("The river Thames runs through London", type="fact")
    service.save('Quote "this" (and) NEAR that * OR -not', type="note")
    assert [m.id for m in service.list_page(MemoryFilter(text="river lisb")).memories] == [lisbon]
    assert service.count(MemoryFilter(text="RIVER")) == 2
    assert service.count(MemoryFilter(text="river paris")) == 0
    for hostile in ['"', "NEAR(", "*", "a OR b", "river)", "content:river", "^river", "-river", "river AND"]:
        service.list_page(MemoryFilter(text=hostile))  # no FTS syntax error reaches the caller
    assert service.count(MemoryFilter(text='"this" NEAR')) == 1
    assert service.count(MemoryFilter(text="?!")) == 3  # no words: no text filter


def test_platform_filter_includes_memories_a_platform_confirmed(service: MemoryService) -> None:
    mid = service.save("My sister lives in Lisbon", type="fact", platform="claude").id
    service.save("Paris is lovely in spring", type="fact", platform="claude")
    service.save("my sister lives in lisbon.", platform="ChatGPT")  # the same text: a confirmation
    assert [m.id for m in service.list_page(MemoryFilter(platforms=frozenset({"chatgpt"}))).memories] == [mid]
    assert service.count(MemoryFilter(platforms=frozenset({"claude"}))) == 2
    assert service.count(MemoryFilter(platforms=frozenset({"CLAUDE", "gemini"}))) == 2


def test_filters_accept_names_as_well_as_enum_members(service: MemoryService) -> None:
    service.save("I prefer dark mode", platform="claude")
    loose = MemoryFilter(
        buckets=frozenset({"preference"}),  # type: ignore[arg-type]
        types=frozenset({"Preference"}),  # type: ignore[arg-type]
        statuses=frozenset({"active"}),  # type: ignore[arg-type]
    )
    assert service.count(loose) == 1
    forgotten = service.save("Remove me", type="note").id
    service.forget(forgotten)
    by_alias = service.list_page(MemoryFilter(statuses=frozenset({"forgotten"})))  # type: ignore[arg-type]
    assert [m.id for m in by_alias.memories] == [forgotten]


def _one_line_invalid(call: object) -> str:
    assert callable(call)
    with pytest.raises(InvalidInput) as caught:
        call()
    message = str(caught.value)
    assert message and "\n" not in message
    return message


def test_bad_listing_input_is_a_one_line_invalid_input(service: MemoryService) -> None:
    for i in range(3):
        service.save(f"memory {i}", type="fact")
    page = service.list_page(limit=1)
    assert page.next_cursor is not None
    cursor = page.next_cursor
    forged = base64.urlsafe_b64encode(json.dumps([1, "updated", True, "not a time", 1]).encode()).decode()
    bad_calls = {
        "limit 0": lambda: service.list_page(limit=0),
        "limit too big": lambda: service.list_page(limit=1001),
        "limit not int": lambda: service.list_page(limit="5"),  # type: ignore[arg-type]
        "offset negative": lambda: service.list_page(offset=-1),
        "offset huge": lambda: service.list_page(offset=10**12),
        "offset and cursor": lambda: service.list_page(limit=1, offset=1, after=cursor),
        "garbage cursor": lambda: service.list_page(after="not a cursor!"),
        "deeply nested cursor": lambda: service.list_page(
            after=base64.urlsafe_b64encode(b"[" * 40_000).decode().rstrip("=")
        ),
        "non-ASCII cursor": lambda: service.list_page(after="é" * 8),
        "empty cursor": lambda: service.list_page(after=""),
        "forged cursor": lambda: service.list_page(after=forged),
        "other sort": lambda: service.list_page(sort=SortKey.CREATED, after=cursor),
        "other direction": lambda: service.list_page(descending=False, after=cursor),
        "unknown sort": lambda: service.list_page(sort="colour"),  # type: ignore[arg-type]
        "unknown status": lambda: service.count(MemoryFilter(statuses=frozenset({"gone"}))),  # type: ignore[arg-type]
        "unknown type": lambda: service.count(MemoryFilter(types=frozenset({"poem"}))),  # type: ignore[arg-type]
        "unknown bucket": lambda: service.count(MemoryFilter(buckets=frozenset({"attic"}))),  # type: ignore[arg-type]
        "pinned not bool": lambda: service.count(MemoryFilter(pinned="yes")),  # type: ignore[arg-type]
        "text too long": lambda: service.count(MemoryFilter(text="word " * 1000)),
        "too many words": lambda: service.count(MemoryFilter(text=" ".join(f"w{i}" for i in range(65)))),
        "not a filter": lambda: service.count({"types": ["fact"]}),  # type: ignore[arg-type]
    }
    messages = {name: _one_line_invalid(call) for name, call in bad_calls.items()}
    assert "gone" in messages["unknown status"] and "deleted" in messages["unknown status"]
    assert "'updated'" in messages["other sort"]
    assert service.count() == 3  # nothing changed


def test_history_of_an_unknown_or_malformed_id(service: MemoryService) -> None:
    with pytest.raises(NotFound):
        service.history("0123456789ab")
    _one_line_invalid(lambda: service.history("nope"))


@pytest.fixture
def real(make_service: ServiceFactory, real_embedder: FastEmbedEmbedder) -> MemoryService:
    return make_service(embedder=real_embedder)


def test_history_follows_a_supersede_chain_both_ways(real: MemoryService, clock: Clock) -> None:
    chain = []
    for text in (
        "I prefer tabs for indentation",
        "I prefer spaces for indentation",
        "I prefer 4 spaces for indentation",
    ):
        chain.append(real.save(text, platform="claude").id)
        real.drain()
        clock.advance(minutes=1)
    first, middle, last = chain
    assert real.get(first).superseded_by == middle and real.get(middle).superseded_by == last

    newest = real.history(last)
    assert newest.memory.id == last and newest.memory.provenance[0].platform == "claude"
    assert [m.id for m in newest.replaced] == [middle, first]  # newest first
    assert newest.replaced_by == () and newest.merged == () and newest.conflicts == ()

    oldest = real.history(first)
    assert [m.id for m in oldest.replaced_by] == [middle, last]
    assert oldest.replaced == ()
    assert [m.id for m in real.history(middle).replaced] == [first]


def test_history_shows_merged_duplicates_and_where_a_duplicate_went(real: MemoryService) -> None:
    kept = real.save("I prefer dark mode", platform="claude").id
    dup = real.save("I like dark mode", platform="chatgpt").id
    real.drain()
    history = real.history(kept)
    assert [m.id for m in history.merged] == [dup]
    assert [(p.platform, p.action) for p in history.memory.provenance] == [
        ("claude", "saved"),
        ("chatgpt", "confirmed"),
    ]
    assert history.replaced == () and history.replaced_by == ()
    assert [m.id for m in real.history(dup).replaced_by] == [kept]


def test_history_lists_open_and_resolved_conflicts(real: MemoryService, clock: Clock) -> None:
    tabs = real.save("I prefer tabs for indentation", platform="claude").id
    spaces = real.save("I prefer spaces for indentation", platform="chatgpt").id
    real.drain()
    [conflict] = real.history(tabs).conflicts
    assert conflict.status is ConflictStatus.OPEN
    assert {conflict.memory_a.id, conflict.memory_b.id} == {tabs, spaces}
    assert [c.id for c in real.history(spaces).conflicts] == [conflict.id]
    clock.advance(minutes=1)
    real.resolve_conflict(conflict.id, ConflictResolution.KEEP_FIRST)
    [resolved] = real.history(spaces).conflicts
    assert resolved.status is ConflictStatus.RESOLVED and resolved.resolution is ConflictResolution.KEEP_FIRST
    assert real.history(spaces).memory.status is MemoryStatus.SUPERSEDED
    assert [m.id for m in real.history(spaces).replaced_by] == [tabs]


def test_history_of_a_conflict_settled_by_merged_text_leads_to_the_new_memory(
    real: MemoryService, clock: Clock
) -> None:
    tabs = real.save("I prefer tabs for indentation", platform="claude").id
    spaces = real.save("I prefer spaces for indentation", platform="chatgpt").id
    real.drain()
    [conflict] = real.conflicts()
    clock.advance(minutes=1)
    real.resolve_conflict(conflict.id, ConflictResolution.REPLACE, content="I prefer tabs, except in YAML")
    [merged] = real.list(bucket="preference")
    assert merged.content == "I prefer tabs, except in YAML"
    for old in (tabs, spaces):
        assert [m.id for m in real.history(old).replaced_by] == [merged.id]
    assert {m.id for m in real.history(merged.id).replaced} == {tabs, spaces}


def test_platform_usage_counts_active_memories_and_last_sighting(
    service: MemoryService, clock: Clock
) -> None:
    start = clock.now
    service.save("My sister lives in Lisbon", type="fact", platform="claude")
    clock.advance(hours=1)
    gone = service.save("I was in Rome last week", type="event", platform="claude").id
    clock.advance(hours=1)
    service.save("Paris is lovely in spring", type="fact", platform="chatgpt")
    clock.advance(hours=1)
    service.save("My sister lives in Lisbon", platform="cursor")  # a confirmation
    clock.advance(hours=1)
    service.forget(gone)
    usage = service.platform_usage()
    assert [(u.platform, u.memories, u.last_seen) for u in usage] == [
        ("cursor", 1, start + timedelta(hours=3)),
        ("chatgpt", 1, start + timedelta(hours=2)),
        ("claude", 1, start + timedelta(hours=1)),
    ]
    for u in usage:
        assert u.memories == service.count(MemoryFilter(platforms=frozenset({u.platform})))


def test_platform_usage_agrees_with_the_platform_filter_on_a_varied_store(corpus: Corpus) -> None:
    usage = corpus.service.platform_usage()
    assert {u.platform for u in usage} == set(PLATFORMS)
    for u in usage:
        expected = [
            m for m in corpus.memories if m.status is MemoryStatus.ACTIVE and u.platform in m.platforms
        ]
        assert (
            u.memories
            == len(expected)
            == corpus.service.count(MemoryFilter(platforms=frozenset({u.platform})))
        )
        assert u.last_seen == max(
            p.at for m in corpus.memories for p in m.provenance if p.platform == u.platform
        )
    assert [u.last_seen for u in usage] == sorted((u.last_seen for u in usage), reverse=True)


@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize(
    "f",
    [
        MemoryFilter(),
        MemoryFilter(statuses=frozenset({MemoryStatus.DELETED})),
        MemoryFilter(statuses=frozenset()),
    ],
)
def test_pages_in_the_default_order_are_read_from_its_index_without_sorting(
    service: MemoryService, f: MemoryFilter, descending: bool
) -> None:
    cursors = [None, listing.Cursor(SortKey.UPDATED, descending, 1.8e9, 42)]
    with service.db.read() as conn:
        for cursor in cursors:
            sql, params = listing.page_sql(f, sort=SortKey.UPDATED, descending=descending, after=cursor)
            plan = " | ".join(
                str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql, (*params, 101, 0))
            )
            assert "memories_updated" in plan and "TEMP B-TREE" not in plan, plan
