"""What kind of thing a word names (core/lifecycle/kinds.py): the knowledge behind conflicts that share
no words, read from the shipped word-kinds file, and built from WordNet by bench/build_word_kinds.py."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from tallei_desktop.core.lifecycle import kinds
from tallei_desktop.core.lifecycle.pairs import FEATURES, pair_features

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Lives in Kampala.", "Home is a flat in Bergen."),
        ("Drinks tea at breakfast", "Drinks coffee at breakfast"),
        ("Speaks Dutch at home", "Speaks Korean at home"),
    ],
)
def test_two_things_of_one_kind_swapped(a: str, b: str) -> None:
    assert 0.5 < kinds.kind_swapped(a, b) <= 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # Nothing of one specific kind changes.
        ("Lives in Kampala.", "Enjoys long walks."),
        # The same words on both sides: nothing is swapped.
        ("Lives in Bergen.", "Home is in Bergen."),
        # Two words for one thing.
        ("Drives a car to work", "Drives an automobile to work"),
    ],
)
def test_no_kind_swapped(a: str, b: str) -> None:
    assert kinds.kind_swapped(a, b) == 0.0


def test_a_case_of_what_a_memory_rules_out() -> None:
    assert kinds.case_of_excluded(
        "drinks alcohol", "Never drinks alcohol", "Has a glass of red wine with dinner"
    )
    assert kinds.case_of_excluded("to nuts", "Allergic to nuts", "Snacks on almonds at work")
    assert kinds.case_of_excluded("eat meat", "Doesn't eat meat", "Orders steak every Friday")
    # The other way round, wine rules nothing about alcohol out.
    assert not kinds.case_of_excluded("glass of red wine", "No glass of red wine", "Drinks alcohol")
    # Another kind altogether; and a kind too general to rule out ("work").
    assert not kinds.case_of_excluded(
        "drinks alcohol", "Never drinks alcohol", "Has a glass of orange juice with dinner"
    )
    assert not kinds.case_of_excluded(
        "travels for work", "Never travels for work", "Office phone extension is 5230."
    )


def test_what_a_definition_rules_out() -> None:
    # A vegetarian, by definition, eats no meat; a vegan no animal or dairy products, and a
    # cheeseburger is made with cheese.
    assert kinds.ruled_out_by_definition("Is vegetarian", "Loves a rare steak")
    assert kinds.ruled_out_by_definition("Strict vegan for ethical reasons.", "Loves a juicy cheeseburger.")
    assert not kinds.ruled_out_by_definition(
        "Loves a juicy cheeseburger.", "Strict vegan for ethical reasons."
    )
    assert not kinds.ruled_out_by_definition("Is vegetarian", "Loves a big green salad")
    assert not kinds.ruled_out_by_definition("Is vegetarian", "Is vegetarian and loves steak")


def test_a_compound_is_read_by_its_parts_unless_it_says_it_lacks_them() -> None:
    # WordNet knows no "pulled-pork": its parts are read, and pork is meat.
    assert kinds.ruled_out_by_definition("Keeps to a vegetarian diet.", "Usual lunch is a pulled-pork bap.")
    assert [word for word, _ in kinds.nouns("Rides an e-bike to work.")] == ["bike", "work"]
    # A compound WordNet knows whole stays whole.
    assert [word for word, _ in kinds.nouns("Wears a t-shirt.")] == ["t-shirt"]
    # "Gluten-free" says the bread lacks gluten: no case of it.
    assert [word for word, _ in kinds.nouns("Buys gluten-free bread.")] == ["bread"]


def test_opposites() -> None:
    assert kinds.opposite_named("Happily married for ten years.", "Single, using dating apps.")
    assert kinds.opposite_named("Prefers the dark theme", "Prefers the light theme")
    assert not kinds.opposite_named("Married", "Happily married")
    assert not kinds.opposite_named("Prefers the dark theme", "Prefers a large font")


def test_the_pair_model_reads_the_kinds() -> None:
    a, b = "Never drinks alcohol", "Has a glass of red wine with dinner"
    row = dict(zip(FEATURES, pair_features(a, b, 0.3, preference=False), strict=True))
    assert row["case_of_excluded"] == 1.0
    assert row["kind_swapped"] == kinds.kind_swapped(a, b)
    assert row["ruled_out_by_definition"] == 0.0


def test_a_damaged_word_kinds_file_is_as_good_as_none(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Damaged:
        def joinpath(self, *parts: str) -> Damaged:
            return self

        def read_bytes(self) -> bytes:
            return gzip.compress(b'{"depth": [1, 2')

    monkeypatch.setattr(kinds.resources, "files", lambda _package: Damaged())
    kinds._lexicon.cache_clear()
    try:
        assert not kinds.kinds_available()
        assert "word kinds unavailable" in caplog.text
    finally:
        monkeypatch.undo()
        kinds._lexicon.cache_clear()
    assert kinds.kinds_available()


def test_without_the_word_kinds_file_every_signal_is_zero(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(kinds, "KINDS_FILE", "no_such_file.json.gz")
    kinds._lexicon.cache_clear()
    kinds.nouns.cache_clear()
    kinds._adjective_clusters.cache_clear()
    try:
        assert not kinds.kinds_available()
        assert "word kinds unavailable" in caplog.text
        a, b = "Never drinks alcohol", "Has a glass of red wine with dinner"
        assert kinds.kind_swapped(a, b) == 0.0
        assert not kinds.case_of_excluded("drinks alcohol", a, b)
        assert not kinds.ruled_out_by_definition("Is vegetarian", "Loves a rare steak")
        assert not kinds.opposite_named("Married", "Single")
        row = dict(zip(FEATURES, pair_features(a, b, 0.3, preference=False), strict=True))
        assert row["case_of_excluded"] == 0.0
    finally:
        monkeypatch.undo()
        kinds._lexicon.cache_clear()
        kinds.nouns.cache_clear()
        kinds._adjective_clusters.cache_clear()
    assert kinds.kinds_available()


# A tiny WordNet in its own format: drink > alcohol > wine, drink > juice, and a teetotaller, who
# by definition abstains from alcohol; two adjectives that are opposites, and one similar to the first.
_DATA_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by Princeton University
00000001 03 n 01 entity 0 000 | that which is perceived or known
00000002 03 n 01 thing 0 001 @ 00000001 n 0000 | a separate and self-contained entity
00000003 03 n 01 matter 0 001 @ 00000002 n 0000 | that which has mass
00000004 13 n 01 drink 0 001 @ 00000003 n 0000 | a liquid to drink
00000005 13 n 02 alcohol 0 alcoholic_drink 0 001 @ 00000004 n 0000 | a drink that makes one drunk
00000006 13 n 01 wine 0 001 @ 00000005 n 0000 | fermented grape juice
00000007 13 n 01 juice 0 001 @ 00000004 n 0000 | the liquid part of fruit
00000008 18 n 01 teetotaller 0 001 @ 00000002 n 0000 | someone who abstains from alcohol
"""
_INDEX_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by Princeton University
alcohol n 1 1 @ 1 0 00000005
alcoholic_drink n 1 1 @ 1 0 00000005
drink n 1 1 @ 1 0 00000004
entity n 1 0 1 0 00000001
juice n 1 1 @ 1 0 00000007
matter n 1 1 @ 1 0 00000003
teetotaller n 1 1 @ 1 0 00000008
thing n 1 1 @ 1 0 00000002
wine n 1 1 @ 1 0 00000006
"""
_DATA_ADJ = """\
  1 This software and database is being provided to you, the LICENSEE, by Princeton University
00000101 00 a 01 married 0 001 ! 00000102 a 0101 | joined in matrimony
00000102 00 a 01 unmarried 0 001 ! 00000101 a 0101 | not married
00000103 00 s 01 single 0 001 & 00000102 a 0000 | not married or related to the other sex
"""


_INDEX_VERB = """\
  1 This software and database is being provided to you, the LICENSEE, by Princeton University
drink v 1 1 @ 1 0 00000201
drink_up v 1 1 @ 1 0 00000202
"""


def test_the_word_kinds_are_built_from_wordnet(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    try:
        import build_word_kinds
    finally:
        sys.path.remove(str(REPO_ROOT / "bench"))
    wordnet = tmp_path / "wordnet-3.0"
    wordnet.mkdir()
    (wordnet / "data.noun").write_text(_DATA_NOUN, encoding="latin-1")
    (wordnet / "index.noun").write_text(_INDEX_NOUN, encoding="latin-1")
    (wordnet / "data.adj").write_text(_DATA_ADJ, encoding="latin-1")
    (wordnet / "index.verb").write_text(_INDEX_VERB, encoding="latin-1")
    (wordnet / "LICENSE").write_text("WordNet Release 3.0 licence\n", encoding="latin-1")
    out = tmp_path / "kinds.json.gz"
    assert build_word_kinds.main([str(wordnet), "--out", str(out)]) == 0
    document = json.loads(gzip.decompress(out.read_bytes()))
    bits = document["sense_bits"]
    # One sense each here, stored as sense + 1 in the lowest bits.
    senses = {word: (packed & ((1 << bits) - 1)) - 1 for word, packed in document["words"].items()}
    assert all(packed >> bits == 0 for packed in document["words"].values())
    assert build_word_kinds.pack([4, 0, 7]) >> (2 * bits) == 8
    assert set(senses) == {
        "alcohol",
        "alcoholic drink",
        "drink",
        "entity",
        "juice",
        "matter",
        "teetotaller",
        "thing",
        "wine",
    }
    starts, flat = document["parents"]["starts"], document["parents"]["flat"]
    assert flat[starts[senses["wine"]] : starts[senses["wine"] + 1]] == [senses["alcohol"]]
    assert document["depth"][senses["wine"]] == 5
    assert document["rules_out"] == {str(senses["teetotaller"]): [senses["alcohol"]]}
    # Wine's definition names juice, a drink: a food is a case of what it is made of.
    assert document["made_of"] == {str(senses["wine"]): [senses["juice"]]}
    assert document["verbs"] == ["drink"]
    clusters = document["opposites"]["words"]
    assert clusters["single"] == clusters["unmarried"]
    assert [sorted(clusters["married"] + clusters["single"])] == document["opposites"]["antonyms"]
    assert document["licence"].startswith("WordNet Release 3.0")
    # The same database gives the same bytes.
    again = tmp_path / "again.json.gz"
    build_word_kinds.main([str(wordnet), "--out", str(again)])
    assert again.read_bytes() == out.read_bytes()


def test_a_word_keeps_its_senses_most_frequent_first() -> None:
    lexicon = kinds._lexicon()
    assert lexicon is not None
    wine = lexicon.senses("wine")
    assert len(wine) >= 2 and len(set(wine)) == len(wine)
    # The drink before the colour: the most frequent sense is the kind the pair model reads.
    assert lexicon.senses("alcohol")[0] in lexicon.ancestors(wine[0])
    assert lexicon.senses("no such word") == ()
    # Names of taxa are left out.
    assert lexicon.senses("genus felis") == ()
