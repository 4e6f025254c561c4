"""Buckets, budgets and scores for recall; pure functions, no store access.

The formulas are written down in docs/adr/0002-recall-scoring.md; tests/core/test_recall_scoring.py
holds them to it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime

from tallei_desktop.core.models import Memory, RecallItem, RecallMode

__all__ = [
    "ACTIVITY_DECAY_DAYS",
    "activity",
    "estimate_tokens",
    "hybrid_score",
    "normalise_bm25",
    "recency",
    "render",
    "take_within_budget",
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

_DAY = 86_400.0


def estimate_tokens(text: str) -> int:
    """ceil(chars / 4): no tokenizer, the same estimate for every model."""
    return -(-len(text) // 4)


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
)


def _line(item: RecallItem, conflicts: dict[tuple[str, str], tuple[str, str]]) -> str:
    m = item.memory
    when = m.occurred_at if m.type in {"event", "note"} else m.updated_at
    platforms = ", ".join(m.platforms) if m.provenance else m.platform
    pin = " · pinned" if m.pinned else ""
    head = f"[{m.type} · {m.confidence} · {platforms} · {when:%Y-%m-%d} · id {m.id}{pin}]"
    text = " ".join(m.content.split())
    line = f"- {head} {text}"
    for cid in item.conflict_ids:
        other_id, other_platform = conflicts.get((m.id, cid), ("?", "?"))
        line += (
            f"\n  ⚠ CONFLICT {cid}: disagrees with {other_id} (saved on {other_platform}); "
            "ask the person which is right, or tell them to resolve it in Tallei."
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
    if total == 0:
        out.append(
            "Nothing is stored yet that relates to this. Save what the person tells you with save_memory."
        )
    for (title, blurb), items in zip(_BUCKET_TITLES, buckets, strict=True):
        if not items:
            continue
        if title == "Recent":
            blurb = f"Events and notes from the last {short_term_days} days, newest first."
        if title == "Long-term memory" and mode is RecallMode.HYBRID:
            blurb += " Only the most relevant are shown; use search_memories for more."
        out.append(f"\n## {title}\n{blurb}")
        out.extend(_line(item, conflicts) for item in items)
    if not semantic:
        out.append("\n(Semantic search is off: matches come from exact words and recency only.)")
    return "\n".join(out)
