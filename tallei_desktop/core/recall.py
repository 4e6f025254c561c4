"""Buckets, budgets and scores for recall and search; pure functions, no store access.

Recall runs in two steps: the store gathers candidates into a :class:`RecallCandidates` value in one
read snapshot (``store/recall_reads.py``), then :func:`plan_recall` ranks and budgets them and
:func:`assemble_recall` renders the chosen memories. Search likewise: :class:`SearchCandidates`, then
:func:`rank_search` with :func:`search_score`. The formulas are written down in
docs/adr/0002-recall-scoring.md; tests/core/test_recall_scoring.py holds them to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tallei_desktop.core.models import (
    Bucket,
    Confidence,
    Memory,
    MemoryStatus,
    MemoryType,
    RecallItem,
    RecallMode,
    RecallResult,
)

__all__ = [
    "ACTIVITY_DECAY_DAYS",
    "ALONGSIDE_REACH",
    "ALONGSIDE_SECONDS",
    "ALONGSIDE_SEEDS",
    "ALONGSIDE_SHARE",
    "ALONGSIDE_STEP",
    "ANSWER_SEEDS",
    "ANSWER_SHARE",
    "ASKING_SHARE",
    "CONFLICT_LINES",
    "EXTRA_SIMILARITY",
    "HYBRID_EXTRA_SIMILARITY",
    "MATCH_SIMILARITY",
    "SEARCH_MIN_SIMILARITY",
    "Budgets",
    "Chosen",
    "OpenConflict",
    "RecallBuild",
    "RecallCandidates",
    "RecallPlan",
    "SavedAt",
    "SearchCandidates",
    "activity",
    "alongside",
    "alongside_rowids",
    "asks",
    "assemble_recall",
    "estimate_tokens",
    "hybrid_score",
    "items_cost",
    "long_term_fits",
    "match_strength",
    "normalise_bm25",
    "plan_recall",
    "rank_search",
    "recency",
    "render",
    "search_score",
    "take_within_budget",
    "warning_tokens",
]

#: The e-folding time of activity and recency, in days (DESIGN: "half-life-like constant of 21 days").
ACTIVITY_DECAY_DAYS = 21.0
#: Reference count at which activity saturates.
ACTIVITY_SATURATION = 20

W_VECTOR = 0.55
W_BM25 = 0.30
W_ACTIVITY = 0.15
#: Weights when semantic search is off: the vector share moves to BM25.
W_BM25_TEXT_ONLY = 0.80
W_ACTIVITY_TEXT_ONLY = 0.20

#: Cosine similarity from which a memory counts as matching the query (MiniLM: related ≈ 0.4–0.6).
MATCH_SIMILARITY = 0.45
#: An older event or an archived memory joins a dump-all only when it matches at least this well.
EXTRA_SIMILARITY = 0.50
#: In hybrid mode one joins the long-term ranking from this similarity (or as a text hit): ranked
#: with everything else, a weak match still loses to a better one, but it is not shut out unseen.
HYBRID_EXTRA_SIMILARITY = 0.30
#: Short-term order without a query to match: recency, nudged by how well the memory matches.
SHORT_TERM_MATCH_WEIGHT = 0.3
#: Short-term order for a specific query: how well the memory matches, nudged by recency.
SHORT_TERM_RECENCY_WEIGHT = 0.3
#: A memory left out of its bucket joins "more matches" only when it matches at least this well
#: (a text hit, or this cosine similarity).
MORE_MIN_SIMILARITY = 0.3
#: What the block's title and section headings cost: "more matches" fills the total only as far as
#: the rendered block stays within it.
BLOCK_OVERHEAD_TOKENS = 140
#: Under the title when a line shows a confidence: lines of memories seen once show none.
CONFIRMED_LEGEND = "MED and HIGH mark memories used or confirmed 2+ and 5+ times; the others were saved once and not used since."
#: Saved alongside: a memory saved within ALONGSIDE_REACH saves of one of the ALONGSIDE_SEEDS best
#: matches (by meaning or by words, see :func:`match_strength`), in an unbroken run of saves by the
#: same assistant each within ALONGSIDE_SECONDS of the one before (in when it was saved and in when
#: it happened), ranks with ALONGSIDE_SHARE of that match, and each save further along the run with
#: ALONGSIDE_STEP of what the one before it took: the rest of a message saved in pieces, the other
#: half of an exchange.
ALONGSIDE_SEEDS = 40
ALONGSIDE_REACH = 4
ALONGSIDE_SHARE = 0.9
ALONGSIDE_STEP = 0.95
ALONGSIDE_SECONDS = 120.0
#: Conflict warnings shown under one memory's line; more are counted, not listed (list_conflicts has them).
CONFLICT_LINES = 2
#: What one warning line costs ("  ⚠ CONFLICT c…: disagrees with … (saved on chatgpt); ask …", about
#: 145 characters), and the line that counts the rest.
CONFLICT_LINE_TOKENS = 38
CONFLICT_MORE_TOKENS = 19
#: Search: a memory that ends in a question mark asks rather than tells, yet resembles the question
#: looking for its answer, so it scores ASKING_SHARE of itself; the memory saved right after one of
#: the ANSWER_SEEDS best-scoring of them (by the same assistant, within ALONGSIDE_SECONDS), likely
#: its answer, scores at least ANSWER_SHARE of the question's own score.
ASKING_SHARE = 0.8
ANSWER_SEEDS = 5
ANSWER_SHARE = 0.9
#: Search: weights of similarity and normalised BM25, and the similarity a non-text hit needs.
SEARCH_W_VECTOR = 0.6
SEARCH_W_BM25 = 0.4
SEARCH_MIN_SIMILARITY = 0.3

_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Budgets:
    """Token ceilings per bucket; their sum is the ceiling of the whole block. A memory costs its
    content's tokens plus ``line_tokens`` for the head of its line in the block: "- [fact · claude ·
    2024-05-08 · id 3f2a9c1b7d4e] " and the line's end are 51 characters, about 13 tokens (one
    platform, seen once; a confirmed memory's head or one saved by several assistants is longer), so
    the rendered block, not only its contents, stays within the total."""

    preference: int
    long_term: int
    short_term: int
    short_term_days: int
    line_tokens: int = 13

    @property
    def total(self) -> int:
        return self.preference + self.long_term + self.short_term


@dataclass(frozen=True, slots=True)
class OpenConflict:
    """An open conflict as recall shows it beside one of its memories."""

    conflict_id: str
    other_id: str
    other_platform: str


@dataclass(frozen=True, slots=True)
class RecallCandidates:
    """Everything recall ranks, read in one snapshot. Rowids identify memories throughout."""

    preference_order: tuple[tuple[int, int], ...]  # (rowid, tokens): pinned, references, newest
    preference_bm25: Mapping[int, float]  # raw bm25() of preference text hits
    vector: Mapping[int, float]  # cosine of the nearest non-preference vectors and of every text hit
    long_term_bm25: Mapping[int, float]  # raw bm25() over the long-term pool (extras included)
    long_term_tokens: int  # Σ tokens of active long-term memories
    extras: Mapping[int, Memory]  # matching older short-term and archived memories
    dump_order: tuple[tuple[int, int], ...] | None  # (rowid, tokens) of dump-all; None in hybrid
    pool: Mapping[int, Memory]  # hybrid candidates (empty in dump-all)
    short_term_bm25: Mapping[int, float]  # raw bm25() over the short-term window
    window: Mapping[int, tuple[int, float]]  # rowid -> (tokens, occurred_at) of short-term candidates
    open_conflicts: int
    #: rowid -> the open conflicts a memory is part of (what its warning lines cost)
    conflicts: Mapping[int, int] = field(default_factory=dict)
    #: rowid -> the share of a strong match's strength a memory saved alongside it takes (see
    #: :func:`alongside`); used to rank, not to decide what counts as a hit
    related: Mapping[int, float] = field(default_factory=dict)
    #: rowid -> (pinned, reference count) of each active preference, and its similarity to the
    #: query: equally pinned and confirmed preferences are ordered by how well they match
    preference_rank: Mapping[int, tuple[bool, int]] = field(default_factory=dict)
    preference_similarity: Mapping[int, float] = field(default_factory=dict)
    #: the newest long-term memories, in the hybrid pool whatever they match: one not embedded yet
    #: (saved a moment ago) is taken before the ranked rest, as its meaning cannot rank it yet
    newest: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class RecallPlan:
    """Which memories each bucket returns, in order, and why."""

    mode: RecallMode
    preferences: tuple[int, ...]
    long_term: tuple[int, ...]
    short_term: tuple[int, ...]
    scores: Mapping[int, float]
    hits: tuple[int, ...]  # returned memories that matched the query: their references grow
    more: tuple[int, ...] = ()  # the best remaining matches, in the budget the buckets left unused

    @property
    def chosen(self) -> tuple[int, ...]:
        return self.preferences + self.long_term + self.short_term + self.more


@dataclass(frozen=True, slots=True)
class Chosen:
    """The full memories (with provenance) of a plan, and their open conflicts by memory id."""

    memories: Mapping[int, Memory]
    conflicts: Mapping[str, Sequence[OpenConflict]]


@dataclass(frozen=True, slots=True)
class RecallBuild:
    result: RecallResult
    hit_rowids: tuple[int, ...]  # the returned memories that matched the query: their references grow


@dataclass(frozen=True, slots=True)
class SearchCandidates:
    bm25: Mapping[int, float]  # raw bm25() of the text hits
    vector: Mapping[int, float]  # cosine similarity of the nearest vectors and of the text hits
    #: every candidate (no provenance), and the memory saved right after each that asks
    memories: Mapping[int, Memory]


def estimate_tokens(text: str) -> int:
    """ceil(chars / 4): no tokenizer, the same estimate for every model."""
    return -(-len(text) // 4)


def items_cost(items: Sequence[RecallItem], budgets: Budgets) -> int:
    """Tokens ``items`` take against their bucket's budget: content plus each line's head."""
    return sum(estimate_tokens(item.memory.content) + budgets.line_tokens for item in items)


def _age_days(now: datetime, then: datetime) -> float:
    return max(0.0, (now - then).total_seconds() / _DAY)


def activity(memory: Memory, now: datetime) -> float:
    """In [0, 1]: log-scaled reference count, decayed by the time since the memory was last touched.

    activity = min(1, ln(1 + refs) / ln(1 + 20)) * exp(-days_since_touch / 21)
    """
    touched = max(memory.updated_at, memory.last_referenced_at or memory.updated_at)
    strength = min(1.0, math.log1p(memory.reference_count) / math.log1p(ACTIVITY_SATURATION))
    return strength * math.exp(-_age_days(now, touched) / ACTIVITY_DECAY_DAYS)


def recency(when: datetime, now: datetime) -> float:
    """exp(-age_days / 21): 1 for now (or the future), ~0.37 at three weeks, ~0.06 at two months."""
    return math.exp(-_age_days(now, when) / ACTIVITY_DECAY_DAYS)


def normalise_bm25(raw: dict[int, float]) -> dict[int, float]:
    """FTS5's bm25() is negative, lower is better; map to (0, 1], best hit = 1."""
    if not raw:
        return {}
    best = max(-v for v in raw.values())
    if best <= 0:
        return {k: 1.0 for k in raw}
    return {k: max(0.0, -v) / best for k, v in raw.items()}


def hybrid_score(*, vector: float, bm25: float, activity_: float, semantic: bool) -> float:
    """One score in [0, 1] for the long-term overflow ranking.

    semantic on:  0.55 * vector + 0.30 * bm25 + 0.15 * activity
    semantic off: 0.80 * bm25 + 0.20 * activity
    ``vector`` is cosine similarity clipped to [0, 1] (0 for a memory with no vector yet).
    """
    if semantic:
        return W_VECTOR * max(0.0, min(1.0, vector)) + W_BM25 * bm25 + W_ACTIVITY * activity_
    return W_BM25_TEXT_ONLY * bm25 + W_ACTIVITY_TEXT_ONLY * activity_


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


_BUCKET_TITLES = (
    ("Preferences", "How this person likes things. Follow these unless told otherwise."),
    ("Long-term memory", "Facts, decisions, lessons and failures (and older events that match)."),
    ("Recent", "Events and notes, most recent first."),
    ("More matches", "Other memories that match the question, from any bucket and any age, best first."),
)


def _line(item: RecallItem, conflicts: dict[tuple[str, str], tuple[str, str]]) -> str:
    m = item.memory
    when = m.occurred_at if m.type in {"event", "note"} else m.updated_at
    platforms = ", ".join(m.platforms) if m.provenance else m.platform
    pin = " · pinned" if m.pinned else ""
    # A memory seen once says nothing of its confidence: most are, and the block's legend says so.
    confirmed = "" if m.confidence is Confidence.UNCONFIRMED else f" · {m.confidence}"
    head = f"[{m.type}{confirmed} · {platforms} · {when:%Y-%m-%d} · id {m.id}{pin}]"
    text = " ".join(m.content.split())
    line = f"- {head} {text}"
    shown = item.conflict_ids[:CONFLICT_LINES]
    for cid in shown:
        other_id, other_platform = conflicts.get((m.id, cid), ("?", "?"))
        line += (
            f"\n  ⚠ CONFLICT {cid}: disagrees with {other_id} (saved on {other_platform}); "
            "ask the person which is right, or tell them to resolve it in Tallei."
        )
    if len(item.conflict_ids) > len(shown):
        line += (
            f"\n  ⚠ {len(item.conflict_ids) - len(shown)} more open conflicts with this memory; "
            "list_conflicts shows them all."
        )
    return line


def render(
    *,
    query: str,
    buckets: Sequence[Sequence[RecallItem]],
    mode: RecallMode,
    semantic: bool,
    short_term_days: int,
    conflicts: dict[tuple[str, str], tuple[str, str]],
) -> str:
    """The context block handed to the host model: one section per bucket.

    ``conflicts`` maps (memory id, conflict id) to the other memory's id and platform.
    """
    total = sum(len(b) for b in buckets)
    out = [f"# Tallei memory ({total} memories for: {query.strip()[:120]!r})"]
    if any(item.memory.confidence is not Confidence.UNCONFIRMED for b in buckets for item in b):
        out.append(CONFIRMED_LEGEND)
    if total == 0:
        out.append(
            "Nothing is stored yet that relates to this. Save what the person tells you with save_memory."
        )
    for (title, blurb), items in zip(_BUCKET_TITLES, buckets, strict=True):
        if not items:
            continue
        if title == "Recent":
            blurb = f"Events and notes from the last {short_term_days} days, newest first."
            if query.strip():
                blurb = f"Events and notes from the last {short_term_days} days, best matches first."
        if title == "Long-term memory" and mode is RecallMode.HYBRID:
            blurb += " Only the most relevant are shown; use search_memories for more."
        out.append(f"\n## {title}\n{blurb}")
        out.extend(_line(item, conflicts) for item in items)
    if not semantic:
        out.append("\n(Semantic search is off: matches come from exact words and recency only.)")
    return "\n".join(out)


def long_term_fits(long_term_tokens: int, extras: Sequence[Memory], budget: int) -> bool:
    """Dump-all when every active long-term memory and every matching extra fit the budget."""
    return long_term_tokens + sum(estimate_tokens(m.content) for m in extras) <= budget


@dataclass(frozen=True, slots=True)
class SavedAt:
    """Who saved a memory and when, as :func:`alongside` compares neighbours."""

    platform: str
    created_at: float
    occurred_at: float

    @classmethod
    def of(cls, memory: Memory) -> SavedAt:
        return cls(memory.platform, memory.created_at.timestamp(), memory.occurred_at.timestamp())

    def next_to(self, other: SavedAt) -> bool:
        """Saved by the same assistant within ``ALONGSIDE_SECONDS``, in when it was saved and in when
        it happened (callers check that the two are neighbours in saving order)."""
        return (
            self.platform == other.platform
            and abs(self.created_at - other.created_at) <= ALONGSIDE_SECONDS
            and abs(self.occurred_at - other.occurred_at) <= ALONGSIDE_SECONDS
        )


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


def _seeds(match: Mapping[int, float]) -> list[tuple[int, float]]:
    return sorted(match.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:ALONGSIDE_SEEDS]


def alongside_rowids(match: Mapping[int, float]) -> list[int]:
    """The rows :func:`alongside` needs: the ``ALONGSIDE_SEEDS`` best matches and the
    ``ALONGSIDE_REACH`` saved before and after each, in saving order."""
    reach = range(-ALONGSIDE_REACH, ALONGSIDE_REACH + 1)
    return sorted({rowid + step for rowid, _ in _seeds(match) for step in reach})


def alongside(
    match: Mapping[int, float], saved: Mapping[int, SavedAt], similarity: Mapping[int, float]
) -> dict[int, float]:
    """rowid -> the most it takes from the ``ALONGSIDE_SEEDS`` best ``match`` es saved alongside it:
    within ``ALONGSIDE_REACH`` saves (rowid ± 1 … ± reach), every save on the way
    :meth:`SavedAt.next_to` the one before it, the next save taking ``ALONGSIDE_SHARE`` of the
    seed's match and each one further ``ALONGSIDE_STEP`` of the one before. Only memories found in
    ``saved`` (active ones) are reached, and only those whose own ``similarity`` is lower are
    returned: the value stands in for a similarity when recall ranks them."""
    related: dict[int, float] = {}
    for rowid, strength in _seeds(match):
        seed = saved.get(rowid)
        if seed is None:
            continue
        for step in (-1, 1):
            before, at, lent = seed, rowid + step, ALONGSIDE_SHARE * strength
            while abs(at - rowid) <= ALONGSIDE_REACH:
                n = saved.get(at)
                if n is None or not n.next_to(before):
                    break
                related[at] = max(related.get(at, 0.0), lent)
                before, at, lent = n, at + step, lent * ALONGSIDE_STEP
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


def warning_tokens(open_conflicts: int) -> int:
    """What the conflict warnings under a memory's line cost in the block (see ``_line``)."""
    shown = min(open_conflicts, CONFLICT_LINES)
    return shown * CONFLICT_LINE_TOKENS + (CONFLICT_MORE_TOKENS if open_conflicts > shown else 0)


def plan_recall(c: RecallCandidates, *, budgets: Budgets, now: datetime, semantic: bool) -> RecallPlan:
    """Rank and budget the candidates of each bucket (docs/adr/0002-recall-scoring.md). A line costs
    its content, its head and the conflict warnings under it."""

    def cost(rowid: int, tokens: int) -> int:
        return tokens + budgets.line_tokens + warning_tokens(c.conflicts.get(rowid, 0))

    pref_ids = take_within_budget(((rid, cost(rid, t)) for rid, t in _preferences(c)), budgets.preference)
    bm25 = normalise_bm25(dict(c.long_term_bm25))

    def score(rowid: int, memory: Memory) -> float:
        return hybrid_score(
            vector=_similarity(c, rowid),
            bm25=bm25.get(rowid, 0.0),
            activity_=activity(memory, now),
            semantic=semantic,
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
        fresh = recency(datetime.fromtimestamp(at, tz=UTC), now)
        # A specific question wants what matches it; with nothing to match, the newest come first.
        if specific:
            scores[rid] = round(match + SHORT_TERM_RECENCY_WEIGHT * fresh, 4)
        else:
            scores[rid] = round(fresh + SHORT_TERM_MATCH_WEIGHT * match, 4)
    st_ranked = sorted(c.window, key=lambda rid: (scores[rid], rid), reverse=True)
    st_ids = take_within_budget(((rid, cost(rid, c.window[rid][0])) for rid in st_ranked), budgets.short_term)

    matched = (
        set(c.preference_bm25)
        | set(c.long_term_bm25)
        | set(c.short_term_bm25)
        | {rid for rid, s in c.vector.items() if s >= MATCH_SIMILARITY}
    )
    taken = {*pref_ids, *lt_ids, *st_ids}
    used = BLOCK_OVERHEAD_TOKENS
    used += sum(cost(rid, t) for rid, t in c.preference_order if rid in taken)
    used += sum(cost(rid, t) for rid, t in lt_order if rid in taken)
    used += sum(cost(rid, c.window[rid][0]) for rid in st_ids)
    more_ids = _more_matches(c, taken, budgets.total - used, cost, scores)
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
        # Only a match joins "more matches"; one that is also saved alongside a match ranks higher.
        if rid not in bm25 and c.vector.get(rid, 0.0) < MORE_MIN_SIMILARITY:
            continue
        similarity = _similarity(c, rid)
        score = search_score(
            similarity=similarity, bm25=bm25.get(rid, 0.0), text_hit=rid in bm25, semantic=True
        )
        if score is not None:
            found.append((score, rid))
    found.sort(reverse=True)
    more = take_within_budget(((rid, cost(rid, tokens[rid])) for _, rid in found), room)
    best = {rid: score for score, rid in found}
    scores.update({rid: round(best[rid], 4) for rid in more})
    return more


def assemble_recall(
    plan: RecallPlan,
    chosen: Chosen,
    *,
    query: str,
    semantic: bool,
    short_term_days: int,
    open_conflicts: int,
    max_tokens: int | None = None,
) -> RecallBuild:
    """The recall result for a plan, from the chosen memories and their open conflicts.

    Budgets count each line's head as ``Budgets.line_tokens``; a head that says more (confirmations,
    several platforms, a pin, conflict warnings) can cost more than that, so when the rendered block
    would pass ``max_tokens`` memories are left out until it fits: the last "more matches" first,
    then the lowest-scored of the long-term and recent buckets, preferences last. What is left out
    is no hit."""
    per_memory = {
        (mid, oc.conflict_id): (oc.other_id, oc.other_platform)
        for mid, found in chosen.conflicts.items()
        for oc in found
    }
    ids = [list(plan.preferences), list(plan.long_term), list(plan.short_term), list(plan.more)]
    scored = (False, True, True, True)

    def item(rid: int, with_score: bool) -> RecallItem:
        memory = chosen.memories[rid]
        conflict_ids = tuple(oc.conflict_id for oc in chosen.conflicts.get(memory.id, ()))
        return RecallItem(memory, plan.scores.get(rid) if with_score else None, conflict_ids)

    def build() -> tuple[tuple[tuple[RecallItem, ...], ...], str]:
        buckets = tuple(tuple(item(rid, s) for rid in b) for b, s in zip(ids, scored, strict=True))
        text = render(
            query=query,
            buckets=buckets,
            mode=plan.mode,
            semantic=semantic,
            short_term_days=short_term_days,
            conflicts=per_memory,
        )
        return buckets, text

    buckets, text = build()
    dropped: set[int] = set()
    while max_tokens is not None and estimate_tokens(text) > max_tokens and any(ids):
        # Each line's rendered length is known, so one pass decides what goes; a render checks it.
        line_chars = {
            rid: len(_line(it, per_memory)) + 1
            for bucket_ids, bucket in zip(ids, buckets, strict=True)
            for rid, it in zip(bucket_ids, bucket, strict=True)
        }
        over = len(text) - 4 * max_tokens
        for rid, bucket in _drop_order(ids, plan.scores):
            if over <= 0:
                break
            ids[bucket].remove(rid)
            dropped.add(rid)
            over -= line_chars[rid]
        buckets, text = build()
    result = RecallResult(
        query=query,
        preferences=buckets[0],
        long_term=buckets[1],
        short_term=buckets[2],
        long_term_mode=plan.mode,
        semantic_search=semantic,
        text=text,
        open_conflicts=open_conflicts,
        more=buckets[3],
    )
    return RecallBuild(result, tuple(rid for rid in plan.hits if rid not in dropped))


def _drop_order(ids: Sequence[Sequence[int]], scores: Mapping[int, float]) -> list[tuple[int, int]]:
    """(rowid, bucket index) in the order a block over its total leaves memories out: "more
    matches" from the last, then the long-term and recent buckets from their tails (each bucket's
    weakest line by its own order), the lower-scored tail first, then preferences from the last."""
    order = [(rid, 3) for rid in reversed(ids[3])]
    long_term, recent = list(ids[1]), list(ids[2])
    while long_term or recent:
        if not recent or (long_term and scores.get(long_term[-1], 0.0) <= scores.get(recent[-1], 0.0)):
            order.append((long_term.pop(), 1))
        else:
            order.append((recent.pop(), 2))
    order.extend((rid, 0) for rid in reversed(ids[0]))
    return order


def search_score(*, similarity: float, bm25: float, text_hit: bool, semantic: bool) -> float | None:
    """A search hit's score, or None when the memory is no hit.

    semantic on:  0.6 * clip(similarity, 0, 1) + 0.4 * bm25, for text hits and similarity >= 0.3
    semantic off: bm25, for text hits only
    ``bm25`` is normalised (best text hit = 1, 0 for none).
    """
    if not semantic:
        return bm25 if text_hit else None
    sim = max(0.0, min(1.0, similarity))
    if not text_hit and sim < SEARCH_MIN_SIMILARITY:
        return None
    return SEARCH_W_VECTOR * sim + SEARCH_W_BM25 * bm25


def rank_search(
    c: SearchCandidates,
    *,
    semantic: bool,
    limit: int,
    types: Collection[MemoryType] | None = None,
    buckets: Collection[Bucket] | None = None,
    include_archived: bool = False,
) -> list[tuple[int, float]]:
    """(rowid, score) of the best ``limit`` hits among live memories passing the filters, best first.
    A memory that asks scores ``ASKING_SHARE`` of itself, and the one saved right after it (its
    likely answer) at least ``ANSWER_SHARE`` of the question's score (see ``ASKING_SHARE``)."""
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
        )
        if score is None:
            continue
        if asks(m.content):
            questions.append((score, rowid))
            score *= ASKING_SHARE
        scores[rowid] = score
    questions.sort(reverse=True)
    for score, rowid in questions[:ANSWER_SEEDS]:
        answer = c.memories.get(rowid + 1)
        if (
            answer is not None
            and passes(answer)
            and SavedAt.of(answer).next_to(SavedAt.of(c.memories[rowid]))
        ):
            scores[rowid + 1] = max(scores.get(rowid + 1, 0.0), ANSWER_SHARE * score)
    hits = sorted(scores.items(), key=lambda h: h[1], reverse=True)
    return hits[:limit]
