"""Save-time classification (the trained model) on the hand-labelled set, and the rules kept as its
baseline: their scores, ties and cue precedence."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tallei_desktop.core.classify import PRECEDENCE, classify, explain, rule_type
from tallei_desktop.core.models import MemoryType

LABELLED = Path(__file__).parent / "data" / "classify_labelled.tsv"
MIN_ACCURACY = 0.90
MIN_RECALL = 0.75
MIN_PER_TYPE = 20


def _load() -> list[tuple[MemoryType, str]]:
    rows: list[tuple[MemoryType, str]] = []
    for number, line in enumerate(LABELLED.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        label, sep, sentence = line.partition("\t")
        assert sep, f"line {number} is not 'type<TAB>sentence': {line!r}"
        assert sentence.strip(), f"line {number} has an empty sentence: {line!r}"
        rows.append((MemoryType(label), sentence))
    return rows


@pytest.fixture(scope="module")
def labelled() -> list[tuple[MemoryType, str]]:
    return _load()


@pytest.fixture(scope="module")
def predictions(labelled: list[tuple[MemoryType, str]]) -> list[tuple[MemoryType, MemoryType, str]]:
    """(expected, predicted, sentence) for every labelled sentence."""
    return [(expected, classify(sentence), sentence) for expected, sentence in labelled]


def _confusion_summary(predictions: list[tuple[MemoryType, MemoryType, str]]) -> str:
    types = list(MemoryType)
    counts = Counter((expected, predicted) for expected, predicted, _ in predictions)
    width = max(len(t.value) for t in types) + 1
    header = "expected \\ got".ljust(width + 4) + " ".join(t.value[:5].rjust(5) for t in types)
    lines = [header]
    for expected in types:
        cells = " ".join(str(counts[(expected, got)]).rjust(5) for got in types)
        lines.append(expected.value.ljust(width + 4) + cells)
    misses = [
        f"  {exp.value} -> {got.value}: {sentence}" for exp, got, sentence in predictions if exp is not got
    ]
    return "\n".join([*lines, "misclassified:", *misses])


def test_labelled_set_has_enough_examples_of_every_type(
    labelled: list[tuple[MemoryType, str]],
) -> None:
    counts = Counter(label for label, _ in labelled)
    assert len(labelled) >= 180
    short = {t.value: counts[t] for t in MemoryType if counts[t] < MIN_PER_TYPE}
    assert not short, f"types with fewer than {MIN_PER_TYPE} examples: {short}"


def test_labelled_set_has_no_duplicate_sentences(labelled: list[tuple[MemoryType, str]]) -> None:
    seen = Counter(sentence.casefold() for _, sentence in labelled)
    assert [s for s, n in seen.items() if n > 1] == []


def test_overall_accuracy_on_labelled_set(
    predictions: list[tuple[MemoryType, MemoryType, str]],
) -> None:
    correct = sum(expected is predicted for expected, predicted, _ in predictions)
    accuracy = correct / len(predictions)
    assert accuracy >= MIN_ACCURACY, (
        f"accuracy {accuracy:.3f} < {MIN_ACCURACY}\n{_confusion_summary(predictions)}"
    )


def test_recall_of_every_type_on_labelled_set(
    predictions: list[tuple[MemoryType, MemoryType, str]],
) -> None:
    totals = Counter(expected for expected, _, _ in predictions)
    hits = Counter(expected for expected, predicted, _ in predictions if expected is predicted)
    recall = {t: hits[t] / totals[t] for t in MemoryType}
    low = {t.value: round(r, 3) for t, r in recall.items() if r < MIN_RECALL}
    assert not low, f"recall below {MIN_RECALL}: {low}\n{_confusion_summary(predictions)}"


def test_classification_is_deterministic(labelled: list[tuple[MemoryType, str]]) -> None:
    sentences = [sentence for _, sentence in labelled]
    first = [(classify(s), rule_type(s), explain(s)) for s in sentences]
    second = [(classify(s), rule_type(s), explain(s)) for s in reversed(sentences)]
    assert first == list(reversed(second))


def test_explain_scores_every_type_and_the_rules_take_the_best(
    labelled: list[tuple[MemoryType, str]],
) -> None:
    for _, sentence in labelled:
        scores = explain(sentence)
        assert set(scores) == set(MemoryType)
        best = max(scores.values())
        winner = next(t for t in PRECEDENCE if scores[t] == best)
        assert rule_type(sentence) is winner, sentence


def test_explicit_failure_cue_wins_over_event_time_word_in_the_rules() -> None:
    assert rule_type("the deploy crashed yesterday") is MemoryType.FAILURE
    assert rule_type("Outage on 3 May: the API was down for an hour") is MemoryType.FAILURE


def test_lesson_framing_wins_over_the_failure_it_describes() -> None:
    text = "I learned that the build breaks when the cache directory is missing"
    assert classify(text) is MemoryType.LESSON
    assert explain(text)[MemoryType.FAILURE] > 0, "the failure cue should still be seen"


def test_commitment_wins_over_the_date_it_was_made() -> None:
    text = "we decided yesterday to go with Postgres"
    assert classify(text) is MemoryType.DECISION
    assert explain(text)[MemoryType.EVENT] > 0, "the time word should still be seen"


def test_time_word_alone_makes_an_event() -> None:
    assert classify("Had lunch with Maria yesterday") is MemoryType.EVENT
    assert classify("The meeting with the landlord is on 12 March") is MemoryType.EVENT


def test_recurring_time_is_a_standing_fact_not_an_event() -> None:
    assert classify("She calls her grandmother every Sunday") is MemoryType.FACT


def test_third_person_preference_is_a_preference() -> None:
    assert classify("User prefers dark mode in every editor") is MemoryType.PREFERENCE
    assert classify("Her favourite airline is KLM") is MemoryType.PREFERENCE


def test_always_use_is_a_preference_but_general_advice_is_a_lesson() -> None:
    assert classify("Always use pnpm for my JavaScript projects") is MemoryType.PREFERENCE
    assert classify("Always test a backup by restoring it") is MemoryType.LESSON


def test_hedged_choice_is_a_note_not_a_decision() -> None:
    assert classify("Wondering if we should switch to Poetry") is MemoryType.NOTE
    assert classify("We switched to Poetry") is not MemoryType.NOTE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("WE DECIDED TO USE REDIS", MemoryType.DECISION),
        ("we decided to use redis", MemoryType.DECISION),
        ("I\u2019d rather get short answers", MemoryType.PREFERENCE),
        ("  - TODO: renew the passport  ", MemoryType.NOTE),
        ("\uff2e\uff4f\uff54\uff45: check the fuses", MemoryType.NOTE),  # full-width "Note"
        ("Postmortem\u2014the cache served stale data", MemoryType.FAILURE),
    ],
)
def test_case_punctuation_and_unicode_forms_do_not_change_the_type(text: str, expected: MemoryType) -> None:
    assert classify(text) is expected


@pytest.mark.parametrize(
    "text",
    ["", "   ", "\n\t", "!!!", "\U0001f642", "Der Server steht in Frankfurt.", "Tomás is 34"],
)
def test_text_without_cues_falls_back_to_fact(text: str) -> None:
    assert classify(text) is MemoryType.FACT
    assert max(explain(text), key=explain(text).__getitem__) is MemoryType.FACT


@pytest.mark.parametrize(
    "text",
    [
        "8 May 2023: Caroline works as a counsellor.",
        "2024-03-12 - the repository is written in Rust.",
        "(3 June) Melanie has two kids.",
    ],
)
def test_a_date_alone_does_not_make_an_event(text: str) -> None:
    assert classify(text) is MemoryType.FACT


@pytest.mark.parametrize(
    "text",
    [
        "Dentist appointment on 14 June.",
        "The client visit got pushed to 19 August.",
        "Flew to Lisbon on 3 May.",
    ],
)
def test_a_date_with_an_occurrence_is_an_event(text: str) -> None:
    assert classify(text) is MemoryType.EVENT
