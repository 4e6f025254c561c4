"""Ranking: which memories each bucket returns and in what order, and search's order. Pure.

:func:`plan_recall` ranks and budgets a :class:`~.values.RecallCandidates` value; :func:`rank_search`
orders a :class:`~.values.SearchCandidates` value. Every constant comes from the
:class:`~.tuning.RecallTuning` passed in. The formulas are in docs/recall.md;
tests/core/test_recall_scoring.py holds them to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime

from tallei_desktop.core.models import Bucket, Memory, MemoryStatus, MemoryType, RecallMode
from tallei_desktop.core.recall.block import BLOCK_OVERHEAD_TOKENS, estimate_tokens, warning_tokens
from tallei_desktop.core.recall.tuning import DEFAULT_TUNING, RecallTuning
from tallei_desktop.core.recall.values import Budgets, RecallCandidates, RecallPlan, SavedAt, SearchCandidates

__all__ = [
    "activity",
    "alongside",
    "alongside_rowids",
    "asks",
    "hybrid_score",
    "long_term_fits",
    "match_strength",
    "normalise_bm25",
    "plan_recall",
    "rank_search",
    "recency",
    "search_score",
    "take_within_budget",
]


_DAY = 86_400.0


def _age_days(now: datetime, then: datetime) -> float:
    return max(0.0, (now - then).total_seconds() / _DAY)


def activity(memory: Memory, now: datetime, tuning: RecallTuning = DEFAULT_TUNING) -> float:
    """In [0, 1]: log-scaled reference count, decayed by the time since the memory was last touched.

    activity = min(1, ln(1 + refs) / ln(1 + saturation)) * exp(-days_since_touch / decay_days)
    (saturation 20, decay 21 days by default)
    """
    touched = max(memory.updated_at, memory.last_referenced_at or memory.updated_at)
    strength = min(1.0, math.log1p(memory.reference_count) / math.log1p(tuning.activity_saturation))
    return strength * math.exp(-_age_days(now, touched) / tuning.activity_decay_days)


def recency(when: datetime, now: datetime, tuning: RecallTuning = DEFAULT_TUNING) -> float:
    """exp(-age_days / 21): 1 for now (or the future), ~0.37 at three weeks, ~0.06 at two months."""
    return math.exp(-_age_days(now, when) / tuning.activity_decay_days)


def normalise_bm25(raw: dict[int, float]) -> dict[int, float]:
    """FTS5's bm25() is negative, lower is better; map to (0, 1], best hit = 1."""
    if not raw:
        return {}
    best = max(-v for v in raw.values())
    if best <= 0:
        return {k: 1.0 for k in raw}
    return {k: max(0.0, -v) / best for k, v in raw.items()}


def hybrid_score(
    *, vector: float, bm25: float, activity_: float, semantic: bool, tuning: RecallTuning = DEFAULT_TUNING
) -> float:
    """One score in [0, 1] for the long-term overflow ranking.

    semantic on:  0.55 * vector + 0.30 * bm25 + 0.15 * activity
    semantic off: 0.80 * bm25 + 0.20 * activity
    (the weights of :data:`DEFAULT_TUNING`)
    ``vector`` is cosine similarity clipped to [0, 1] (0 for a memory with no vector yet).
    """
    if semantic:
        t = tuning
        return t.w_vector * max(0.0, min(1.0, vector)) + t.w_bm25 * bm25 + t.w_activity * activity_
    return tuning.w_bm25_text_only * bm25 + tuning.w_activity_text_only * activity_


def take_within_budget(order: Iterable[tuple[int, int]], budget: int) -> list[int]:
    """Keys of (key, token cost) pairs, taken in order while they fit.

    One that does not fit is skipped, not a stop, so a single long memory cannot starve the rest.
    """
    taken: list[int] = []
    left = budget
    for key, tokens in order:
        if tokens <= left:
            taken.append(int(key))
            left -= tokens
    return taken


def long_term_fits(long_term_tokens: int, extras: Sequence[Memory], budget: int) -> bool:
    """Dump-all when every active long-term memory and every matching extra fit the budget."""
    return long_term_tokens + sum(estimate_tokens(m.content) for m in extras) <= budget


def match_strength(similarity: Mapping[int, float], bm25: Mapping[int, float]) -> dict[int, float]:
    """rowid -> how well a memory matches the query: its cosine similarity, or its raw ``bm25``
    normalised over all the text hits together (best = 1), whichever is higher.

    The text hits of one query come from one pass over the text index, so their bm25 compare across
    buckets; normalising them together keeps the best hit of a bucket with only weak ones from
    counting as a perfect match."""
    strength = dict(similarity)
    for rowid, b in normalise_bm25(dict(bm25)).items():
        strength[rowid] = max(strength.get(rowid, 0.0), b)
    return strength


def _seeds(match: Mapping[int, float], tuning: RecallTuning) -> list[tuple[int, float]]:
    return sorted(match.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[: tuning.alongside_seeds]


def alongside_rowids(match: Mapping[int, float], tuning: RecallTuning = DEFAULT_TUNING) -> list[int]:
    """The rows :func:`alongside` needs: the ``alongside_seeds`` best matches and the
    ``alongside_reach`` saved before and after each, in saving order."""
    reach = range(-tuning.alongside_reach, tuning.alongside_reach + 1)
    return sorted({rowid + step for rowid, _ in _seeds(match, tuning) for step in reach})


def alongside(
    match: Mapping[int, float],
    saved: Mapping[int, SavedAt],
    similarity: Mapping[int, float],
    tuning: RecallTuning = DEFAULT_TUNING,
) -> dict[int, float]:
    """rowid -> the most it takes from the ``tuning.alongside_seeds`` best ``match`` es saved
    alongside it: within ``alongside_reach`` saves (rowid ± 1 … ± reach), every save on the way
    :meth:`SavedAt.next_to` the one before it (within ``alongside_seconds``), each taking
    ``alongside_share`` of the seed's match. Only memories found in ``saved`` (active ones) are reached, and only those whose own
    ``similarity`` is lower are returned: the value stands in for a similarity when recall ranks them."""
    related: dict[int, float] = {}
    for rowid, strength in _seeds(match, tuning):
        seed = saved.get(rowid)
        if seed is None:
            continue
        for step in (-1, 1):
            before, at, lent = seed, rowid + step, tuning.alongside_share * strength
            while abs(at - rowid) <= tuning.alongside_reach:
                n = saved.get(at)
                if n is None or not n.next_to(before, tuning.alongside_seconds):
                    break
                related[at] = max(related.get(at, 0.0), lent)
                before, at = n, at + step
    return {rid: s for rid, s in related.items() if s > similarity.get(rid, 0.0)}


def asks(text: str) -> bool:
    """Whether a memory asks rather than tells: its text ends in a question mark."""
    return text.rstrip().endswith("?")


def _preferences(c: RecallCandidates) -> list[tuple[int, int]]:
    """Preferences in the order their bucket takes them: pinned first, then the most confirmed, and
    among equals the best match to the query (similarity, normalised bm25, or what it takes as saved
    alongside a match), then the newest."""
    bm25 = normalise_bm25(dict(c.preference_bm25))

    def key(item: tuple[int, int]) -> tuple[bool, int, float]:
        rowid = item[0]
        pinned, references = c.preference_rank.get(rowid, (False, 0))
        match = max(c.preference_similarity.get(rowid, 0.0), bm25.get(rowid, 0.0), c.related.get(rowid, 0.0))
        return (not pinned, -references, -match)

    return sorted(c.preference_order, key=key)  # stable: the newest first among exact equals


def _similarity(c: RecallCandidates, rowid: int) -> float:
    """What ranks a candidate: its own similarity, or more as a memory saved alongside a match."""
    return max(c.vector.get(rowid, 0.0), c.related.get(rowid, 0.0))


def _awaiting_meaning(c: RecallCandidates, rowid: int, memory: Memory, semantic: bool) -> bool:
    """A memory saved a moment ago, not embedded yet, among the newest: with semantic search on its
    similarity reads 0 until the worker embeds it, so it is taken first rather than ranked last."""
    return semantic and not memory.embedded and rowid in c.newest


def plan_recall(
    c: RecallCandidates,
    *,
    budgets: Budgets,
    now: datetime,
    semantic: bool,
    tuning: RecallTuning = DEFAULT_TUNING,
) -> RecallPlan:
    """Rank and budget the candidates of each bucket (docs/recall.md). A line costs its content, its
    head and the conflict warnings under it."""

    def cost(rowid: int, tokens: int) -> int:
        return tokens + budgets.line_tokens + warning_tokens(c.conflicts.get(rowid, 0))

    pref_ids = take_within_budget(((rid, cost(rid, t)) for rid, t in _preferences(c)), budgets.preference)
    bm25 = normalise_bm25(dict(c.long_term_bm25))

    def score(rowid: int, memory: Memory) -> float:
        return hybrid_score(
            vector=_similarity(c, rowid),
            bm25=bm25.get(rowid, 0.0),
            activity_=activity(memory, now, tuning),
            semantic=semantic,
            tuning=tuning,
        )

    scores: dict[int, float] = {}
    if c.dump_order is not None:
        mode = RecallMode.DUMP_ALL
        ranked_extras = sorted(c.extras.items(), key=lambda kv: score(*kv), reverse=True)
        scores.update({rid: round(score(rid, m), 4) for rid, m in ranked_extras})
        lt_order = [*c.dump_order, *((rid, estimate_tokens(m.content)) for rid, m in ranked_extras)]
    else:
        mode = RecallMode.HYBRID
        scores.update({rid: round(score(rid, m), 4) for rid, m in c.pool.items()})
        ranked = sorted(
            c.pool.items(),
            key=lambda kv: (kv[1].pinned, _awaiting_meaning(c, kv[0], kv[1], semantic), scores[kv[0]]),
            reverse=True,
        )
        lt_order = [(rid, estimate_tokens(m.content)) for rid, m in ranked]
    lt_ids = take_within_budget(((rid, cost(rid, t)) for rid, t in lt_order), budgets.long_term)

    st_bm25 = normalise_bm25(dict(c.short_term_bm25))
    specific = bool(c.short_term_bm25 or c.long_term_bm25 or c.preference_bm25 or c.vector)
    for rid, (_, at) in c.window.items():
        match = max(st_bm25.get(rid, 0.0), _similarity(c, rid))
        # A specific question wants what matches it (the newest first among equals); with nothing to
        # match, the newest come first, nudged by what matches.
        if specific:
            scores[rid] = round(match, 4)
        else:
            fresh = recency(datetime.fromtimestamp(at, tz=UTC), now, tuning)
            scores[rid] = round(fresh + tuning.short_term_match_weight * match, 4)
    st_ranked = sorted(c.window, key=lambda rid: (scores[rid], c.window[rid][1], rid), reverse=True)
    st_ids = take_within_budget(((rid, cost(rid, c.window[rid][0])) for rid in st_ranked), budgets.short_term)

    matched = (
        set(c.preference_bm25)
        | set(c.long_term_bm25)
        | set(c.short_term_bm25)
        | {rid for rid, s in c.vector.items() if s >= tuning.match_similarity}
    )
    taken = {*pref_ids, *lt_ids, *st_ids}
    used = BLOCK_OVERHEAD_TOKENS
    used += sum(cost(rid, t) for rid, t in c.preference_order if rid in taken)
    used += sum(cost(rid, t) for rid, t in lt_order if rid in taken)
    used += sum(cost(rid, c.window[rid][0]) for rid in st_ids)
    more_ids = _more_matches(c, taken, budgets.total - used, cost, scores, tuning)
    chosen = (*pref_ids, *lt_ids, *st_ids, *more_ids)
    return RecallPlan(
        mode=mode,
        preferences=tuple(pref_ids),
        long_term=tuple(lt_ids),
        short_term=tuple(st_ids),
        scores=scores,
        hits=tuple(rid for rid in chosen if rid in matched),
        more=tuple(more_ids),
    )


def _more_matches(
    c: RecallCandidates,
    taken: set[int],
    room: int,
    cost: Callable[[int, int], int],
    scores: dict[int, float],
    tuning: RecallTuning,
) -> list[int]:
    """The best matches no bucket returned, taken while their lines (``cost(rowid, tokens)``) fit
    ``room`` tokens; their match score (``search_score``, the same blend search uses) goes into
    ``scores``."""
    if room <= 0:
        return []
    tokens: dict[int, int] = {rid: t for rid, t in c.preference_order}
    tokens.update({rid: estimate_tokens(m.content) for rid, m in (*c.pool.items(), *c.extras.items())})
    tokens.update({rid: t for rid, (t, _) in c.window.items()})
    bm25 = {
        **normalise_bm25(dict(c.preference_bm25)),
        **normalise_bm25(dict(c.long_term_bm25)),
        **normalise_bm25(dict(c.short_term_bm25)),
    }
    found: list[tuple[float, int]] = []
    for rid in tokens.keys() - taken:
        # Only a match joins "more matches", by search's bar on its own similarity; one that is also
        # saved alongside a match ranks higher.
        if rid not in bm25 and c.vector.get(rid, 0.0) < tuning.search_min_similarity:
            continue
        similarity = _similarity(c, rid)
        score = search_score(
            similarity=similarity, bm25=bm25.get(rid, 0.0), text_hit=rid in bm25, semantic=True, tuning=tuning
        )
        if score is not None:
            found.append((score, rid))
    found.sort(reverse=True)
    more = take_within_budget(((rid, cost(rid, tokens[rid])) for _, rid in found), room)
    best = {rid: score for score, rid in found}
    scores.update({rid: round(best[rid], 4) for rid in more})
    return more


def search_score(
    *,
    similarity: float,
    bm25: float,
    text_hit: bool,
    semantic: bool,
    tuning: RecallTuning = DEFAULT_TUNING,
) -> float | None:
    """A search hit's score, or None when the memory is no hit.

    semantic on:  0.6 * clip(similarity, 0, 1) + 0.4 * bm25, for text hits and similarity >= 0.3
    (the weights and bar of :data:`DEFAULT_TUNING`)
    semantic off: bm25, for text hits only
    ``bm25`` is normalised (best text hit = 1, 0 for none).
    """
    if not semantic:
        return bm25 if text_hit else None
    sim = max(0.0, min(1.0, similarity))
    if not text_hit and sim < tuning.search_min_similarity:
        return None
    return tuning.search_w_vector * sim + tuning.search_w_bm25 * bm25


def rank_search(
    c: SearchCandidates,
    *,
    semantic: bool,
    limit: int,
    types: Collection[MemoryType] | None = None,
    buckets: Collection[Bucket] | None = None,
    include_archived: bool = False,
    tuning: RecallTuning = DEFAULT_TUNING,
) -> list[tuple[int, float]]:
    """(rowid, score) of the best ``limit`` hits among live memories passing the filters, best first.
    A memory that asks scores ``tuning.asking_share`` of itself, and the one saved right after one
    of the ``answer_seeds`` best of them (its likely answer) at least ``answer_share`` of the
    question's score (see :class:`RecallTuning`)."""
    bm25 = normalise_bm25(dict(c.bm25))
    live = {MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED} if include_archived else {MemoryStatus.ACTIVE}

    def passes(m: Memory) -> bool:
        return (
            m.status in live
            and not (types and m.type not in types)
            and not (buckets and m.bucket not in buckets)
        )

    scores: dict[int, float] = {}
    questions: list[tuple[float, int]] = []
    for rowid, m in c.memories.items():
        if not passes(m):
            continue
        score = search_score(
            similarity=c.vector.get(rowid, 0.0),
            bm25=bm25.get(rowid, 0.0),
            text_hit=rowid in bm25,
            semantic=semantic,
            tuning=tuning,
        )
        if score is None:
            continue
        if asks(m.content):
            questions.append((score, rowid))
            score *= tuning.asking_share
        scores[rowid] = score
    questions.sort(reverse=True)
    for score, rowid in questions[: tuning.answer_seeds]:
        answer = c.memories.get(rowid + 1)
        if (
            answer is not None
            and passes(answer)
            and SavedAt.of(answer).next_to(SavedAt.of(c.memories[rowid]), tuning.alongside_seconds)
        ):
            scores[rowid + 1] = max(scores.get(rowid + 1, 0.0), tuning.answer_share * score)
    hits = sorted(scores.items(), key=lambda h: h[1], reverse=True)
    return hits[:limit]
