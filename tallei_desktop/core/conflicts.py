"""Dedup, supersede and cross-platform conflicts: what the background worker decides for a new memory.

Runs inside the write transaction that finishes a pending memory, after its embedding exists (or
without one when semantic search is off). Every decision re-reads the rows it changes, so two
processes finishing the same memory at once reach the same result once.

Rules (all among *active* memories; similarities are cosine of all-MiniLM-L6-v2 vectors):

* **Dedup**: same type, similarity at least ``DEDUP_SIMILARITY``, the same distinctive tokens
  (numbers, names, weekdays, months: "meeting on Monday" vs "on Tuesday" scores 0.94 but is not the
  same memory) and mostly the same content words. The new memory is marked ``merged`` into the older
  one, which gains a reference and a "confirmed" provenance entry from the new platform.
* **Same subject** (preferences only): similarity at least ``SUBJECT_SIMILARITY`` with a shared
  subject word (:func:`subject_words`), or at least ``STRONG_SUBJECT_SIMILARITY`` on its own; without
  vectors, two shared subject words.
* **Supersede**: same subject, same platform, and the stricter ``SUPERSEDE_SIMILARITY`` (it retires a
  memory, so it must be surer than a flag): the older one becomes ``superseded`` by the new one.
* **Conflict**: same subject, different platforms (and a pinned older memory, whatever the
  platform): an open conflict is recorded for the person to settle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tallei_desktop.core.models import Bucket, MemoryStatus, MemoryType
from tallei_desktop.core.store import Connection
from tallei_desktop.core.store import lifecycle as lc
from tallei_desktop.core.store.conflicts import open_conflict

__all__ = [
    "DEDUP_SIMILARITY",
    "SUBJECT_SIMILARITY",
    "Outcome",
    "distinctive_tokens",
    "finish_memory",
    "is_duplicate",
    "subject_words",
]

DEDUP_SIMILARITY = 0.90
SUBJECT_SIMILARITY = 0.60
STRONG_SUBJECT_SIMILARITY = 0.70
#: How many nearest memories a new one is compared with.
NEIGHBOURS_K = 12
SUPERSEDE_SIMILARITY = 0.70

# Words that carry the stance, not the subject: "I prefer X", "always use Y", "call me Z".
_STANCE = frozenset(
    """
    i i'm im me my mine we our us you your user users the a an to of for in on at with and or but is are am
    be was were been being it its this that these those as by from over than then so very really always
    never usually prefer prefers preferred preference like likes liked love loves loved hate hates dislike
    dislikes want wants wanted use uses using used favourite favorite call called name named please should
    would could rather instead not no don't doesn't do does more less most least much best better good
    """.split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9+#.'-]*")


def subject_words(text: str) -> frozenset[str]:
    """The content words of a preference, with stance words removed (a crude but stable subject)."""
    words = {w.strip(".'-") for w in _WORD.findall(text.casefold())}
    return frozenset(w for w in words if len(w) > 1 and w not in _STANCE)


_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december today tomorrow yesterday tonight".split()
)
_TOKEN = re.compile(r"\w[\w'.-]*")


def distinctive_tokens(text: str) -> frozenset[str]:
    """Numbers, capitalised names (past the first word) and calendar words: what makes two
    otherwise alike sentences different facts."""
    out: set[str] = set()
    for i, token in enumerate(_TOKEN.findall(text)):
        low = token.casefold().strip(".'-")
        if any(ch.isdigit() for ch in token) or low in _CALENDAR or (i > 0 and token[:1].isupper()):
            out.add(low)
    return frozenset(out)


def is_duplicate(a: str, b: str, similarity: float) -> bool:
    if similarity < DEDUP_SIMILARITY or distinctive_tokens(a) != distinctive_tokens(b):
        return False
    wa, wb = subject_words(a), subject_words(b)
    return not (wa or wb) or len(wa & wb) / len(wa | wb) >= 0.5


@dataclass(frozen=True, slots=True)
class Outcome:
    merged_into: str | None = None
    superseded: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()


def _same_subject(a: str, b: str, similarity: float | None) -> bool:
    shared = subject_words(a) & subject_words(b)
    if similarity is None:
        return len(shared) >= 2
    return similarity >= STRONG_SUBJECT_SIMILARITY or (similarity >= SUBJECT_SIMILARITY and bool(shared))


def finish_memory(
    conn: Connection,
    rowid: int,
    content: str,
    vector: np.ndarray | None,
    now: float,
    *,
    neighbours: list[tuple[int, float]] | None = None,
) -> Outcome | None:
    """Store the vector of ``content`` and apply the lifecycle rules to one pending memory.

    Returns None when another process already finished it. A memory whose text changed since
    ``content`` was read keeps no vector (the next round embeds the new text). ``neighbours``
    (rowid, similarity) are candidates found before the transaction; without them the ``vec0`` table
    is searched here. Call inside a write transaction; every merge, supersede and conflict lands in
    the change feed with it.
    """
    found = lc.row_by_rowid(conn, rowid)
    if found is None:
        return None
    new = found.memory
    if new.content != content:
        vector = None
    already = lc.is_processed(conn, rowid)
    if vector is not None and new.status in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED):
        lc.store_vector(conn, rowid, vector, new.bucket)
    if already or new.status is not MemoryStatus.ACTIVE:
        lc.mark_processed(conn, rowid)
        return None

    outcome = Outcome()
    candidates: list[tuple[int, float | None]] = (
        list(neighbours)
        if neighbours is not None and vector is not None
        else _neighbours(conn, rowid, new.bucket, vector)
    )
    for other_rowid, similarity in candidates:
        other = lc.active_row(conn, other_rowid)
        if other is None:
            continue
        old = other.memory
        if (
            similarity is not None
            and old.type is new.type
            and is_duplicate(new.content, old.content, similarity)
        ):
            lc.merge_into(conn, found, other, now)
            outcome = Outcome(merged_into=old.id)
            break
        if new.type is not MemoryType.PREFERENCE or old.type is not MemoryType.PREFERENCE:
            continue
        # Only an older memory (lower rowid) can be superseded by, or conflict with, this one.
        if other_rowid > rowid or not _same_subject(new.content, old.content, similarity):
            continue
        if old.pinned:
            # A pinned preference is the person's own choice: never replace it silently.
            cid = open_conflict(conn, other_rowid, rowid, now, platform=new.platform)
            outcome = Outcome(conflicts=(*outcome.conflicts, cid))
        elif old.platform == new.platform and (similarity is None or similarity >= SUPERSEDE_SIMILARITY):
            lc.supersede(conn, other, found, now)
            outcome = Outcome(superseded=(*outcome.superseded, old.id), conflicts=outcome.conflicts)
        elif old.platform != new.platform and new.platform not in lc.platforms_of(conn, other_rowid):
            cid = open_conflict(conn, other_rowid, rowid, now, platform=new.platform)
            outcome = Outcome(superseded=outcome.superseded, conflicts=(*outcome.conflicts, cid))
    lc.mark_processed(conn, rowid)
    return outcome


def _neighbours(
    conn: Connection, rowid: int, bucket: Bucket, vector: np.ndarray | None
) -> list[tuple[int, float | None]]:
    if vector is not None:
        return [(r, s) for r, s in lc.nearest_in_bucket(conn, vector, NEIGHBOURS_K, bucket) if r != rowid]
    if bucket is not Bucket.PREFERENCE:
        return []
    # No vectors: compare with the most recent preferences by words alone.
    return [(r, None) for r in lc.recent_preferences(conn, exclude=rowid)]
