"""What kind of thing a word names: the knowledge two memories need when they share no words.

"Lives in Kampala" and "Home is a flat in Bergen" change one place for another; "Never drinks
alcohol" is ruled out by "Has a glass of wine with dinner", since wine is a kind of alcohol; "Is
vegan" by "Loves a rare steak", since a vegetarian, by definition, eats no meat. Word overlap and
sentence similarity cannot see any of this. WordNet's nouns can, and the pair model (:mod:`.pairs`)
reads four signals from them:

- :func:`kind_swapped`: a word only one memory has and a word only the other has are two things of
  one specific kind (two cities, two drinks, two languages), with how alike they are;
- :func:`case_of_excluded`: a memory rules a kind out ("never", "no", "without" and the words after),
  and the other names a case of it;
- :func:`ruled_out_by_definition`: one memory names something whose definition rules out a kind
  (vegan: "eats no animal or dairy products") and the other names a case of that kind;
- :func:`opposite_named`: each memory has an adjective the other lacks, and the two are opposites
  ("married" / "single", "employed" / "jobless").

A food counts as a case of what its definition says it is made of ("cheeseburger: a hamburger with
melted cheese" is a case of dairy food).

The words come from ``data/word_kinds.json.gz``, built from WordNet 3.0 by
``bench/build_word_kinds.py``. Without that file every signal is 0: the model still rules, on the
other features. Pure functions of the texts; each reading of a text is cached like text.py's.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from array import array
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from tallei_desktop.core.lifecycle.text import NEGATORS, STANCE_WORDS

__all__ = [
    "case_of_excluded",
    "is_verb",
    "kind_swapped",
    "kinds_available",
    "opposite_named",
    "ruled_out_by_definition",
]

log = logging.getLogger(__name__)

KINDS_FILE = "word_kinds.json.gz"
#: A shared kind this close to "entity" says nothing ("object", "abstraction", "matter").
MIN_KIND_DEPTH = 4
#: Two things of one kind are compared by their most frequent senses only ("go" is not the game).
KIND_SENSES = 2
#: What a memory rules out is a specific kind ("alcohol", "meat"), not "work" or "language".
MIN_RULED_OUT_DEPTH = 5
_TEXTS_CACHED = 4096
_WORD = re.compile(r"[a-z][a-z'-]*")
#: Words never looked up: stance, negation and the commonest verbs and fillers, which WordNet also
#: lists as rare nouns ("be" the element, "us" the country, "will" the document).
_SKIP = (
    STANCE_WORDS
    | NEGATORS
    | frozenset(
        """
        has have had having will can could may might must shall get gets got make makes made go goes
        going went gone take takes took see saw know knows knew think thinks say says said tell tells
        also just still now new old one two first last next every each other some many few lot lots
        time times day days week weeks year years way thing things something anything everything
        people person someone everyone anyone user he she they him her them his hers their theirs
        who what when where which why how here there about into onto up down out off again ago
        """.split()
    )
)


class _Lexicon:
    """WordNet's nouns as the pair model reads them (see ``bench/build_word_kinds.py``), kept compact:
    a hundred thousand words cost the background process about forty megabytes."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.depth = array("b", document["depth"])
        self._parent_starts = array("i", document["parents"]["starts"])
        self._parents = array("i", document["parents"]["flat"])
        self._bits: int = document["sense_bits"]
        #: Each word with its senses packed into one number (``bench/build_word_kinds.pack``).
        self._words: dict[str, int] = document["words"]
        self.rules_out = {int(k): frozenset(v) for k, v in document["rules_out"].items()}
        self.made_of = {int(k): tuple(v) for k, v in document["made_of"].items()}
        self.adjectives: dict[str, list[int]] = document["opposites"]["words"]
        self.antonyms = frozenset((a, b) for a, b in document["opposites"]["antonyms"])
        self.verbs = frozenset(document["verbs"])
        self._ancestors: dict[int, frozenset[int]] = {}
        self._cases: dict[int, frozenset[int]] = {}
        #: The first words of the nouns of two or three words ("ice" of "ice cream"): only after one
        #: of them is a longer reading tried.
        self.starts = frozenset(w.split(" ", 1)[0] for w in self._words if " " in w)

    def senses(self, word: str) -> tuple[int, ...]:
        """The senses of ``word``, most frequent first; () for a word WordNet lacks."""
        packed = self._words.get(word, 0)
        mask = (1 << self._bits) - 1
        out = []
        while packed:
            out.append((packed & mask) - 1)
            packed >>= self._bits
        return tuple(out)

    def parents(self, sense: int) -> array[int]:
        return self._parents[self._parent_starts[sense] : self._parent_starts[sense + 1]]

    def ancestors(self, sense: int) -> frozenset[int]:
        """``sense`` and every more general sense above it (kept once read: the graph is fixed)."""
        known = self._ancestors.get(sense)
        if known is None:
            out = {sense}
            for parent in self.parents(sense):
                out |= self.ancestors(parent)
            known = self._ancestors[sense] = frozenset(out)
        return known

    def case_of(self, sense: int) -> frozenset[int]:
        """The kinds ``sense`` is a case of: its :meth:`ancestors`, and for a food those of what it is
        made of."""
        known = self._cases.get(sense)
        if known is None:
            out = set(self.ancestors(sense))
            for part in self.made_of.get(sense, ()):
                out |= self.ancestors(part)
            known = self._cases[sense] = frozenset(out)
        return known

    def ruled_out(self, sense: int) -> frozenset[int]:
        """The kinds the definitions of ``sense`` and of its more general senses rule out."""
        out: set[int] = set()
        for up in self.ancestors(sense):
            out |= self.rules_out.get(up, frozenset())
        return frozenset(out)


@cache
def _lexicon() -> _Lexicon | None:
    try:
        raw = resources.files("tallei_desktop.core").joinpath("data", KINDS_FILE).read_bytes()
        return _Lexicon(json.loads(gzip.decompress(raw)))
    except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
        # Missing or damaged (a bad gzip stream is an OSError, bad JSON a ValueError).
        log.warning("word kinds unavailable (%s); the pair model rules without them", exc)
        return None


def kinds_available() -> bool:
    """Whether the word-kinds file could be read (the signals are 0 without it)."""
    return _lexicon() is not None


def _lookup(lexicon: _Lexicon, phrase: str) -> tuple[int, ...]:
    """The senses of ``phrase``, or of its singular ("cities", "wines", "boxes")."""
    for candidate in (
        phrase,
        phrase[:-3] + "y" if phrase.endswith("ies") else "",
        phrase[:-2] if phrase.endswith("es") else "",
        phrase[:-1] if phrase.endswith("s") and not phrase.endswith("ss") else "",
    ):
        senses = lexicon.senses(candidate) if candidate else ()
        if senses:
            return senses
    return ()


#: Words after which a verb comes: "never drinks", "she drinks", "doesn't eat". "No" is not one of
#: them ("no alcohol").
_BEFORE_A_VERB = frozenset(
    """
    i you he she we they it user never always usually often rarely sometimes only also still just not
    longer don't doesn't didn't won't can't cannot
    """.split()
)


def is_verb(word: str) -> bool:
    """Whether ``word`` (lower case), or the word it is the third person of ("lives", "teaches"), is a
    verb WordNet knows; False without the word-kinds file."""
    lexicon = _lexicon()
    if lexicon is None:
        return False
    forms = (word, word[:-1] if word.endswith("s") else "", word[:-2] if word.endswith("es") else "")
    return any(form in lexicon.verbs for form in forms if form)


def _reads_as_verb(lexicon: _Lexicon, tokens: list[str], i: int) -> bool:
    """Whether ``tokens[i]`` stands where a verb does (first in a fragment such as "Drinks tea", or
    after "never" or "she") and is one ("drinks", "eats", "loves")."""
    if i > 0 and tokens[i - 1] not in _BEFORE_A_VERB:
        return False
    word = tokens[i]
    return any(
        form in lexicon.verbs
        for form in (word, word[:-1] if word.endswith("s") else "", word[:-2] if word.endswith("es") else "")
        if form
    )


#: Endings by which a hyphenated compound says it lacks what it names ("gluten-free",
#: "sugar-less"): a "gluten-free loaf" is no case of gluten.
_LACKING = ("free", "less")


def _tokens(lexicon: _Lexicon, text: str) -> list[str]:
    """The words of ``text``, a compound WordNet does not know whole ("pulled-pork", "e-bike") as
    its parts ("pulled", "pork"), so its nouns are read; one that says it lacks something
    ("gluten-free") stays whole."""
    out: list[str] = []
    for word in _WORD.findall(text.casefold()):
        word = word.strip("'-")
        parts = [part for part in word.split("-") if part]
        if len(parts) > 1 and parts[-1] not in _LACKING and not lexicon.senses(word):
            out += parts
        else:
            out.append(word)
    return out


@lru_cache(maxsize=_TEXTS_CACHED)
def nouns(text: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The nouns WordNet knows in ``text``, longest reading first ("ice cream", "kuala lumpur"), each
    with its senses; stance words and fillers are skipped."""
    lexicon = _lexicon()
    if lexicon is None:
        return ()
    tokens = _tokens(lexicon, text)
    out: list[tuple[str, tuple[int, ...]]] = []
    i = 0
    while i < len(tokens):
        for size in (3, 2, 1) if tokens[i] in lexicon.starts else (1,):
            part = tokens[i : i + size]
            if len(part) < size or (size == 1 and (part[0] in _SKIP or len(part[0]) < 3)):
                continue
            if size == 1 and _reads_as_verb(lexicon, tokens, i):
                continue
            senses = _lookup(lexicon, " ".join(part))
            if senses:
                out.append((" ".join(part), senses))
                i += size
                break
        else:
            i += 1
    return tuple(out)


def _only(a: str, b: str) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """The nouns of ``a`` that ``b`` lacks, and those of ``b`` that ``a`` lacks (by sense)."""
    na, nb = nouns(a), nouns(b)
    senses_a = {s for _, ss in na for s in ss[:1]}
    senses_b = {s for _, ss in nb for s in ss[:1]}
    return (
        [(w, ss) for w, ss in na if ss[0] not in senses_b],
        [(w, ss) for w, ss in nb if ss[0] not in senses_a],
    )


def kind_swapped(a: str, b: str) -> float:
    """How alike the closest two things of one specific kind are, one named only in ``a`` and one
    only in ``b`` (Wu-Palmer: twice the depth of the kind they share over the sum of their depths);
    0 when no such two share a kind at least :data:`MIN_KIND_DEPTH` below "entity"."""
    lexicon = _lexicon()
    if lexicon is None:
        return 0.0
    only_a, only_b = _only(a, b)
    best = 0.0
    for _, senses_a in only_a:
        for _, senses_b in only_b:
            for sa in senses_a[:KIND_SENSES]:
                up_a = lexicon.ancestors(sa)
                for sb in senses_b[:KIND_SENSES]:
                    shared = up_a & lexicon.ancestors(sb)
                    if not shared or sa == sb:
                        continue
                    deepest = max(lexicon.depth[s] for s in shared)
                    if deepest < MIN_KIND_DEPTH:
                        continue
                    # Depths are shortest ways up, so a kind reached by a longer way can exceed them.
                    best = max(best, min(1.0, 2 * deepest / (lexicon.depth[sa] + lexicon.depth[sb])))
    return best


def _names_a_case(lexicon: _Lexicon, kinds: set[int], nouns_: list[tuple[str, tuple[int, ...]]]) -> bool:
    """Whether one of ``nouns_``, read in its most frequent senses, is a case of one of ``kinds``."""
    return any(
        kind != sense and kind in lexicon.case_of(sense)
        for _, senses in nouns_
        for sense in senses[:KIND_SENSES]
        for kind in kinds
    )


def _specific(lexicon: _Lexicon, senses: list[tuple[str, tuple[int, ...]]]) -> set[int]:
    """The most frequent sense of each noun, when it is specific enough to rule something out
    ("alcohol", "meat"; not "work" or "thing")."""
    return {ss[0] for _, ss in senses if lexicon.depth[ss[0]] >= MIN_RULED_OUT_DEPTH}


def case_of_excluded(ruled_out: str, excluding: str, other: str) -> bool:
    """Whether ``ruled_out`` (the words after "never", "no", "without" … in the memory
    ``excluding``) names a kind of which ``other`` names a case that ``excluding`` does not name
    ("never drinks alcohol" / "a glass of wine")."""
    lexicon = _lexicon()
    if lexicon is None:
        return False
    only_o = _only(excluding, other)[1]
    other_senses = {s for _, ss in nouns(other) for s in ss[:1]}
    named = [(w, ss) for w, ss in nouns(ruled_out) if ss[0] not in other_senses]
    return _names_a_case(lexicon, _specific(lexicon, named), only_o)


def ruled_out_by_definition(definer: str, other: str) -> bool:
    """Whether something only ``definer`` names, by its definition, rules out a kind of which
    ``other`` names a case only it names ("vegan" / "cheese", "vegetarian" / "steak")."""
    lexicon = _lexicon()
    if lexicon is None:
        return False
    only_d, only_o = _only(definer, other)
    ruled = {k for _, senses in only_d for k in lexicon.ruled_out(senses[0])}
    return bool(ruled) and _names_a_case(lexicon, ruled, only_o)


@lru_cache(maxsize=_TEXTS_CACHED)
def _adjective_clusters(text: str) -> frozenset[int]:
    lexicon = _lexicon()
    if lexicon is None:
        return frozenset()
    words = {w.strip("'-") for w in _WORD.findall(text.casefold())}
    return frozenset(c for w in words - _SKIP for c in lexicon.adjectives.get(w, ()))


def opposite_named(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` each have an adjective the other lacks, and WordNet calls the two
    opposites ("married" / "single", "early riser" / "goes to bed late")."""
    lexicon = _lexicon()
    if lexicon is None:
        return False
    ca, cb = _adjective_clusters(a), _adjective_clusters(b)
    only_a, only_b = ca - cb, cb - ca
    return any((min(x, y), max(x, y)) in lexicon.antonyms for x in only_a for y in only_b)
