"""The pair model: how likely two memories of one type say incompatible things about one subject.

Contract:

- ``pair_features(old, new, similarity)`` turns two texts (``new`` saved after ``old``) and the cosine
  similarity of their embeddings into a fixed vector of ``FEATURES``. It is pure: words, negation,
  exclusion and update cues, the entity each is about, how the two differ (one value swapped,
  a number changed in one frame, another value of one slot whether written as a field or a
  sentence, the subject changed, one subject with two verbs, two runs of words swapped), and what
  kind of thing their words name (:mod:`.kinds`: two of one kind, a case of what the other rules
  out, opposites). No I/O beyond reading the shipped word kinds once, no randomness.
- ``PairModel.incompatible(old, new, similarity)`` is the probability (a few small networks over
  those features, averaged) that both cannot stand: an update when one assistant says it, a
  conflict across two.
  ``supersede_at`` (facts and decisions), ``supersede_preference_at`` and ``conflict_at`` are the
  thresholds the training chose, precision first: a wrong retirement hides a memory from every
  assistant, so supersede needs the surer one.
- ``load_pair_model()`` reads the weights shipped in the package (``data/pair_model.json``) once per
  process; ``bench/train_pairs.py`` writes that file from the labelled training pairs in
  tests/core/data/ (never from the held-out ones).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from tallei_desktop.core.lifecycle.kinds import (
    case_of_excluded,
    is_verb,
    kind_swapped,
    opposite_named,
    ruled_out_by_definition,
)
from tallei_desktop.core.lifecycle.text import (
    NEGATORS,
    SENTENCE_END,
    claims_differ,
    content_sequence,
    distinctive_tokens,
    polarity,
    replaces_value,
    subject_words,
)

__all__ = [
    "FEATURES",
    "FEATURE_VERSION",
    "PairModel",
    "fields_differ",
    "is_dialogue",
    "load_pair_model",
    "pair_features",
    "says_it_adds",
]

#: Bumped whenever :func:`pair_features` changes, so weights trained on other features are refused.
FEATURE_VERSION = 8
WEIGHTS_FILE = "pair_model.json"

FEATURES: tuple[str, ...] = (
    "bias",
    "similarity",
    "similarity_above_0.7",
    "similarity_below_0.45",
    "word_overlap",
    "words_only_new",
    "words_only_old",
    "changes",
    "one_value_swapped",
    "negation_differs",
    "exclusion_one_side",
    "identity_claim_one_side",
    "update_cue_new_only",
    "update_cue_old",
    "new_names_old_value",
    "numbers_differ",
    "names_differ",
    "first_word_differs",
    "preference",
    "preference_same_subject",
    "shared_subject_words",
    "swapped_when_alike",
    "exclusion_when_alike",
    "update_cue_when_alike",
    "value_replaced",
    "one_value_frame",
    "many_values_frame",
    "label_differs",
    "subject_differs",
    "dialogue",
    "field_value_changed",
    "kind_swapped",
    "case_of_excluded",
    "ruled_out_by_definition",
    "opposite_named",
    "slot_value_changed",
    "number_swapped_in_one_frame",
    "another_predicate",
    "two_values_swapped",
)

#: Each reading of a text is kept for the next pair it is part of (see text.py).
_TEXTS_CACHED = 4096
_WORD = re.compile(r"[a-z0-9][a-z0-9+#.'-]*")
#: Words that close a claim off ("only", "never", "no …", "at all"): the other side may be a case of
#: what it rules out, though it shares none of its words.
_EXCLUSION = frozenset(
    """
    only never no not none nothing nobody without any anything ever entirely strictly fully solely
    exclusively completely totally don't doesn't didn't isn't aren't hasn't haven't won't can't cannot
    """.split()
)
_EXCLUSION_PHRASES = ("at all", "no longer", "any more", "anymore")
#: Words with which assistants write down that something changed.
_UPDATE_WORDS = frozenset(
    """
    now actually switched switch switching moved move moving new newly instead changed change changing
    updated upgraded upgrade downgraded turned became become dropped replaced nowadays lately recently
    anymore since left quit started promoted relocated transferred migrated renamed rescheduled
    postponed delayed raised bumped sold traded cancelled canceled
    """.split()
)
_UPDATE_PHRASES = (
    "from now on",
    "no longer",
    "these days",
    "any more",
    "back to",
    "rather than",
    "not anymore",
)
#: Frames that hold one value at a time ("the office is in …", "prefers …", "is called …") and frames
#: that hold many ("likes …", "speaks …", "has visited …"): a second value replaces in the first kind
#: and adds in the second.
_ONE_VALUE = frozenset(
    """
    is are was were will be 's prefers prefer preferred favourite favorite wants want chose chosen decided
    default go-to main primary called named name set going
    """.split()
)
_MANY_VALUES = frozenset(
    """
    likes like enjoys enjoy loves love speaks speak visited has have had plays play allergic also too
    well both owns own collects reads watches knows fluent member
    """.split()
)
#: Words with which a memory rules something out for the person: :data:`_EXCLUSION` and these.
_RULING_OUT = (
    frozenset(
        "avoid avoids avoiding allergic allergy intolerant intolerance free hates hate dislikes dislike quit".split()
    )
    | _EXCLUSION
)
#: A state claimed about the person ("is vegan", "I'm single", "am an only child").
_IDENTITY = re.compile(r"^(?:(?:the )?user |she |he |they |i )?(?:is|am|are|i'm|'m)\b", re.I)


@lru_cache(maxsize=_TEXTS_CACHED)
def _words(text: str) -> tuple[str, ...]:
    return tuple(w.strip(".'-") for w in _WORD.findall(text.casefold()))


def _has_any(text: str, words: frozenset[str], phrases: tuple[str, ...]) -> bool:
    low = " ".join(_words(text))
    return any(w in words for w in low.split()) or any(p in low for p in phrases)


@lru_cache(maxsize=_TEXTS_CACHED)
def _ruled_out_part(text: str) -> str | None:
    """The words after the first that rules something out ("never drinks alcohol" → "drinks
    alcohol", "allergic to nuts" → "to nuts"), or None when nothing is ruled out."""
    words = _words(text)
    for i, word in enumerate(words):
        if word in _RULING_OUT or word.endswith("n't"):
            return " ".join(words[i + 1 :])
    folded = " ".join(words)
    for phrase in _EXCLUSION_PHRASES:
        at = folded.find(phrase)
        if at >= 0:
            return folded[at + len(phrase) :]
    return None


def update_cue(old: str, new: str) -> bool:
    """Whether ``new`` says it changes something ("now", "moved", "switched", "no longer") in words
    ``old`` does not use: a cue both share ("the new cluster") says nothing about the pair."""
    words_old = set(_words(old))
    low_old, low_new = " ".join(_words(old)), " ".join(_words(new))
    return any(w in _UPDATE_WORDS and w not in words_old for w in low_new.split()) or any(
        p in low_new and p not in low_old for p in _UPDATE_PHRASES
    )


def names_old_value(old: str, new: str) -> bool:
    """Whether ``new`` names a value of ``old`` (a name or number) beside one of its own: "switched
    from Jira to Linear" after "uses Jira"."""
    value_old = _names(old) | _numbers(old)
    value_new = _names(new) | _numbers(new)
    return bool(value_old & value_new) and bool(value_new - value_old)


def numbers_changed(old: str, new: str) -> bool:
    """Both hold numbers (digits or words, dates), and not the same ones."""
    a, b = _numbers(old), _numbers(new)
    return bool(a) and bool(b) and a != b


#: Words that say what something is or will be.
_COPULA = frozenset("is are was were am 's be".split())


def one_value_swapped_in_a_state(old: str, new: str) -> bool:
    """One value swapped in a statement of what something is ("the office is in Berlin" / "… in
    Munich"): such a frame holds one value at a time, unless it is one that holds many ("is allergic
    to", "is fluent in" … the words of ``_MANY_VALUES``)."""
    shared = set(_words(old)) & set(_words(new))
    # The same length: "the staging URL for the docs is …" narrows the subject; it replaces nothing.
    same_length = len(content_sequence(old)) == len(content_sequence(new))
    return bool(shared & _COPULA) and not shared & _MANY_VALUES and same_length and claims_differ(old, new)


#: How alike two swapped values must be (:func:`.kinds.kind_swapped`) to count as two of one kind.
SAME_KIND = 0.8


def one_of_a_kind_swapped(old: str, new: str) -> bool:
    """One value swapped for another thing of the same kind ("lives in Valencia" / "lives in
    Seville", "commutes by bus" / "commutes by train"), in a frame that does not hold many values
    ("speaks Dutch" / "speaks Korean": ``_MANY_VALUES``). A name swapped ("… with Amara" / "… with
    Bruno") is no kind WordNet knows, and stays two memories."""
    shared = set(_words(old)) & set(_words(new))
    same_length = len(content_sequence(old)) == len(content_sequence(new))
    return (
        same_length
        and not shared & _MANY_VALUES
        and claims_differ(old, new)
        and kind_swapped(old, new) >= SAME_KIND
    )


#: Words in what a value is given for that say the value is new or chosen ("New address: …",
#: "Wedding venue chosen: …", "Current employer is …"), and pronouns ("She is …", "I was …"): not
#: what the slot is.
_SLOT_NOISE = _UPDATE_WORDS | frozenset(
    "current currently chosen latest final confirmed i i'm we he she they it user".split()
)
#: A statement of what something is: what (a few words), the verb, the value.
_STATE = re.compile(r"^\s*([^:\n]{1,60}?)\s+(?:is|are|was|were|will be)\s+(.+)$", re.I)
_SLOT_WORDS = 5


def _slot_name(words: str) -> tuple[str, ...]:
    """The words that name what a value is given for, without those that only say it is new or
    chosen, pronouns and determiners ("New home address" → "home address")."""
    return tuple(w for w in _words(words) if w and w not in _SLOT_NOISE and w not in _DETERMINERS)


def _value_shape(value: str) -> str:
    """What kind of value a text gives after its slot, read from its first word past an article: a
    name, number or identifier ("Dr Amadi", "34", "pg-staging.internal"), else the word itself ("in
    Leeds", "on the payments team", "a nurse", "written in Go"). "Ruth is 34" and "Ruth is a nurse",
    "Project Atlas is written in Go" and "… is due in March" say two things about one subject, not
    two values of one."""
    words: list[str] = [t for t in re.findall(r"[\w'.+#-]+", value) if t.casefold() not in ("a", "an", "the")]
    if not words:
        return ""
    first = words[0].strip(".'-")
    if first[:1].isupper() or any(ch.isdigit() or ch in "-._/" for ch in first):
        return "name or number"
    return first.casefold()


@lru_cache(maxsize=_TEXTS_CACHED)
def _slot(text: str) -> tuple[tuple[str, ...], str, str] | None:
    """What one value is given for, the value, and the value's shape (:func:`_value_shape`), in a
    field or a statement of what something is: "Mortgage rate: 5.3% fixed" and "The mortgage rate
    is 4.1% fixed" both give the mortgage rate a value. None for anything else, for a line of
    dialogue, and for a field of many values."""
    found = _LABEL.match(text)
    if found is not None:
        if is_dialogue(text):
            return None
        label, value = found.group(1), text[found.end() :]
    else:
        state = _STATE.match(text)
        if state is None:
            return None
        label, value = state.group(1), state.group(2)
    words = _slot_name(label)
    shape = _value_shape(value)
    value = " ".join(_words(value))
    if not words or len(words) > _SLOT_WORDS or not value:
        return None
    if len(words) == 1 and words[0].endswith("s") and not words[0].endswith(("ss", "us")):
        # "Languages: Dutch", "Kids are …": a slot of many values; one more adds to it ("Office
        # hours: …" is one).
        return None
    return tuple(words), value, shape


def slot_value_changed(old: str, new: str) -> bool:
    """Both give one slot a value of one kind, in a field or a statement, and not the same one:
    "Staging database host is db-stg-01" / "Staging database host: pg-staging-east.internal",
    "Address: 14 Alder Lane" / "New address: Flat 3, 92 Wexford Road". A value that only adds to
    the other ("Berlin" / "Berlin, Mitte") changes nothing, and values of two kinds are two things
    said about one subject ("My dentist is Dr Amadi" / "My dentist is in Headingley")."""
    a, b = _slot(old), _slot(new)
    if a is None or b is None or a[0] != b[0] or a[2] != b[2]:
        return False
    return a[1] not in b[1] and b[1] not in a[1]


def number_swapped_in_one_frame(old: str, new: str) -> bool:
    """Another number, and no other content word beside it that the other lacks on both sides: "Cat
    Biscuit weighs 4.2 kg" / "Biscuit weighs 5.1 kg" (the shorter says less, nothing else)."""
    if not numbers_changed(old, new):
        return False
    # A name with a number in it ("db-replica-2", "web-01") is part of the frame: whom it is about.
    words_old = {w for w in content_sequence(old) if not _NUMBER_ONLY.fullmatch(w)}
    words_new = {w for w in content_sequence(new) if not _NUMBER_ONLY.fullmatch(w)}
    return bool(words_old) and bool(words_new) and (words_old <= words_new or words_new <= words_old)


#: Words that say what something is, has or will be, on their own or before another verb.
_AUXILIARIES = _COPULA | frozenset("has have had will am".split())
#: After an auxiliary, words that make it one thing said in another tense ("was moved to", "has
#: been pushed back", "is now"): an update's wording, not a second thing.
_TENSE = frozenset("been being now".split())


def _predicate_like(word: str) -> bool:
    """An auxiliary, or a verb in the third person ("lives", "runs", "teaches")."""
    return word in _AUXILIARIES or (
        len(word) > 3 and word.endswith("s") and not word.endswith("ss") and is_verb(word)
    )


def another_predicate(old: str, new: str) -> bool:
    """Both open with one subject and then say two different things of it, with two verbs: "Sister
    Hannah lives in Melbourne" / "Sister Hannah is a paediatric nurse", "The monorepo uses pnpm" /
    "The monorepo runs CI on …". Not when the shared words hold a verb themselves (they are a frame:
    "Wants the summary on Mondays" / "… on Fridays"), nor a subject of determiners alone ("User …",
    "The …"); not when a verb says the thing changed ("moved", "turned") or is negated, nor for one
    thing in two tenses ("is planned for June" / "has been pushed back", "was upgraded to")."""
    words_old, words_new = _words(old), _words(new)
    shared = 0
    while shared < min(len(words_old), len(words_new)) and words_old[shared] == words_new[shared]:
        shared += 1
    if shared == 0 or shared >= min(len(words_old), len(words_new)):
        return False
    subject = words_old[:shared]
    if all(w in _DETERMINERS or w in _SLOT_NOISE for w in subject) or any(map(_predicate_like, subject)):
        return False
    verbs = (words_old[shared], words_new[shared])
    if any(v in _UPDATE_WORDS or v in NEGATORS or v.endswith("n't") for v in verbs):
        return False
    if all(v in _AUXILIARIES for v in verbs):
        return False
    for words in (words_old, words_new):
        after = words[shared + 1] if shared + 1 < len(words) else ""
        if words[shared] in _AUXILIARIES and (
            after in _UPDATE_WORDS or after in _TENSE or after.endswith("ed")
        ):
            return False
    return all(map(_predicate_like, verbs))


def two_values_swapped(old: str, new: str) -> bool:
    """Two runs of words swapped, with the same words between them: the value and what it is for
    both differ, so the two are about two things ("Prefers Black for Python formatting" / "Prefers
    gofmt defaults for Go formatting", "Frontend repo uses Vite" / "Docs repo uses Docusaurus").
    Read on every word, "for" and "uses" too, which is what keeps the two runs apart."""
    edits = difflib.SequenceMatcher(a=_words(old), b=_words(new), autojunk=False).get_opcodes()
    return sum(op[0] == "replace" for op in edits) >= 2


def fields_differ(old: str, new: str) -> bool:
    """Both are fields, or both open with the case they hold for, and neither field's name or case
    holds the other's (words saying the value is new or chosen aside): two slots, such as "Morning
    tea: …" / "Evening tea: …", "Dentist: …" / "Optician: …", or "For work emails, prefers …" /
    "For birthday messages, prefers …" and "On trains, …" / "On planes, …". "Theme: …" / "Editor
    theme: …", "Address: …" / "New address: …" and "On weekdays, …" / "On weekdays at work, …" may
    be one."""
    if is_dialogue(old) or is_dialogue(new):
        return False
    slot_old, slot_new = _label(old), _label(new)
    if slot_old is None or slot_new is None:
        slot_old, slot_new = _case(old), _case(new)
    if slot_old is None or slot_new is None:
        return False
    words_old, words_new = set(_slot_name(slot_old)), set(_slot_name(slot_new))
    return bool(words_old) and bool(words_new) and not (words_old <= words_new or words_new <= words_old)


#: A memory that opens with the case it holds for: "For work emails, …", "On trains, …", "When
#: travelling, …", "From the burrito shop, …", "With clients, …" (a preposition, a few words, a comma).
_CASE = re.compile(
    r"^\s*(?:for|on|in|when|whenever|if|at|during|while|before|after|from|with|outside|within)"
    r"\s+([^,:;.]{2,40}),\s",
    re.IGNORECASE,
)


def _case(text: str) -> str | None:
    found = _CASE.match(text)
    return found.group(1).casefold().strip() if found else None


def field_value_changed(old: str, new: str) -> bool:
    """Both give one field a short value, and not the same one: "Relationship status: engaged" /
    "Relationship status: married", "Bank: …" / "Bank: …". A line of dialogue ("Maria: Thanks!",
    "Jon: Me too. See you soon.") is no field: it exclaims, asks, or runs on past a sentence."""
    a, b = _field(old), _field(new)
    return a is not None and b is not None and a[0] == b[0] and a[1] != b[1]


#: A field's value: a few words, one sentence at most.
_FIELD_VALUE_WORDS = 8


@lru_cache(maxsize=_TEXTS_CACHED)
def _field(text: str) -> tuple[str, str] | None:
    found = _LABEL.match(text)
    if found is None or is_dialogue(text):
        return None
    value = text[found.end() :].strip().removesuffix(".")
    if not value or len(value.split()) > _FIELD_VALUE_WORDS:
        return None
    label = found.group(1).casefold().strip()
    if label.endswith("s") and not label.endswith(("ss", "us")):
        # "Extensions: Ruff", "Languages: Dutch": a field of many values; one more adds to it.
        return None
    return label, value.casefold()


#: Words by which a memory says it adds to what is known: "Also holds an Irish passport."
_ADDS = re.compile(r"\b(?:also|as well)\b", re.IGNORECASE)


def says_it_adds(old: str, new: str) -> bool:
    """The newer memory says it adds to what is known ("Also really enjoys Ethiopian food", "Has
    also started learning Italian") and the older one does not: both stand. Across every training
    set, no update and no conflict is worded so, against 58 compatible pairs."""
    return _ADDS.search(new) is not None and _ADDS.search(old) is None


@lru_cache(maxsize=_TEXTS_CACHED)
def is_dialogue(text: str) -> bool:
    """A line someone said ("Tim: Thanks!", "[8 May] Ana: See you soon.", "John: The Wolves are my
    team for sure."): a record of words spoken at one time, not a state that holds one value, so it
    neither replaces nor is replaced by another line. It exclaims, asks or runs past one sentence;
    or one name speaks, with a date before it or in a whole sentence (a capital, three words or
    more with one of ``_SPOKEN``, a full stop). A field ("Bank: Lyle Street Credit Union.", "Job
    title: Design Lead", "Status: on leave") does none of these."""
    found = _LABEL.match(text)
    if found is None:
        return False
    value = text[found.end() :].strip()
    if re.search(r"[.!?;]\s|[!?]", value):
        return True
    speaker = found.group(1).strip()
    if not (speaker[:1].isupper() and " " not in speaker):
        return False
    if text.lstrip().startswith("["):
        # "[2 August 2023] John: …": a dated line of a transcript.
        return True
    words = set(_words(value))
    return value[:1].isupper() and value.endswith(".") and len(words) >= 3 and bool(words & _SPOKEN)


#: Words a spoken sentence has and a field's value ("Lyle Street Credit Union") does not.
_SPOKEN = frozenset("i i'm i've i'd my me we our you your it it's is are was were that's this so".split())


def _identity_claim(text: str) -> bool:
    """A short statement of what someone is: "Is a vegan.", "I'm left-handed"."""
    return len(_words(text)) <= 6 and bool(_IDENTITY.match(text.strip()))


#: Words memories open with in the short third-person style ("Prefers …", "Works as …") or as an
#: instruction ("Use Vitest …", "Call her Kat"): a capitalised first word among these is no name.
#: Openers that are no verb: "The Berlin office …", "Our Kofi …" keep a name in second place.
_DETERMINERS = frozenset(
    "user users their his her my our the a an this that these those every each some no not".split()
)
_OPENERS = _DETERMINERS | frozenset(
    """
    prefers likes loves enjoys wants works lives has had is was uses used drinks eats speaks hates needs
    plays runs owns drives reads writes watches keeps takes goes makes gets knows thinks lost visited
    grew spent studied teaches manages leads avoids never always only often usually rarely still also
    now actually currently recently lately just since from then today
    use prefer like love enjoy want work live have drink eat speak need play run own drive read write
    watch keep take go make get know avoid call put add show give format reply answer suggest explain
    include default skip stop start try
    """.split()
)


#: A label a memory starts with ("Caroline: …", "[8 May] Ana: …", "Bank: …").
_LABEL = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?([^:\n]{1,40}):\s")
#: "I" is capitalised and names nobody else.
_FIRST_PERSON = frozenset("i i'm i've i'd i'll".split())


@lru_cache(maxsize=_TEXTS_CACHED)
def _names(text: str) -> frozenset[str]:
    """Capitalised words and identifiers ("Ines", "web-01", "v2"); a sentence's first word too
    unless it opens the sentence the usual way ("Works as …", "The …")."""
    out = set()
    for sentence in SENTENCE_END.split(text):
        tokens = re.findall(r"\w[\w'.-]*", sentence)
        for i, token in enumerate(tokens):
            low = token.casefold().strip(".'-")
            if low in _FIRST_PERSON:
                continue
            numbered = any(ch.isdigit() for ch in token)
            if numbered or (token[:1].isupper() and (i > 0 or _opens_with_a_name(tokens))):
                out.add(low)
    return frozenset(out)


def _opens_with_a_name(tokens: list[str]) -> bool:
    """Whether a sentence's capitalised first word is a name: not a usual opener ("Works as …",
    "The …", "Moved …"), and a verb follows it ("Kofi works …", "Ines is …"). "Thanks, John",
    "Got a raise" and "Relationship status: …" open with a capital and name nobody."""
    first = tokens[0].casefold().strip(".'-")
    if first in _OPENERS or first.endswith(("ed", "ing")) or len(tokens) < 2:
        return False
    return not tokens[1][:1].isupper() and _verb_like(tokens[1].casefold())


#: A number alone ("0478", "3.12", "12/10"): a value, never whom a memory is about.
_NUMBER_ONLY = re.compile(r"[\d.,:/+-]+")
#: Nouns a number after which names one of many ("room 204", "item 3", "number 24").
_NUMBERED = frozenset(
    "number no no. item room plot project server host node step chapter part ticket issue flat unit "
    "apartment floor desk table seat gate lane row box version release sprint week day".split()
)


@lru_cache(maxsize=_TEXTS_CACHED)
def _identifier(text: str) -> str | None:
    """A numbered name near the start ("Project 4 …", "Room 204 has …", "Note number 24 about …"),
    or a numbered label ("Fact 3: …", "Ticket 812: …")."""
    label = _LABEL.match(text)
    if label:
        # "Age: 34", "Phone number: 0612…": a label and its value; the label's own number names it.
        words = label.group(1).split()
        numbered = len(words) == 2 and any(ch.isdigit() for ch in words[1])
        return " ".join(words).casefold() if numbered else None
    tokens = re.findall(r"\w[\w'.-]*", text)[:4]
    for i in range(1, len(tokens)):
        token, before = tokens[i], tokens[i - 1]
        low = before.casefold()
        if not any(ch.isdigit() for ch in token):
            continue
        named = before[:1].isupper() and i - 1 <= 1 and low not in _OPENERS and not low.endswith("s")
        if named or low in _NUMBERED:
            return f"{low} {token.casefold()}"
    return None


@lru_cache(maxsize=_TEXTS_CACHED)
def _subject(text: str) -> str | None:
    """The name or identifier a memory is about, when it opens with one ("Kofi works …", "web-02 is …",
    "Room 204 has …": the first or second word) or names an owner early ("Prefers Goran's summaries")."""
    numbered = _identifier(text)
    if numbered is not None:
        return numbered
    if _LABEL.match(text):
        # "Employer: Bosch": what follows a label is its value.
        return None
    tokens: list[str] = [t.casefold().strip(".-") for t in re.findall(r"\w[\w'.-]*", text)[:3]]
    # The first word is a name only when a verb follows it (_names decides that).
    names = _names(text)
    # After an opening verb ("Prefers Kotlin …", "Likes 4-space …") the next word is what the
    # sentence is about, its value, not whom: only an owner ("Prefers Goran's summaries") is.
    after_verb = bool(tokens) and tokens[0] in _OPENERS and tokens[0] not in _DETERMINERS
    for i, token in enumerate(tokens):
        owner = token.endswith("'s")
        if _NUMBER_ONLY.fullmatch(token):
            # "phone 0478 221 903": a number is a value, never whom a memory is about.
            continue
        if token in names and (owner or i == 0 or (i == 1 and not after_verb)):
            return token.removesuffix("'s")
    return None


_VERB_NEXT = frozenset("is was are were has had have will can could would should and 's".split())


def _verb_like(token: str) -> bool:
    """A word that reads as the verb after a name: "is", "has", "will", a third-person "works"."""
    return token in _VERB_NEXT or (len(token) > 3 and token.endswith("s") and not token.endswith("ss"))


@lru_cache(maxsize=_TEXTS_CACHED)
def _label(text: str) -> str | None:
    """The label a memory starts with ("Caroline: …", "[8 May] Ana: …"): whose words, or what about."""
    found = _LABEL.match(text)
    return found.group(1).casefold().strip() if found else None


@lru_cache(maxsize=_TEXTS_CACHED)
def _numbers(text: str) -> frozenset[str]:
    return frozenset(t for t in distinctive_tokens(text) if any(ch.isdigit() for ch in t))


def subjects_differ(old: str, new: str) -> bool:
    """Each is about a name or identifier the other does not mention: two colleagues, two hosts,
    two people's summaries."""
    a, b = _subject(old), _subject(new)
    if a is None or b is None:
        return False
    if a == b:
        return False
    names_old = {n.removesuffix("'s") for n in _names(old)}
    names_new = {n.removesuffix("'s") for n in _names(new)}
    # A numbered name differs by its number alone ("project 3" / "project 4").
    return (" " in a and " " in b) or (a not in names_new and b not in names_old)


def pair_features(old: str, new: str, similarity: float, *, preference: bool) -> list[float]:
    """The features of ``FEATURES`` for ``new`` saved after ``old`` (cosine ``similarity``), two
    preferences or two facts or decisions."""
    seq_old, seq_new = content_sequence(old), content_sequence(new)
    set_old, set_new = set(seq_old), set(seq_new)
    union = set_old | set_new
    overlap = len(set_old & set_new) / len(union) if union else 0.0
    changes = sum(
        op[0] != "equal" for op in difflib.SequenceMatcher(a=seq_old, b=seq_new, autojunk=False).get_opcodes()
    )
    excl_old = _has_any(old, _EXCLUSION, _EXCLUSION_PHRASES)
    excl_new = _has_any(new, _EXCLUSION, _EXCLUSION_PHRASES)
    names_old, names_new = _names(old), _names(new)
    swapped = claims_differ(old, new)
    shared_subject = len(subject_words(old) & subject_words(new))
    alike = max(0.0, similarity - 0.4)
    shared_raw = set(_words(old)) & set(_words(new))
    cue_new = update_cue(old, new)
    ruled_out_old, ruled_out_new = _ruled_out_part(old), _ruled_out_part(new)
    excluded_case = (
        ruled_out_old is not None and ruled_out_new is None and case_of_excluded(ruled_out_old, old, new)
    ) or (ruled_out_new is not None and ruled_out_old is None and case_of_excluded(ruled_out_new, new, old))
    by_definition = (ruled_out_new is None and ruled_out_by_definition(old, new)) or (
        ruled_out_old is None and ruled_out_by_definition(new, old)
    )
    return [
        1.0,
        similarity,
        max(0.0, similarity - 0.7),
        max(0.0, 0.45 - similarity),
        overlap,
        min(len(set_new - set_old), 6) / 6,
        min(len(set_old - set_new), 6) / 6,
        min(changes, 3) / 3,
        float(swapped),
        float(polarity(old)[0] != polarity(new)[0]),
        float(excl_old != excl_new),
        float(_identity_claim(old) != _identity_claim(new)),
        float(cue_new),
        float(_has_any(old, _UPDATE_WORDS, _UPDATE_PHRASES)),
        float(names_old_value(old, new)),
        float(numbers_changed(old, new)),
        float(bool(names_old) and bool(names_new) and not names_old & names_new),
        float(bool(seq_old) and bool(seq_new) and seq_old[0] != seq_new[0]),
        float(preference),
        float(preference and (similarity >= 0.7 or (similarity >= 0.6 and shared_subject > 0))),
        min(shared_subject, 3) / 3,
        alike * swapped,
        alike * (excl_old != excl_new),
        alike * cue_new,
        float(replaces_value(new, old)),
        float(bool(shared_raw & _ONE_VALUE)),
        float(bool(shared_raw & _MANY_VALUES)),
        float(_label(old) is not None and _label(new) is not None and _label(old) != _label(new)),
        float(subjects_differ(old, new)),
        float(is_dialogue(old) and is_dialogue(new)),
        float(field_value_changed(old, new)),
        kind_swapped(old, new),
        float(excluded_case),
        float(by_definition),
        float(opposite_named(old, new)),
        float(slot_value_changed(old, new)),
        float(number_swapped_in_one_frame(old, new)),
        float(another_predicate(old, new)),
        float(two_values_swapped(old, new)),
    ]


@dataclass(frozen=True, slots=True)
class Network:
    """One small network: a hidden layer of rectified units over :data:`FEATURES`, then a logistic
    output. ``hidden`` is features × units."""

    hidden: npt.NDArray[np.float64]
    hidden_bias: npt.NDArray[np.float64]
    output: npt.NDArray[np.float64]
    output_bias: float

    def __post_init__(self) -> None:
        units = self.hidden_bias.shape[0]
        if self.hidden.shape != (len(FEATURES), units) or self.output.shape != (units,):
            raise ValueError(
                f"a pair network needs {len(FEATURES)} × units hidden weights and one output weight per unit"
            )

    def logit(self, x: npt.NDArray[np.float64]) -> float:
        return float(np.maximum(x @ self.hidden + self.hidden_bias, 0.0) @ self.output + self.output_bias)

    def as_json(self) -> dict[str, Any]:
        return {
            "hidden": np.round(self.hidden, 6).tolist(),
            "hidden_bias": np.round(self.hidden_bias, 6).tolist(),
            "output": np.round(self.output, 6).tolist(),
            "output_bias": round(self.output_bias, 6),
        }

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Network:
        return cls(
            np.asarray(document["hidden"], dtype=np.float64),
            np.asarray(document["hidden_bias"], dtype=np.float64),
            np.asarray(document["output"], dtype=np.float64),
            float(document["output_bias"]),
        )


@dataclass(frozen=True, slots=True)
class PairModel:
    """Several small networks over :data:`FEATURES` (trained from different starting points), whose
    probabilities are averaged, with the thresholds the training chose. Why networks and not one
    weighted sum: a signal means different things beside different others (one value swapped is an
    update in "lives in …" and one more of a list in "speaks …"), and a weighted sum has one sign
    for it."""

    networks: tuple[Network, ...]
    #: Same assistant: retire the older fact or decision at or above this probability.
    supersede_at: float
    #: Across assistants (or against a pinned memory): ask the person at or above this probability.
    conflict_at: float
    #: Same assistant: retire the older preference at or above this probability (None: as a fact).
    supersede_preference_at: float | None = None

    def __post_init__(self) -> None:
        if not self.networks:
            raise ValueError("the pair model needs at least one network")

    def retire_at(self, *, preference: bool) -> float:
        """The probability at or above which one assistant's newer memory retires the older."""
        if preference and self.supersede_preference_at is not None:
            return self.supersede_preference_at
        return self.supersede_at

    def probability(self, x: npt.NDArray[np.float64]) -> float:
        """The averaged probability for one row of features."""
        total = 0.0
        for network in self.networks:
            z = max(-30.0, min(30.0, network.logit(x)))
            total += 1.0 / (1.0 + math.exp(-z))
        return total / len(self.networks)

    def incompatible(self, old: str, new: str, similarity: float, *, preference: bool) -> float:
        """The probability that ``old`` and ``new`` cannot both stand."""
        x = np.asarray(pair_features(old, new, similarity, preference=preference), dtype=np.float64)
        return self.probability(x)

    def to_json(self, **extra: Any) -> str:
        document = {
            "feature_version": FEATURE_VERSION,
            "features": list(FEATURES),
            "supersede_at": round(self.supersede_at, 4),
            "supersede_preference_at": round(self.retire_at(preference=True), 4),
            "conflict_at": round(self.conflict_at, 4),
            **extra,
            "networks": [network.as_json() for network in self.networks],
        }
        return json.dumps(document, indent=None, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(cls, text: str) -> PairModel:
        document = json.loads(text)
        if (
            document.get("feature_version") != FEATURE_VERSION
            or tuple(document.get("features", ())) != FEATURES
        ):
            raise ValueError(
                "the pair model's weights were trained on other features; run bench/train_pairs.py"
            )
        return cls(
            tuple(Network.from_json(n) for n in document["networks"]),
            float(document["supersede_at"]),
            float(document["conflict_at"]),
            float(document.get("supersede_preference_at", document["supersede_at"])),
        )


@cache
def load_pair_model() -> PairModel:
    """The weights shipped in the package, read once per process."""
    text = resources.files("tallei_desktop.core").joinpath("data", WEIGHTS_FILE).read_text(encoding="utf-8")
    return PairModel.from_json(text)
