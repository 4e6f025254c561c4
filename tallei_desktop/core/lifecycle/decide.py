"""What happens to a new memory once its embedding exists: a pure decision over one case.

The store reads the case (``core/store/lifecycle_rows.py``): the new memory and its nearest active
neighbours in its bucket, each a plain value. :func:`decide` rules on it, and the store applies the
decision in the same write transaction. Nothing here touches the store.

Rules (among *active* memories; similarity is the cosine of the two all-MiniLM-L6-v2 vectors):

* **Merge**: same type, and :func:`~.text.is_duplicate` (very alike, and nothing that makes them two
  claims: no other number, name or date, no negation on one side only). The new memory folds into
  the older one, which gains a confirmation from the new platform. Checked first, nearest first.
* **Incompatible**: same type, a preference, fact or decision, and the pair model
  (:mod:`.pairs`) gives at least its threshold: the two cannot both stand. Sentences both say are
  agreed, so only what each says beyond them is judged (:func:`judged_texts`).
  - the older one is **pinned**: a conflict for the person (a pin is the person's own choice);
  - the **same assistant** saved both: the older one is **superseded** (kept, hidden, undoable),
    only at the stricter ``supersede_at`` (``supersede_preference_at`` for a preference, each
    chosen on its own kind of pair), and for a fact or decision only when the new one says it
    replaces (a cue word, the old value named, another number, one value of a state swapped, one
    thing swapped for another of its kind, another value of one field or state in either wording):
    a wrong retirement hides a memory from every assistant and nobody is asked, so when unsure both
    stay. A new memory that would retire two or more at once, or that is at odds with two or more of
    the assistant's memories at the ask threshold ``conflict_at``, is one more of a list, and
    retires none; nor does one about another named person or thing ("Kofi works on …" after "Ines
    works on …"), nor a field or opening case of another name ("Evening tea: …" after "Morning
    tea: …", "On planes, …" after "On trains, …"), nor one line of dialogue another ("[2 August]
    Tim: Thanks." / "[2 January] Tim: Wow!": words said at two times);
  - **another assistant** (one that never saved or confirmed the older one): a **conflict**.
  - whoever saved them, **neither** when the new one says it adds to what is known ("Also holds an
    Irish passport"): both stand and nothing is asked.
* Without vectors (semantic search off) only preferences are compared, by words: two shared subject
  words make one subject, and a plain swap of one value (:func:`~.text.claims_differ`) from the same
  assistant supersedes; from another, it is a conflict.

Only an older memory (lower rowid) can be superseded by, or conflict with, the new one.
"""

from __future__ import annotations

from dataclasses import dataclass

from tallei_desktop.core.lifecycle.pairs import (
    PairModel,
    field_value_changed,
    fields_differ,
    is_dialogue,
    load_pair_model,
    names_old_value,
    numbers_changed,
    one_of_a_kind_swapped,
    one_value_swapped_in_a_state,
    says_it_adds,
    slot_value_changed,
    subjects_differ,
    update_cue,
)
from tallei_desktop.core.lifecycle.text import (
    claims_differ,
    content_sequence,
    is_duplicate,
    subject_words,
    unshared_sentences,
)
from tallei_desktop.core.models import Bucket, MemoryStatus, MemoryType

__all__ = [
    "Candidate",
    "Case",
    "Decision",
    "NewMemory",
    "decide",
    "judged_texts",
    "may_retire",
    "says_it_replaces",
]

#: Types whose memories can contradict each other; notes, events, lessons and failures add up.
JUDGED_TYPES = frozenset({MemoryType.PREFERENCE, MemoryType.FACT, MemoryType.DECISION})


@dataclass(frozen=True, slots=True)
class NewMemory:
    rowid: int
    id: str
    type: MemoryType
    bucket: Bucket
    content: str
    platform: str
    status: MemoryStatus
    #: Finished already (by another process): nothing is decided again.
    processed: bool


@dataclass(frozen=True, slots=True)
class Candidate:
    """An active neighbour of the new memory, as read inside the transaction."""

    rowid: int
    id: str
    type: MemoryType
    content: str
    platform: str
    #: Every platform that saved or confirmed it.
    platforms: frozenset[str]
    pinned: bool
    #: Cosine similarity to the new memory; None when compared by words alone.
    similarity: float | None


@dataclass(frozen=True, slots=True)
class Case:
    new: NewMemory
    #: Nearest first.
    candidates: tuple[Candidate, ...]
    #: The text embedded is still the memory's text (it was not edited meanwhile).
    vector_current: bool


@dataclass(frozen=True, slots=True)
class Decision:
    #: Keep the embedding computed for the new memory.
    store_vector: bool = False
    #: The new memory is a duplicate of this one.
    merge_into: Candidate | None = None
    superseded: tuple[Candidate, ...] = ()
    conflicts: tuple[Candidate, ...] = ()


def _same_subject_by_words(a: str, b: str) -> bool:
    return len(subject_words(a) & subject_words(b)) >= 2


def _incompatible(new: NewMemory, old: Candidate, model: PairModel) -> tuple[bool, bool]:
    """(worth asking the person about, sure enough to retire the older one)."""
    if old.type is not new.type or new.type not in JUDGED_TYPES:
        return False, False
    if says_it_adds(old.content, new.content):
        return False, False
    judged = judged_texts(old.content, new.content)
    if judged is None:
        return False, False
    old_text, new_text = judged
    if old.similarity is None:
        if new.type is not MemoryType.PREFERENCE or not _same_subject_by_words(old_text, new_text):
            return False, False
        return True, claims_differ(old_text, new_text)
    preference = new.type is MemoryType.PREFERENCE
    p = model.incompatible(old_text, new_text, old.similarity, preference=preference)
    # Whether one assistant may retire the other at all is read from the whole memories, as the
    # thresholds were chosen: two lines of dialogue that open alike ("[16 July] John: Thanks! …")
    # are still words said at two times.
    retire = p >= model.retire_at(preference=preference) and may_retire(
        old.content, new.content, preference=preference
    )
    return p >= model.conflict_at, retire


def judged_texts(old: str, new: str) -> tuple[str, str] | None:
    """What of two memories can disagree. Sentences both say stand, so only what each says beyond
    them is judged ("Prefers rooibos. Camila agreed." / "Prefers rooibos. Source: the all-hands."
    judge "Camila agreed." against "Source: the all-hands."); None when that is nothing, or shares
    no word: one adds to the other, or each adds a remark of its own."""
    rest = unshared_sentences(old, new)
    if rest is None:
        return old, new
    if not set(content_sequence(rest[0])) & set(content_sequence(rest[1])):
        return None
    return rest


def may_retire(old: str, new: str, *, preference: bool) -> bool:
    """Whether one assistant's ``new`` may retire its ``old`` at all, however sure the pair model is:
    it says it replaces (:func:`says_it_replaces`) and not that it adds, and is about the same named
    thing, the same field or opening case, and is not one line of dialogue after another. The
    training chooses the retire thresholds on the pairs this lets through, as the save path rules."""
    return (
        not says_it_adds(old, new)
        and says_it_replaces(old, new, preference=preference)
        and not subjects_differ(old, new)
        and not fields_differ(old, new)
        and not (is_dialogue(old) and is_dialogue(new))
    )


def says_it_replaces(old: str, new: str, *, preference: bool) -> bool:
    """A fact or decision retires another only when it says so: a cue word of its own ("now",
    "moved", "switched"), the old value named beside the new ("from Jira to Linear"), another number
    or date, one value swapped in a statement of what something is or will be ("the office is in
    Munich"), one value swapped for another thing of its kind ("lives in Valencia" / "lives in
    Seville"), or another value of one field or state, worded either way ("Bank: …", "The staging
    host is …" / "Staging host: …"). "Decided with Amara to move the billing
    service" and "… with Bruno …" swap one value too (names, of no kind WordNet knows), and both
    stand. A preference is the person's current taste: the newer one replaces."""
    return (
        preference
        or update_cue(old, new)
        or names_old_value(old, new)
        or numbers_changed(old, new)
        or one_value_swapped_in_a_state(old, new)
        or one_of_a_kind_swapped(old, new)
        or field_value_changed(old, new)
        or slot_value_changed(old, new)
    )


def decide(case: Case, model: PairModel | None = None) -> Decision:
    """The lifecycle's ruling on one case (see the module's rules)."""
    new = case.new
    keep_vector = case.vector_current and new.status in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED)
    if new.processed or new.status is not MemoryStatus.ACTIVE:
        return Decision(store_vector=keep_vector)
    model = model or load_pair_model()
    rulings: list[tuple[Candidate, bool, bool]] = []
    for old in case.candidates:
        if (
            old.similarity is not None
            and old.type is new.type
            and is_duplicate(new.content, old.content, old.similarity)
        ):
            return Decision(store_vector=keep_vector, merge_into=old)
        if old.rowid > new.rowid:
            continue
        ask, retire = _incompatible(new, old, model)
        if ask or retire:
            rulings.append((old, ask, retire))
    # An update replaces one memory. A new one that would retire several of one assistant's memories
    # at once, or that is at odds with several (enough to ask about, if another assistant had saved
    # them), is one more of a list ("Ines works on …", "Kofi works on …"): all of them stay.
    mine = [old for old, _, retire in rulings if retire and not old.pinned and old.platform == new.platform]
    at_odds = [old for old, ask, retire in rulings if (ask or retire) and old.platform == new.platform]
    superseded = tuple(mine) if len(mine) == 1 and len(at_odds) == 1 else ()
    conflicts = tuple(
        old
        for old, ask, _ in rulings
        if ask and (old.pinned or (old.platform != new.platform and new.platform not in old.platforms))
    )
    return Decision(store_vector=keep_vector, superseded=superseded, conflicts=conflicts)
