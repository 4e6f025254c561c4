"""The words of a memory, read for the lifecycle: what two sentences share, what sets them apart.

Pure and deterministic. :func:`is_duplicate` decides a merge on its own (a near-identical sentence
that says nothing else); the rest are signals the pair model (:mod:`.pairs`) weighs: the
distinctive tokens (numbers, names, dates), the content words in order, negation and direction,
and whether one short value was swapped (:func:`claims_differ`).
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

__all__ = [
    "DEDUP_SIMILARITY",
    "NEGATORS",
    "SENTENCE_END",
    "STANCE_WORDS",
    "claims_differ",
    "content_sequence",
    "distinctive_tokens",
    "is_duplicate",
    "polarity",
    "replaces_value",
    "subject_words",
    "unshared_sentences",
]

#: A merge needs at least this cosine similarity (all-MiniLM-L6-v2) besides :func:`is_duplicate`'s words.
DEDUP_SIMILARITY = 0.90

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
#: A memory is compared with up to a dozen neighbours, and each pair reads both texts several ways:
#: each reading of a text is kept for the next pair (pure functions of the text).
_TEXTS_CACHED = 4096
_WORD = re.compile(r"[a-z0-9][a-z0-9+#.'-]*")


@lru_cache(maxsize=_TEXTS_CACHED)
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
#: The same word sets, for other readers of a memory's words (:mod:`.kinds`).
STANCE_WORDS = _STANCE
NEGATORS = _NEGATORS
#: Words that give a comparison its direction ("more than" vs "less than"); kept apart from stance words.
_DIRECTION = frozenset(
    "more less fewer most least better worse best worst over under above below before after".split()
)


def _number(word: str) -> str:
    return _NUMBER_WORDS.get(word, word)


@lru_cache(maxsize=_TEXTS_CACHED)
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
    """A light stem, enough that "apps" and "app", "drafted" and "draft", "cities" and "city",
    "flies" and "flying" compare equal."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=_TEXTS_CACHED)
def content_sequence(text: str) -> tuple[str, ...]:
    """The stemmed content words of ``text`` in order (stance, negation and direction words left out)."""
    words = (w.strip(".'-") for w in _WORD.findall(text.casefold()))
    return tuple(
        _stem(_number(w))
        for w in words
        if (len(w) > 1 or w.isdigit()) and w not in _STANCE and w not in _NEGATORS and w not in _DIRECTION
    )


@lru_cache(maxsize=_TEXTS_CACHED)
def polarity(text: str) -> tuple[bool, frozenset[str]]:
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
    if polarity(a) != polarity(b):
        return False
    seq_a, seq_b = content_sequence(a), content_sequence(b)
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
    seq_a, seq_b = content_sequence(a), content_sequence(b)
    if not set(seq_a) & set(seq_b):
        return False
    if polarity(a)[0] != polarity(b)[0]:
        # A negation turns the claim around only when the rest says nearly the same thing.
        return len(set(seq_a) ^ set(seq_b)) <= 2
    if set(seq_a) == set(seq_b):
        return list(dict.fromkeys(seq_a)) != list(dict.fromkeys(seq_b)) or polarity(a) != polarity(b)
    changes = [
        op
        for op in difflib.SequenceMatcher(a=seq_a, b=seq_b, autojunk=False).get_opcodes()
        if op[0] != "equal"
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
    seq_a, seq_b = content_sequence(a), content_sequence(b)
    # Capitalised words count as names even first in the sentence, where a speaker's name stands.
    names = {w.casefold().strip(".'-") for w in _TOKEN.findall(f"{a} {b}") if w[:1].isupper()}
    marked = {_stem(_number(t)) for t in distinctive_tokens(a) | distinctive_tokens(b) | names}
    for wa, wb in zip(seq_a, seq_b, strict=False):
        if wa != wb:
            return False
        if wa not in marked and not wa.isdigit():
            return True
    return False


#: Where one sentence of a memory ends and the next begins (its capital says nothing).
SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
#: Words a full stop ends without ending the sentence ("Dr. Hale", "Mr. Patel", "vs. Go").
_ABBREVIATIONS = frozenset("mr mrs ms dr prof st jr sr vs etc e.g i.e approx no mt".split())


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for piece in SENTENCE_END.split(text.strip()):
        last = out[-1].rsplit(None, 1)[-1].casefold().rstrip(".") if out else ""
        if last in _ABBREVIATIONS:
            out[-1] = f"{out[-1]} {piece}"
        elif piece:
            out.append(piece)
    return out


def _folded_sentence(sentence: str) -> str:
    return " ".join(sentence.casefold().split()).rstrip(".!?;")


@lru_cache(maxsize=_TEXTS_CACHED)
def unshared_sentences(a: str, b: str) -> tuple[str, str] | None:
    """When ``a`` and ``b`` share a sentence, what each says beyond the sentences they share (either
    may be empty): "Prefers rooibos. Camila agreed." / "Prefers rooibos. Source: the all-hands."
    agree on the claim, and only "Camila agreed." / "Source: the all-hands." can disagree. None
    when they share no sentence."""
    sa, sb = _sentences(a), _sentences(b)
    shared = {_folded_sentence(s) for s in sa} & {_folded_sentence(s) for s in sb}
    if not shared:
        return None
    return (
        " ".join(s for s in sa if _folded_sentence(s) not in shared),
        " ".join(s for s in sb if _folded_sentence(s) not in shared),
    )
