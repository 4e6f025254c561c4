"""Rendering: the context block recall hands the host model, and what its lines cost.

:func:`assemble_recall` turns a :class:`~.values.RecallPlan` and the chosen memories into the
:class:`~tallei_desktop.core.models.RecallResult` and its text, leaving memories out when the rendered
block would pass its total. Token estimate: ``ceil(chars / 4)``, no tokenizer (DESIGN). These
constants are measured costs of the rendering, not tuned weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tallei_desktop.core.models import Confidence, RecallItem, RecallMode, RecallResult
from tallei_desktop.core.recall.values import Budgets, Chosen, RecallBuild, RecallPlan

__all__ = [
    "BLOCK_OVERHEAD_TOKENS",
    "CONFIRMED_LEGEND",
    "CONFLICT_LINES",
    "CONFLICT_LINE_TOKENS",
    "CONFLICT_MORE_TOKENS",
    "assemble_recall",
    "estimate_tokens",
    "items_cost",
    "render",
    "warning_tokens",
]


#: What the block's title and section headings cost: "more matches" fills the total only as far as
#: the rendered block stays within it.
BLOCK_OVERHEAD_TOKENS = 140
#: Under the title when a line shows a confidence: lines of memories seen once show none.
CONFIRMED_LEGEND = "MED and HIGH mark memories used or confirmed 2+ and 5+ times; the others were saved once and not used since."
#: Conflict warnings shown under one memory's line; more are counted, not listed (list_conflicts has them).
CONFLICT_LINES = 2
#: What one warning line costs ("  ⚠ CONFLICT c…: disagrees with … (saved on chatgpt); ask …", about
#: 145 characters), and the line that counts the rest.
CONFLICT_LINE_TOKENS = 38
CONFLICT_MORE_TOKENS = 19


def estimate_tokens(text: str) -> int:
    """ceil(chars / 4): no tokenizer, the same estimate for every model."""
    return -(-len(text) // 4)


def items_cost(items: Sequence[RecallItem], budgets: Budgets) -> int:
    """Tokens ``items`` take against their bucket's budget: content plus each line's head."""
    return sum(estimate_tokens(item.memory.content) + budgets.line_tokens for item in items)


def warning_tokens(open_conflicts: int) -> int:
    """What the conflict warnings under a memory's line cost in the block (see ``_line``)."""
    shown = min(open_conflicts, CONFLICT_LINES)
    return shown * CONFLICT_LINE_TOKENS + (CONFLICT_MORE_TOKENS if open_conflicts > shown else 0)


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
