"""Dedup, supersede and cross-platform conflicts: what the background worker decides for a new memory.

Runs inside the write transaction that finishes a pending memory, after its embedding exists (or
without one when semantic search is off). Every decision re-reads the rows it changes, so two
processes finishing the same memory at once reach the same result once.

Rules (all among *active* memories; similarities are cosine of all-MiniLM-L6-v2 vectors):

* **Dedup**: same type, similarity at least ``DEDUP_SIMILARITY``, and the two say the same thing
  (:func:`is_duplicate`): the same distinctive tokens (numbers, also written as words, names,
  weekdays, months: "meeting on Monday" vs "on Tuesday" scores 0.94 but is not the same memory), the
  same negation and comparison words, the same content words in the same order (at most one added
  word on one side). A contradiction is never merged: it would silently hide one side. The new memory is marked ``merged`` into the older
  one, which gains a reference and a "confirmed" provenance entry from the new platform.
* **Same subject**, preferences: similarity at least ``SUBJECT_SIMILARITY`` with a shared
  subject word (:func:`subject_words`), or at least ``STRONG_SUBJECT_SIMILARITY`` on its own; without
  vectors, two shared subject words.
* **Same claim, other value**, facts and decisions (same type): similarity at least
  ``CLAIM_SIMILARITY`` and :func:`claims_differ` (one short value swapped, a negation, a reversed
  comparison); compatible facts that add to each other stay unflagged.
* **Supersede**: same subject (or claim), same platform, the stricter ``SUPERSEDE_SIMILARITY``, and
  the same claim with another value (:func:`claims_differ`): it retires a memory, so it must be surer
  than a flag. The older one becomes ``superseded`` by the new one.
* **Conflict**: same subject, different platforms (and a pinned older memory, whatever the
  platform): an open conflict is recorded for the person to settle.
"""

from __future__ import annotations

import difflib
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
    "claims_differ",
    "distinctive_tokens",
    "finish_memory",
    "is_duplicate",
    "replaces_value",
    "subject_words",
]

DEDUP_SIMILARITY = 0.90
SUBJECT_SIMILARITY = 0.60
STRONG_SUBJECT_SIMILARITY = 0.70
#: How many nearest memories a new one is compared with.
NEIGHBOURS_K = 12
SUPERSEDE_SIMILARITY = 0.70
#: Facts and decisions contradict only when this alike and :func:`claims_differ` says so.
CLAIM_SIMILARITY = 0.50
_CLAIMS = frozenset({MemoryType.FACT, MemoryType.DECISION})

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
#: Numbers written as words, so "seven years old" and "7 years old" are one fact and "nine" another.
_NUMBER_WORDS = {
    w: str(n)
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000", "dozen": "12"}
#: Words that turn a statement around: a sentence with one of these is not the same as one without.
_NEGATORS = frozenset(
    """
    not no never none nothing nobody neither nor without don't doesn't didn't won't wouldn't can't cannot
    isn't aren't wasn't weren't hasn't haven't shouldn't dislike dislikes disliked hate hates hated avoid
    avoids avoided stop stopped stops quit refuse refused refuses decline declined declines reject rejected
    rejects against
    """.split()
)
#: Words that give a comparison its direction ("more than" vs "less than"); kept apart from stance words.
_DIRECTION = frozenset(
    "more less fewer most least better worse best worst over under above below before after".split()
)


def _number(word: str) -> str:
    return _NUMBER_WORDS.get(word, word)


def distinctive_tokens(text: str) -> frozenset[str]:
    """Numbers (digits or written as words), capitalised names (past the first word) and calendar
    words: what makes two otherwise alike sentences different facts."""
    out: set[str] = set()
    for i, token in enumerate(_TOKEN.findall(text)):
        low = token.casefold().strip(".'-")
        if low in _NUMBER_WORDS:
            out.add(_NUMBER_WORDS[low])
        elif any(ch.isdigit() for ch in token) or low in _CALENDAR or (i > 0 and token[:1].isupper()):
            out.add(low)
    return frozenset(out)


def _stem(word: str) -> str:
    """A light stem, enough that "apps" and "app", "drafted" and "draft" compare equal."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _content_sequence(text: str) -> list[str]:
    """The stemmed content words of ``text`` in order (stance, negation and direction words left out)."""
    words = (w.strip(".'-") for w in _WORD.findall(text.casefold()))
    return [
        _stem(_number(w))
        for w in words
        if (len(w) > 1 or w.isdigit()) and w not in _STANCE and w not in _NEGATORS and w not in _DIRECTION
    ]


def _polarity(text: str) -> tuple[bool, frozenset[str]]:
    """Whether the text is negated (odd number of negators) and which comparison words it uses."""
    words = [w.strip(".'-") for w in _WORD.findall(text.casefold())]
    negated = sum(w in _NEGATORS or w.endswith("n't") for w in words) % 2 == 1
    return negated, frozenset(w for w in words if w in _DIRECTION)


def is_duplicate(a: str, b: str, similarity: float) -> bool:
    """Whether ``b`` says the same thing as ``a``: very similar, and nothing that makes them two
    claims — no different number, name or date, no negation on one side only, no comparison turned
    around, and no word swapped for another ("formal" vs "casual"; one side may add a single word)."""
    if similarity < DEDUP_SIMILARITY or distinctive_tokens(a) != distinctive_tokens(b):
        return False
    if _polarity(a) != _polarity(b):
        return False
    seq_a, seq_b = _content_sequence(a), _content_sequence(b)
    only_a, only_b = set(seq_a) - set(seq_b), set(seq_b) - set(seq_a)
    if (only_a and only_b) or len(only_a | only_b) > 1:
        return False
    shared = set(seq_a) & set(seq_b)
    order_a = list(dict.fromkeys(w for w in seq_a if w in shared))
    order_b = list(dict.fromkeys(w for w in seq_b if w in shared))
    return order_a == order_b


def claims_differ(a: str, b: str) -> bool:
    """Whether two facts or decisions make the same claim with a different value: the same frame
    with one short value swapped ("lives in Lisbon" / "lives in Madrid", "accept" / "turn down") or
    a number added ("spaces" / "4 spaces"), the same words with the comparison turned around, or one side negated.

    Deliberately strict: alike facts about different things ("sister is a doctor" / "brother is a
    lawyer", "cat named Miso" / "dog named Pepper") swap more than one value and stay unflagged,
    and so do facts that add to each other ("born in Porto" / "grew up in Porto and Braga").
    """
    seq_a, seq_b = _content_sequence(a), _content_sequence(b)
    if not set(seq_a) & set(seq_b):
        return False
    if _polarity(a)[0] != _polarity(b)[0]:
        # A negation turns the claim around only when the rest says nearly the same thing.
        return len(set(seq_a) ^ set(seq_b)) <= 2
    if set(seq_a) == set(seq_b):
        return list(dict.fromkeys(seq_a)) != list(dict.fromkeys(seq_b)) or _polarity(a) != _polarity(b)
    changes = [
        op for op in difflib.SequenceMatcher(a=seq_a, b=seq_b, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    if len(changes) != 1:
        return False
    kind, i1, i2, j1, j2 = changes[0]
    if kind != "replace":
        # Adding only a number sets a value the other left open ("spaces" / "4 spaces").
        added = seq_a[i1:i2] + seq_b[j1:j2]
        return all(any(ch.isdigit() for ch in w) for w in added)
    return min(i2 - i1, j2 - j1) == 1 and max(i2 - i1, j2 - j1) <= 2


def replaces_value(a: str, b: str) -> bool:
    """Whether fact ``a`` plainly replaces fact ``b`` (same claim, another value, :func:`claims_differ`)
    about a subject both name in ordinary words before the value changes ("the office is in ...",
    "lives in ..."). Two remarks that share only names, numbers and dates before the difference
    ("Ana, 8 May: thanks!" / "Ben, 8 May: thanks!", "Ana: I lost my job" / "Ana: I lost my keys")
    are two statements, and both stay."""
    if not claims_differ(a, b):
        return False
    seq_a, seq_b = _content_sequence(a), _content_sequence(b)
    # Capitalised words count as names even first in the sentence, where a speaker's name stands.
    names = {w.casefold().strip(".'-") for w in _TOKEN.findall(f"{a} {b}") if w[:1].isupper()}
    marked = {_stem(_number(t)) for t in distinctive_tokens(a) | distinctive_tokens(b) | names}
    for wa, wb in zip(seq_a, seq_b, strict=False):
        if wa != wb:
            return False
        if wa not in marked and not wa.isdigit():
            return True
    return False


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


def _contradicts(
    new_type: MemoryType, old_type: MemoryType, new: str, old: str, similarity: float | None
) -> bool:
    """Whether the new memory says something else about what the old one is about."""
    if new_type is MemoryType.PREFERENCE and old_type is MemoryType.PREFERENCE:
        return _same_subject(new, old, similarity)
    if new_type is not old_type or new_type not in _CLAIMS:
        return False
    return (similarity is None or similarity >= CLAIM_SIMILARITY) and claims_differ(new, old)


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
        # Only an older memory (lower rowid) can be superseded by, or conflict with, this one.
        if other_rowid > rowid or not _contradicts(new.type, old.type, new.content, old.content, similarity):
            continue
        if old.pinned:
            # A pinned preference is the person's own choice: never replace it silently.
            cid = open_conflict(conn, other_rowid, rowid, now, platform=new.platform)
            outcome = Outcome(conflicts=(*outcome.conflicts, cid))
        elif old.platform == new.platform and (
            new.type is MemoryType.PREFERENCE or replaces_value(new.content, old.content)
        ):
            # Retiring a memory hides it, so only a plain replacement does: the same claim with
            # another value. Two remarks on one subject ("loves painting", "loves painting sunsets")
            # both stay; a conversation's turns are not retired wholesale.
            if (similarity is None or similarity >= SUPERSEDE_SIMILARITY) and claims_differ(
                new.content, old.content
            ):
                lc.supersede(conn, other, found, now)
                outcome = Outcome(superseded=(*outcome.superseded, old.id), conflicts=outcome.conflicts)
        elif new.platform not in lc.platforms_of(conn, other_rowid):
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
