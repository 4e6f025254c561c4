"""The recall formulas, held to what docs/adr/0002-recall-scoring.md writes down."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from tallei_desktop.core.models import Bucket, Memory, MemoryStatus, MemoryType, RecallMode
from tallei_desktop.core.recall import block, rank, values
from tallei_desktop.core.recall.tuning import DEFAULT_TUNING

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _memory(content: str = "x", refs: int = 1, touched_days_ago: float = 0.0) -> Memory:
    t = NOW - timedelta(days=touched_days_ago)
    return Memory(
        id="000000000000",
        content=content,
        type=MemoryType.FACT,
        bucket=Bucket.LONG_TERM,
        platform="claude",
        created_at=t,
        updated_at=t,
        occurred_at=t,
        reference_count=refs,
        last_referenced_at=None,
        pinned=False,
        status=MemoryStatus.ACTIVE,
        superseded_by=None,
        embedded=True,
    )


@pytest.mark.parametrize(("chars", "tokens"), [(0, 0), (1, 1), (4, 1), (5, 2), (4800 * 4, 4800)])
def test_token_estimate_is_ceil_chars_over_four(chars: int, tokens: int) -> None:
    assert block.estimate_tokens("a" * chars) == tokens


def test_activity_formula() -> None:
    m = _memory(refs=4, touched_days_ago=21)
    expected = math.log1p(4) / math.log1p(20) * math.exp(-1)
    assert rank.activity(m, NOW) == pytest.approx(expected)
    assert rank.activity(_memory(refs=50), NOW) == pytest.approx(1.0)  # saturates
    assert rank.activity(_memory(refs=5, touched_days_ago=10), NOW) > rank.activity(
        _memory(refs=5, touched_days_ago=60), NOW
    )


def test_activity_counts_the_latest_touch() -> None:
    m = replace(_memory(refs=3, touched_days_ago=100), last_referenced_at=NOW)
    assert rank.activity(m, NOW) == pytest.approx(math.log1p(3) / math.log1p(20))


def test_recency_decays_with_21_day_constant_and_clamps_the_future() -> None:
    assert rank.recency(NOW, NOW) == 1.0
    assert rank.recency(NOW + timedelta(days=3), NOW) == 1.0
    assert rank.recency(NOW - timedelta(days=21), NOW) == pytest.approx(math.exp(-1))


def test_hybrid_score_weights() -> None:
    assert rank.hybrid_score(vector=0.8, bm25=0.5, activity_=0.2, semantic=True) == pytest.approx(
        0.55 * 0.8 + 0.30 * 0.5 + 0.15 * 0.2
    )
    assert rank.hybrid_score(vector=-0.3, bm25=0.0, activity_=0.0, semantic=True) == 0.0  # clipped
    assert rank.hybrid_score(vector=0.9, bm25=0.5, activity_=0.2, semantic=False) == pytest.approx(
        0.8 * 0.5 + 0.2 * 0.2
    )


def test_bm25_normalisation_maps_best_hit_to_one() -> None:
    assert rank.normalise_bm25({1: -4.0, 2: -1.0, 3: -2.0}) == {1: 1.0, 2: 0.25, 3: 0.5}
    assert rank.normalise_bm25({}) == {}


def test_budget_skips_what_does_not_fit_and_keeps_order() -> None:
    costs = [
        (1, block.estimate_tokens("a" * 40)),
        (2, block.estimate_tokens("b" * 400)),
        (3, block.estimate_tokens("c" * 20)),
    ]
    assert rank.take_within_budget(costs, 20) == [1, 3]
    assert rank.take_within_budget(costs, 200) == [1, 2, 3]
    assert rank.take_within_budget(costs, 0) == []


def test_search_score_weights_and_gate() -> None:
    assert rank.search_score(similarity=0.8, bm25=0.5, text_hit=True, semantic=True) == pytest.approx(
        0.6 * 0.8 + 0.4 * 0.5
    )
    # Not a text hit: it needs similarity 0.3 or more to count at all.
    assert rank.search_score(similarity=0.3, bm25=0.0, text_hit=False, semantic=True) == pytest.approx(0.18)
    assert rank.search_score(similarity=0.2999, bm25=0.0, text_hit=False, semantic=True) is None
    # A text hit counts however far its meaning is; similarity is clipped to [0, 1].
    assert rank.search_score(similarity=-0.4, bm25=0.25, text_hit=True, semantic=True) == pytest.approx(0.1)
    # Semantic search off: the normalised BM25 alone.
    assert rank.search_score(similarity=0.0, bm25=0.75, text_hit=True, semantic=False) == 0.75
    assert rank.search_score(similarity=0.9, bm25=0.0, text_hit=False, semantic=False) is None


def _candidates(
    memories: dict[int, Memory], bm25: dict[int, float], vector: dict[int, float]
) -> values.SearchCandidates:
    return values.SearchCandidates(bm25=bm25, vector=vector, memories=memories)


def test_search_ranking_filters_gates_and_limits_without_a_store() -> None:
    archived = replace(_memory("archived"), status=MemoryStatus.ARCHIVED)
    memories = {
        1: _memory("best words"),
        2: _memory("close meaning"),
        3: _memory("far meaning"),
        4: archived,
        5: replace(_memory("forgotten"), status=MemoryStatus.DELETED),
        6: replace(_memory("a preference"), type=MemoryType.PREFERENCE, bucket=Bucket.PREFERENCE),
    }
    c = _candidates(memories, {1: -4.0, 4: -2.0, 5: -8.0, 6: -1.0}, {2: 0.9, 3: 0.1, 4: 0.5})
    ranked = rank.rank_search(c, semantic=True, limit=10)
    # 5 is forgotten, 4 archived, 3 too far; bm25 normalised by the best candidate (5's -8).
    assert ranked == [(2, pytest.approx(0.54)), (1, pytest.approx(0.2)), (6, pytest.approx(0.05))]
    with_archived = rank.rank_search(c, semantic=True, limit=10, include_archived=True)
    assert [rid for rid, _ in with_archived] == [2, 4, 1, 6]
    assert [rid for rid, _ in rank.rank_search(c, semantic=True, limit=1)] == [2]
    only_prefs = rank.rank_search(c, semantic=True, limit=10, types={MemoryType.PREFERENCE})
    assert [rid for rid, _ in only_prefs] == [6]
    long_term = rank.rank_search(c, semantic=False, limit=10, buckets={Bucket.LONG_TERM})
    assert long_term == [(1, 0.5)]  # text only: 2 has no words in common, so it is no hit


@pytest.mark.parametrize(
    ("text", "asking"),
    [
        ("Which database did we pick?", True),
        ("Which database did we pick?  \n", True),
        ("We picked Postgres.", False),
        ("Why Postgres? Because of PostGIS.", False),
        ("", False),
    ],
)
def test_a_memory_asks_when_it_ends_in_a_question_mark(text: str, asking: bool) -> None:
    assert rank.asks(text) is asking


def _saved(content: str, *, platform: str = "claude", seconds: float = 0.0) -> Memory:
    at = NOW + timedelta(seconds=seconds)
    return replace(_memory(content), platform=platform, created_at=at, occurred_at=at, updated_at=at)


def test_search_ranks_a_question_below_what_tells_and_lifts_the_answer_saved_after_it() -> None:
    memories = {
        10: _saved("Which database did we pick for the billing service?"),
        11: _saved("Postgres, for its row-level security.", seconds=1),  # saved right after 10
        20: _saved("The billing service runs on three nodes."),
        30: _saved("What region hosts the billing service?", platform="chatgpt"),
        31: _saved("eu-west-1", seconds=2),  # saved right after 30, but by another assistant
        40: _saved("Who owns the billing service?"),
        41: _saved("Dalia owns it.", seconds=3 * DEFAULT_TUNING.alongside_seconds),  # long after 40
    }
    similarity = {10: 0.7, 11: 0.2, 20: 0.6, 30: 0.65, 31: 0.1, 40: 0.62, 41: 0.1}
    ranked = dict(rank.rank_search(_candidates(memories, {}, similarity), semantic=True, limit=10))
    # The question scores 0.8 of itself (0.6 · 0.7 · 0.8) and falls below what tells (0.6 · 0.6)...
    assert ranked[10] == pytest.approx(0.6 * 0.7 * DEFAULT_TUNING.asking_share) and ranked[20] > ranked[10]
    # ...and the memory saved right after it, by the same assistant, takes 0.9 of the question's score.
    assert ranked[11] == pytest.approx(DEFAULT_TUNING.answer_share * 0.6 * 0.7) and ranked[11] > ranked[20]
    # Another assistant's next save, or one saved long after, is not taken for an answer.
    assert 31 not in ranked and 41 not in ranked
    # An answer that does not pass the filters stays out.
    archived = {**memories, 11: replace(memories[11], status=MemoryStatus.ARCHIVED)}
    assert 11 not in dict(rank.rank_search(_candidates(archived, {}, similarity), semantic=True, limit=10))
    # Only the ANSWER_SEEDS best-scoring questions lend their score.
    many = {2 * i: _saved(f"Question {i}?") for i in range(1, DEFAULT_TUNING.answer_seeds + 2)}
    many |= {2 * i + 1: _saved(f"Answer {i}.", seconds=1) for i in range(1, DEFAULT_TUNING.answer_seeds + 2)}
    sims = {2 * i: 0.9 - 0.01 * i for i in range(1, DEFAULT_TUNING.answer_seeds + 2)}
    lent = dict(rank.rank_search(_candidates(many, {}, sims), semantic=True, limit=50))
    answers = {rid for rid in lent if rid % 2}
    assert answers == {2 * i + 1 for i in range(1, DEFAULT_TUNING.answer_seeds + 1)}


def _recall_candidates(**overrides: object) -> values.RecallCandidates:
    base: dict[str, object] = {
        "preference_order": (),
        "preference_bm25": {},
        "vector": {},
        "long_term_bm25": {},
        "long_term_tokens": 0,
        "extras": {},
        "dump_order": None,
        "pool": {},
        "short_term_bm25": {},
        "window": {},
        "open_conflicts": 0,
    }
    base.update(overrides)
    return values.RecallCandidates(**base)  # type: ignore[arg-type]


#: Line heads cost nothing here, so the budgets below count content alone.
BUDGETS = values.Budgets(preference=10, long_term=20, short_term=10, short_term_days=60, line_tokens=0)


def test_recall_plan_hybrid_ranks_pinned_first_then_by_score_within_budget() -> None:
    pool = {
        1: _memory("a" * 40),  # 10 tokens
        2: replace(_memory("b" * 40), pinned=True),
        3: _memory("c" * 40),
        4: _memory("d" * 80),  # 20 tokens: does not fit after the first two, skipped
    }
    c = _recall_candidates(
        pool=pool,
        vector={1: 0.2, 3: 0.9, 4: 0.95},
        long_term_bm25={1: -1.0},
        preference_order=((7, 6), (8, 6)),
    )
    plan = rank.plan_recall(c, budgets=BUDGETS, now=NOW, semantic=True)
    assert plan.mode is RecallMode.HYBRID
    assert plan.long_term == (2, 3)
    assert plan.preferences == (7,)  # budget 10: the second preference does not fit
    assert plan.scores[3] == pytest.approx(round(0.55 * 0.9 + 0.15 * rank.activity(pool[3], NOW), 4))
    assert plan.more == ()  # the buckets' 40 tokens cannot also hold the block's titles and line heads
    assert plan.hits == (3,)  # 7 was listed, not matched; 3 matched by meaning (>= 0.45)
    roomy = rank.plan_recall(c, budgets=replace(BUDGETS, preference=300), now=NOW, semantic=True)
    # 4 (similar) and 1 (a text hit) had no room in long-term: what the buckets leave of the total
    # carries them, best match first.
    assert roomy.long_term == (2, 3) and roomy.more == (4, 1)
    assert roomy.scores[4] == pytest.approx(round(0.6 * 0.95, 4))
    assert roomy.scores[1] == pytest.approx(round(0.6 * 0.2 + 0.4 * 1.0, 4))
    assert roomy.hits == (3, 4, 1)


def test_recall_plan_dump_all_then_extras_and_short_term_by_recency_and_match() -> None:
    old_event = replace(
        _memory("e" * 8, touched_days_ago=200), type=MemoryType.EVENT, bucket=Bucket.SHORT_TERM
    )
    day = 86_400.0
    now_ts = NOW.timestamp()
    c = _recall_candidates(
        dump_order=((1, 5), (2, 5)),
        extras={9: old_event},
        long_term_bm25={9: -3.0},
        window={20: (4, now_ts - 1 * day), 21: (4, now_ts - 10 * day), 22: (4, now_ts - 20 * day)},
        short_term_bm25={22: -2.0},
    )
    plan = rank.plan_recall(c, budgets=BUDGETS, now=NOW, semantic=True)
    assert plan.mode is RecallMode.DUMP_ALL
    assert plan.long_term == (1, 2, 9)
    # The query is specific: 22 matches it, so it comes before the newer 20 (by match); 20 and 21
    # match equally (not at all), so the newer 20 comes first.
    assert plan.short_term == (22, 20)
    assert plan.scores[22] == pytest.approx(1.0) and plan.scores[20] == plan.scores[21] == 0.0
    assert plan.more == ()  # 21 is left over but does not match: unused budget stays unused
    assert set(plan.hits) == {9, 22}
    assert rank.long_term_fits(15, [old_event], 17) and not rank.long_term_fits(15, [old_event], 16)


def test_recall_plan_without_anything_to_match_keeps_the_newest_first() -> None:
    day = 86_400.0
    now_ts = NOW.timestamp()
    c = _recall_candidates(
        window={20: (4, now_ts - 1 * day), 21: (4, now_ts - 10 * day), 22: (4, now_ts - 20 * day)},
    )
    plan = rank.plan_recall(c, budgets=BUDGETS, now=NOW, semantic=True)
    assert plan.short_term == (20, 21)
    assert plan.scores[20] == pytest.approx(round(math.exp(-1 / 21), 4))
    assert plan.more == () and plan.hits == ()


def test_recall_plan_fills_unused_budget_with_the_best_remaining_matches_only() -> None:
    day = 86_400.0
    now_ts = NOW.timestamp()
    window = {rid: (4, now_ts - (rid - 19) * day) for rid in range(20, 26)}
    c = _recall_candidates(
        window=window,
        short_term_bm25={24: -2.0, 25: -1.0},
        vector={23: 0.2, 22: 0.5},
    )
    budgets = values.Budgets(preference=200, long_term=20, short_term=10, short_term_days=60, line_tokens=0)
    plan = rank.plan_recall(c, budgets=budgets, now=NOW, semantic=True)
    # Short-term (10 tokens) holds two: the text hit 24 and the similar 22.
    assert plan.short_term == (24, 22)
    # Of the 230-token total, the block's titles (120) and the two (8) leave 102: room for the other
    # match (25), never the unmatched 20, 21 or 23.
    assert plan.more == (25,)
    assert set(plan.chosen) == {24, 22, 25}


def test_line_heads_count_against_each_bucket_budget() -> None:
    day = 86_400.0
    c = _recall_candidates(
        preference_order=((7, 6), (8, 6)),
        window={20: (4, NOW.timestamp() - day), 21: (4, NOW.timestamp() - 2 * day)},
    )
    budgets = values.Budgets(preference=30, long_term=20, short_term=30, short_term_days=60, line_tokens=20)
    plan = rank.plan_recall(c, budgets=budgets, now=NOW, semantic=True)
    # 6 + 20 fits 30 once; 4 + 20 fits 30 once.
    assert plan.preferences == (7,) and plan.short_term == (20,)


def test_conflict_warnings_count_against_the_bucket_of_their_memory() -> None:
    day = 86_400.0
    window = {20: (4, NOW.timestamp() - day), 21: (4, NOW.timestamp() - 2 * day)}
    budgets = values.Budgets(preference=120, long_term=20, short_term=120, short_term_days=60, line_tokens=17)
    quiet = _recall_candidates(preference_order=((7, 6), (8, 6)), window=window)
    plan = rank.plan_recall(quiet, budgets=budgets, now=NOW, semantic=True)
    assert plan.preferences == (7, 8) and plan.short_term == (20, 21)
    # Three open conflicts: two warning lines and the count of the rest, 6 + 17 + 2 · 38 + 19 = 118.
    assert block.warning_tokens(3) == 2 * block.CONFLICT_LINE_TOKENS + block.CONFLICT_MORE_TOKENS == 95
    assert block.warning_tokens(1) == block.CONFLICT_LINE_TOKENS and block.warning_tokens(0) == 0
    loud = _recall_candidates(preference_order=((7, 6), (8, 6)), window=window, conflicts={7: 3, 20: 3})
    plan = rank.plan_recall(loud, budgets=budgets, now=NOW, semantic=True)
    assert plan.preferences == (7,) and plan.short_term == (20,)


def _assemble(plan: values.RecallPlan, chosen: values.Chosen, max_tokens: int | None) -> values.RecallBuild:
    conflicts = sum(len(found) for found in chosen.conflicts.values())
    return block.assemble_recall(
        plan,
        chosen,
        query="q",
        semantic=True,
        short_term_days=60,
        open_conflicts=conflicts,
        max_tokens=max_tokens,
    )


def test_a_block_whose_line_heads_say_more_drops_its_last_more_matches_to_fit() -> None:
    def saved_on(i: int, platform: str) -> Memory:
        return replace(_memory("m" * 40), id=f"{i:012d}", platform=platform)

    memories = {1: saved_on(1, "claude"), **{i: saved_on(i, f"assistant-number-{i}") for i in range(2, 9)}}
    plan = values.RecallPlan(
        mode=RecallMode.DUMP_ALL,
        preferences=(),
        long_term=(1,),
        short_term=(),
        scores={i: 0.5 for i in memories},
        hits=tuple(memories),
        more=tuple(range(2, 9)),
    )

    def build(max_tokens: int | None) -> values.RecallBuild:
        return _assemble(plan, values.Chosen(memories, {}), max_tokens)

    whole = build(None)
    assert len(whole.result.more) == 7 and "assistant-number-8 ·" in whole.result.text
    limit = block.estimate_tokens(whole.result.text) - 20
    fitted = build(limit)
    assert block.estimate_tokens(fitted.result.text) <= limit
    kept = [item.memory.id for item in fitted.result.more]
    # The best matches stay, in order; only the tail is left out, and what is left out is no hit.
    assert kept == [memories[i].id for i in range(2, 2 + len(kept))] and 4 <= len(kept) < 7
    assert fitted.hit_rowids == (1, *range(2, 2 + len(kept)))


def _conflicted(count: int, *, rid: int) -> tuple[Memory, list[values.OpenConflict]]:
    memory = replace(_memory(f"memory {rid} " + "w" * 40), id=f"{rid:012d}")
    others = [values.OpenConflict(f"c{rid:04d}{i:08d}", f"{900 + i:012d}", "chatgpt") for i in range(count)]
    return memory, others


def test_a_memory_with_many_open_conflicts_lists_two_and_counts_the_rest() -> None:
    memory, conflicts = _conflicted(5, rid=1)
    plan = values.RecallPlan(
        mode=RecallMode.HYBRID, preferences=(1,), long_term=(), short_term=(), scores={}, hits=(1,)
    )
    build = block.assemble_recall(
        plan,
        values.Chosen({1: memory}, {memory.id: conflicts}),
        query="q",
        semantic=True,
        short_term_days=60,
        open_conflicts=5,
    )
    text = build.result.text
    assert text.count("⚠ CONFLICT") == block.CONFLICT_LINES == 2
    assert f"CONFLICT {conflicts[0].conflict_id}: disagrees with {conflicts[0].other_id}" in text
    assert conflicts[2].conflict_id not in text
    assert "⚠ 3 more open conflicts with this memory; list_conflicts shows them all." in text
    # The structured item still names every one.
    assert build.result.preferences[0].conflict_ids == tuple(c.conflict_id for c in conflicts)


def test_a_block_over_its_total_without_more_matches_leaves_out_the_weakest_tails() -> None:
    chosen = {rid: _conflicted(2, rid=rid) for rid in range(1, 10)}
    memories = {rid: m for rid, (m, _) in chosen.items()}
    conflicts = {m.id: found for m, found in chosen.values()}
    plan = values.RecallPlan(
        mode=RecallMode.HYBRID,
        preferences=(1, 2),
        long_term=(3, 4, 5),  # scores 0.9, 0.5, 0.1
        short_term=(6, 7, 8, 9),  # scores 0.8, 0.7, 0.6, 0.4
        scores={3: 0.9, 4: 0.5, 5: 0.1, 6: 0.8, 7: 0.7, 8: 0.6, 9: 0.4},
        hits=tuple(range(1, 10)),
    )

    def build(max_tokens: int | None) -> values.RecallBuild:
        return _assemble(plan, values.Chosen(memories, conflicts), max_tokens)

    whole = build(None)
    line = block.estimate_tokens(whole.result.text) // 9  # about one memory with its two warnings
    fitted = build(block.estimate_tokens(whole.result.text) - 3 * line)
    assert block.estimate_tokens(fitted.result.text) <= block.estimate_tokens(whole.result.text) - 3 * line
    kept = [[item.memory.id for item in b] for b in (fitted.result.preferences, fitted.result.long_term)]
    recent = [item.memory.id for item in fitted.result.short_term]
    # Left out, weakest tail first: 5 (0.1), then 9 (0.4), then 4 (0.5) ...; preferences stay.
    assert kept[0] == [memories[1].id, memories[2].id]
    assert 5 not in fitted.hit_rowids and 9 not in fitted.hit_rowids
    assert memories[3].id in kept[1] and memories[6].id in recent
    assert set(fitted.hit_rowids) == {
        rid for rid, m in memories.items() if m.id in {*kept[0], *kept[1], *recent}
    }
    # A total too small for anything leaves a block with no memory rather than one over the total.
    assert build(10).result.items == () and build(10).hit_rowids == ()


def test_a_memory_saved_alongside_a_strong_match_ranks_with_a_share_of_it() -> None:
    at = NOW.timestamp()
    reach = DEFAULT_TUNING.alongside_reach
    share = DEFAULT_TUNING.alongside_share
    saved = {
        10: values.SavedAt("claude", at, at),  # the match
        9: values.SavedAt("chatgpt", at - 1, at),  # another assistant's, saved just before
        20: values.SavedAt("claude", at, at),  # a weaker match, not among the seeds below
        21: values.SavedAt("claude", at + 1, at),
        30: values.SavedAt("claude", at, at),  # a match whose neighbours were saved long before or after
        29: values.SavedAt("claude", at - 3600, at - 3600),
        31: values.SavedAt("claude", at + 1, at + 3 * DEFAULT_TUNING.alongside_seconds),
        40: values.SavedAt("claude", at, at),
        41: values.SavedAt("claude", at, at),  # as strong a match on its own as 40
        42: values.SavedAt(
            "claude", at + 3 * DEFAULT_TUNING.alongside_seconds, at
        ),  # after 41 in order, not in time
    }
    # The rest of the message saved after 10, one save after another, each a second after the last:
    # the first ALONGSIDE_REACH of them are reached, the one after is too far.
    saved |= {10 + k: values.SavedAt("claude", at + k, at) for k in range(1, reach + 2)}
    similarity = {10: 0.8, 20: 0.05, 30: 0.7, 40: 0.6, 41: 0.6, 12: 0.3}
    match = similarity | {
        100 + i: 0.4 for i in range(DEFAULT_TUNING.alongside_seeds - 4)
    }  # fills the seeds; no rows
    rows = rank.alongside_rowids(match)
    assert rows[: 2 * reach + 1] == list(range(10 - reach, 10 + reach + 1))
    assert 10 + reach + 1 not in rows and 20 - reach not in rows
    related = rank.alongside(match, saved, similarity)
    # Every save of the run within reach ranks with the match's share (12 had 0.3 of its own, less
    # than it takes).
    assert related == {10 + k: pytest.approx(share * 0.8) for k in range(1, reach + 1)}
    # 40 and 41 match as well as each other: neither takes from the other.
    assert 40 not in related and 41 not in related and 9 not in related and 21 not in related
    assert 29 not in related and 31 not in related and 42 not in related and 10 + reach + 1 not in related
    # A break in the run stops it: another assistant's save in between cuts off what comes after.
    broken = {**saved, 12: values.SavedAt("chatgpt", at + 2, at)}
    assert rank.alongside(match, broken, similarity) == {11: pytest.approx(share * 0.8)}
    # A match by words lends as one by meaning does: 20 as the best text hit (1.0) outranks 10.
    by_words = rank.match_strength(similarity, {20: -7.0})
    assert rank.alongside(by_words, saved, similarity)[21] == pytest.approx(share * 1.0)


def test_match_strength_normalises_text_hits_together() -> None:
    similarity = {1: 0.6, 2: 0.2}
    # One pass over the text index: 3 is the best hit, 2 half as good, 4 a tenth.
    strength = rank.match_strength(similarity, {2: -5.0, 3: -10.0, 4: -1.0})
    assert strength == {1: 0.6, 2: pytest.approx(0.5), 3: pytest.approx(1.0), 4: pytest.approx(0.1)}
    # The weak hit is not promoted to a perfect match for being the best of a part on its own.
    assert rank.match_strength({}, {4: -1.0, 3: -10.0})[4] == pytest.approx(0.1)
    assert rank.match_strength(similarity, {}) == similarity


def test_a_newest_memory_not_embedded_yet_is_taken_before_the_ranked_rest() -> None:
    pool = {rid: _memory(chr(96 + rid) * 40) for rid in (1, 2, 3)}  # 10 tokens each
    pool[4] = replace(_memory("d" * 40), embedded=False)  # saved a moment ago
    c = _recall_candidates(pool=pool, vector={1: 0.9, 2: 0.8, 3: 0.7}, newest=frozenset({3, 4}))
    plan = rank.plan_recall(c, budgets=BUDGETS, now=NOW, semantic=True)
    # Its similarity reads 0 until it is embedded: it comes first, then the best matches.
    assert plan.long_term == (4, 1)
    # Not among the newest, or with semantic search off (nothing is ranked by meaning), it is ranked.
    older = rank.plan_recall(replace(c, newest=frozenset({3})), budgets=BUDGETS, now=NOW, semantic=True)
    assert older.long_term == (1, 2)
    assert 4 not in rank.plan_recall(c, budgets=BUDGETS, now=NOW, semantic=False).long_term


def test_related_memories_rank_higher_but_are_no_hits() -> None:
    c = _recall_candidates(
        pool={1: _memory("a" * 40), 2: _memory("b" * 40), 3: _memory("c" * 40)},
        vector={1: 0.8, 2: 0.1, 3: 0.3},
        related={2: 0.56},
        long_term_tokens=10_000,
    )
    budgets = values.Budgets(preference=10, long_term=20, short_term=10, short_term_days=60, line_tokens=0)
    plan = rank.plan_recall(c, budgets=budgets, now=NOW, semantic=True)
    assert plan.long_term == (1, 2)  # 2 rides on 1 and passes 3
    assert 2 not in plan.hits and 1 in plan.hits


def test_equally_confirmed_preferences_are_taken_best_match_first() -> None:
    budgets = values.Budgets(preference=20, long_term=20, short_term=20, short_term_days=60, line_tokens=0)
    order = ((1, 5), (2, 5), (3, 5), (4, 5), (5, 5))  # as read: pinned, references, newest first
    ranks = {1: (True, 1), 2: (False, 4), 3: (False, 1), 4: (False, 1), 5: (False, 1)}
    similarity = {1: 0.1, 2: 0.1, 3: 0.2, 4: 0.3, 5: 0.8}

    def taken(**overrides: object) -> tuple[int, ...]:
        c = _recall_candidates(preference_order=order, preference_rank=ranks, **overrides)
        return rank.plan_recall(c, budgets=budgets, now=NOW, semantic=True).preferences

    # Pinned first, then the more confirmed, whatever they match; among equals the best match.
    assert taken(preference_similarity=similarity) == (1, 2, 5, 4)
    # A text hit counts as much as its normalised bm25.
    assert taken(preference_similarity=similarity, preference_bm25={3: -9.0}) == (1, 2, 3, 5)
    # Nothing to match: the order as read, the newest first among equals.
    assert taken() == (1, 2, 3, 4)
    # Saved alongside a strong match, a preference ranks with what it takes from it.
    assert taken(preference_similarity=similarity, related={3: 0.85}) == (1, 2, 3, 5)
