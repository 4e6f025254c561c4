"""The held-out sets for the save path's lifecycle decisions: their shape, not the level reached on them.

``heldout_pairs.tsv`` holds pairs labelled ``update`` (one platform saves a newer value: the first
memory should be superseded), ``conflict`` (two platforms disagree: a conflict should be flagged)
and ``compatible`` (same shape, different things: both stay, nothing flagged); ``heldout_lists.tsv``
holds lists of same-shaped facts that must all stay. Both were written apart from the training and
development sets (conflict_pairs.tsv, the classify_*.tsv sets) and are never used to tune a rule.
Earlier held-out sets (``pair_train_seen*.tsv``) were looked at once they had judged the pair model,
so they train it now and judge nothing: each set judges once, then joins the training.
``bench/eval_heldout.py`` runs them through the real save path and prints the figures;
``test_heldout_figures.py`` holds the level reached. The pair model's own training pairs
(``pair_train*.tsv``) share this format and no sentence with these.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from tallei_desktop.core.models import MemoryType

DATA = Path(__file__).parent / "data"
HELDOUT_PAIRS = DATA / "heldout_pairs.tsv"
HELDOUT_LISTS = DATA / "heldout_lists.tsv"
PAIRS_HEADER = ("label", "kind", "type_a", "platform_a", "first", "type_b", "platform_b", "second")
LISTS_HEADER = ("list", "type", "platform", "memory")
#: The kinds each label allows.
KINDS = {
    "update": ("cue", "plain"),
    "conflict": ("negation", "no-shared-words", "contradiction"),
    "compatible": ("same-shape",),
}
#: The training pairs (pair_train.tsv) also hold compatible pairs that add to each other or are about
#: another subject.
TRAINING_KINDS = {**KINDS, "compatible": ("same-shape", "additive", "unrelated")}
PAIR_TRAIN = DATA / "pair_train.tsv"
PAIR_TRAIN_LISTS = DATA / "pair_train_lists.tsv"
#: Pairs about different things, drawn at random and read once: background pairs for the training.
UNRELATED_PAIR_FILES = (DATA / "pair_train_unrelated.tsv", DATA / "pair_train_unrelated_ruling_out.tsv")
#: Every training file of pairs (all in the format above, with ``TRAINING_KINDS``) and of lists.
PAIR_TRAIN_FILES = (
    PAIR_TRAIN,
    DATA / "pair_train_more.tsv",
    DATA / "pair_train_seen.tsv",
    DATA / "pair_train_seen2.tsv",
    DATA / "pair_train_seen3.tsv",
    DATA / "pair_train_seen4.tsv",
    DATA / "pair_train_seen5.tsv",
    DATA / "pair_train_seen6.tsv",
    DATA / "pair_train_seen7.tsv",
    DATA / "pair_train_seen8.tsv",
    DATA / "pair_train_seen9.tsv",
    DATA / "pair_train_seen10.tsv",
    DATA / "pair_train_seen11.tsv",
    DATA / "pair_train_seen12.tsv",
    DATA / "pair_train_seen13.tsv",
    DATA / "pair_train_seen14.tsv",
    DATA / "pair_train_seen15.tsv",
    DATA / "pair_train_seen16.tsv",
    DATA / "pair_train_seen17.tsv",
    DATA / "pair_train_seen18.tsv",
    DATA / "pair_train_updates.tsv",
    DATA / "pair_train_conflicts.tsv",
    DATA / "pair_train_knowledge.tsv",
    DATA / "pair_train_attributes.tsv",
    *UNRELATED_PAIR_FILES,
)
PAIR_TRAIN_LIST_FILES = (
    PAIR_TRAIN_LISTS,
    DATA / "pair_train_seen_lists.tsv",
    DATA / "pair_train_seen2_lists.tsv",
    DATA / "pair_train_seen3_lists.tsv",
    DATA / "pair_train_seen4_lists.tsv",
    DATA / "pair_train_seen5_lists.tsv",
    DATA / "pair_train_seen6_lists.tsv",
    DATA / "pair_train_seen7_lists.tsv",
    DATA / "pair_train_seen8_lists.tsv",
    DATA / "pair_train_seen9_lists.tsv",
    DATA / "pair_train_seen10_lists.tsv",
    DATA / "pair_train_seen11_lists.tsv",
    DATA / "pair_train_seen12_lists.tsv",
    DATA / "pair_train_seen13_lists.tsv",
    DATA / "pair_train_seen14_lists.tsv",
    DATA / "pair_train_seen15_lists.tsv",
    DATA / "pair_train_seen16_lists.tsv",
    DATA / "pair_train_seen17_lists.tsv",
    DATA / "pair_train_seen18_lists.tsv",
    DATA / "pair_train_conflicts_lists.tsv",
)
#: The training and development sets: no held-out sentence may appear in them.
TRAINING_SETS = (
    DATA / "conflict_pairs.tsv",
    *PAIR_TRAIN_FILES,
    *PAIR_TRAIN_LIST_FILES,
    DATA / "classify_labelled.tsv",
    DATA / "classify_train.tsv",
    DATA / "classify_heldout.tsv",
)

MIN_PAIRS = 150
MIN_PREFERENCE_UPDATES = 20
MIN_FACT_UPDATES = 30
MIN_CONFLICTS_PER_KIND = 15
MIN_COMPATIBLE_SAME_PLATFORM = 15
MIN_COMPATIBLE_CROSS_PLATFORM = 15
MIN_LISTS = 5
LIST_SIZE = (5, 10)


@dataclass(frozen=True, slots=True)
class HeldoutPair:
    label: str
    kind: str
    type_a: MemoryType
    platform_a: str
    first: str
    type_b: MemoryType
    platform_b: str
    second: str

    @property
    def cross_platform(self) -> bool:
        return self.platform_a != self.platform_b


@dataclass(frozen=True, slots=True)
class ListMember:
    type: MemoryType
    platform: str
    memory: str


def _rows(path: Path, header: tuple[str, ...]) -> list[tuple[int, list[str]]]:
    """(line number, cells) of every data line of ``path``: comments and blank lines skipped, the
    header checked, every line the header's width with no empty cell."""
    rows = []
    seen_header = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if not seen_header:
            if tuple(cells) != header:
                raise ValueError(f"{path.name} line {number} must be the header {' '.join(header)!r}")
            seen_header = True
            continue
        if len(cells) != len(header) or not all(c.strip() for c in cells):
            raise ValueError(f"{path.name} line {number} needs {len(header)} non-empty cells: {line!r}")
        rows.append((number, cells))
    if not seen_header:
        raise ValueError(f"{path.name} has no header line {' '.join(header)!r}")
    return rows


def _type(path: Path, number: int, value: str) -> MemoryType:
    try:
        return MemoryType(value)
    except ValueError:
        raise ValueError(f"{path.name} line {number}: {value!r} is not a memory type") from None


def load_heldout_pairs(
    path: Path = HELDOUT_PAIRS, kinds: dict[str, tuple[str, ...]] = KINDS
) -> list[HeldoutPair]:
    """Every pair in ``path`` (this format also holds the training pairs, with their ``kinds``); a
    malformed line fails with its line number."""
    pairs = []
    for number, cells in _rows(path, PAIRS_HEADER):
        label, kind, type_a, platform_a, first, type_b, platform_b, second = cells
        if label not in kinds:
            raise ValueError(f"{path.name} line {number}: the label must be one of {tuple(kinds)}")
        if kind not in kinds[label]:
            raise ValueError(
                f"{path.name} line {number}: a {label} pair's kind must be one of {kinds[label]}"
            )
        pair = HeldoutPair(
            label,
            kind,
            _type(path, number, type_a),
            platform_a,
            first,
            _type(path, number, type_b),
            platform_b,
            second,
        )
        if label == "update" and pair.cross_platform:
            raise ValueError(f"{path.name} line {number}: an update is saved from one platform")
        if label == "conflict" and not pair.cross_platform:
            raise ValueError(f"{path.name} line {number}: a conflict is saved from two platforms")
        pairs.append(pair)
    return pairs


def load_heldout_lists(path: Path = HELDOUT_LISTS) -> dict[str, list[ListMember]]:
    """Every list in ``path``, its members in file order; a malformed line fails with its number."""
    lists: dict[str, list[ListMember]] = {}
    for number, (name, mtype, platform, memory) in _rows(path, LISTS_HEADER):
        lists.setdefault(name, []).append(ListMember(_type(path, number, mtype), platform, memory))
    return lists


def folded(sentence: str) -> str:
    """A sentence compared case, spacing and end punctuation aside."""
    return re.sub(r"[\s.!?]+$", "", " ".join(sentence.casefold().split()))


def training_sentences() -> set[str]:
    """Every sentence of the training and development sets, folded."""
    out: set[str] = set()
    for path in TRAINING_SETS:
        for line in path.read_text(encoding="utf-8").splitlines():
            cells = line.split("\t")
            if path.name == "conflict_pairs.tsv":
                out.update(folded(cells[i]) for i in (3, 6) if len(cells) == 7)
            elif path in PAIR_TRAIN_FILES:
                out.update(folded(cells[i]) for i in (4, 7) if len(cells) == 8)
            elif path in PAIR_TRAIN_LIST_FILES and len(cells) == 4:
                out.add(folded(cells[3]))
            elif len(cells) == 2:
                out.add(folded(cells[1]))
    return out


@pytest.mark.parametrize("path", PAIR_TRAIN_FILES, ids=lambda p: p.name)
def test_the_training_pairs_load_and_keep_each_label_in_number(path: Path) -> None:
    train = load_heldout_pairs(path, TRAINING_KINDS)
    labels = Counter(p.label for p in train)
    assert min(labels.values()) >= 30 and set(labels) <= set(TRAINING_KINDS), labels
    assert all(p.type_a is p.type_b for p in train)


@pytest.mark.parametrize("path", PAIR_TRAIN_LIST_FILES, ids=lambda p: p.name)
def test_the_training_lists_load(path: Path) -> None:
    assert len(load_heldout_lists(path)) >= 5


@pytest.fixture(scope="module")
def pairs() -> list[HeldoutPair]:
    return load_heldout_pairs()


@pytest.fixture(scope="module")
def lists() -> dict[str, list[ListMember]]:
    return load_heldout_lists()


def test_heldout_pairs_cover_every_kind_in_number(pairs: list[HeldoutPair]) -> None:
    assert len(pairs) >= MIN_PAIRS
    updates = Counter(p.type_a for p in pairs if p.label == "update")
    assert updates[MemoryType.PREFERENCE] >= MIN_PREFERENCE_UPDATES, updates
    assert updates[MemoryType.FACT] >= MIN_FACT_UPDATES, updates
    # Updates come with and without a cue word ("now", "moved", "switched"...).
    assert {p.kind for p in pairs if p.label == "update"} == set(KINDS["update"])
    conflicts = Counter(p.kind for p in pairs if p.label == "conflict")
    assert set(conflicts) == set(KINDS["conflict"])
    assert min(conflicts.values()) >= MIN_CONFLICTS_PER_KIND, conflicts
    compatible = Counter(p.cross_platform for p in pairs if p.label == "compatible")
    assert compatible[False] >= MIN_COMPATIBLE_SAME_PLATFORM, compatible
    assert compatible[True] >= MIN_COMPATIBLE_CROSS_PLATFORM, compatible


def test_heldout_pairs_are_distinct_and_each_pair_says_two_things(pairs: list[HeldoutPair]) -> None:
    keys = [frozenset((folded(p.first), folded(p.second))) for p in pairs]
    assert len(set(keys)) == len(keys), [sorted(k) for k, n in Counter(keys).items() if n > 1]
    assert all(folded(p.first) != folded(p.second) for p in pairs)
    # Every update and conflict keeps its two memories' types alike; the save path only compares
    # memories of one type, so a pair across types would measure nothing.
    assert all(p.type_a is p.type_b for p in pairs)


def test_heldout_lists_are_several_lists_of_five_to_ten_distinct_memories(
    lists: dict[str, list[ListMember]],
) -> None:
    assert len(lists) >= MIN_LISTS, sorted(lists)
    low, high = LIST_SIZE
    assert all(low <= len(members) <= high for members in lists.values()), {
        name: len(members) for name, members in lists.items()
    }
    every = [folded(m.memory) for members in lists.values() for m in members]
    assert len(set(every)) == len(every), [s for s, n in Counter(every).items() if n > 1]
    # A list is saved from one platform, where a wrong decision retires a memory, not only flags it.
    assert all(len({m.platform for m in members}) == 1 for members in lists.values())


def test_heldout_sentences_appear_in_no_training_set(
    pairs: list[HeldoutPair], lists: dict[str, list[ListMember]]
) -> None:
    heldout = {folded(s) for p in pairs for s in (p.first, p.second)}
    heldout |= {folded(m.memory) for members in lists.values() for m in members}
    training = training_sentences()
    assert len(training) > 2_000
    assert sorted(heldout & training) == []
    list_sentences = {folded(m.memory) for members in lists.values() for m in members}
    assert not list_sentences & {folded(s) for p in pairs for s in (p.first, p.second)}


def test_malformed_heldout_lines_are_refused_with_the_line_number(tmp_path: Path) -> None:
    header = "\t".join(PAIRS_HEADER)
    cases = {
        "label": "maybe\tcue\tfact\tclaude\tA is B.\tfact\tclaude\tA is C.",
        "kind": "update\tnegation\tfact\tclaude\tA is B.\tfact\tclaude\tA is C.",
        "memory type": "update\tcue\topinion\tclaude\tA is B.\tfact\tclaude\tA is C.",
        "one platform": "update\tcue\tfact\tclaude\tA is B.\tfact\tchatgpt\tA is C.",
        "two platforms": "conflict\tnegation\tfact\tclaude\tA is B.\tfact\tclaude\tA is C.",
        "non-empty": "update\tcue\tfact\tclaude\t \tfact\tclaude\tA is C.",
    }
    for expected, line in cases.items():
        path = tmp_path / "pairs.tsv"
        path.write_text(f"# a comment\n{header}\n{line}\n", encoding="utf-8")
        with pytest.raises(ValueError, match=f"line 3.*{expected}"):
            load_heldout_pairs(path)
    no_header = tmp_path / "no-header.tsv"
    no_header.write_text("colleagues\tfact\tclaude\tAna is on the web team.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1 must be the header"):
        load_heldout_lists(no_header)
