"""The lifecycle's pure decision on one case, and the store's gather and apply around it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tallei_desktop.core.embeddings import FastEmbedEmbedder
from tallei_desktop.core.lifecycle import Candidate, Case, NewMemory, decide
from tallei_desktop.core.lifecycle.decide import judged_texts, may_retire
from tallei_desktop.core.lifecycle.pairs import (
    FEATURES,
    Network,
    PairModel,
    another_predicate,
    field_value_changed,
    fields_differ,
    is_dialogue,
    load_pair_model,
    number_swapped_in_one_frame,
    one_of_a_kind_swapped,
    pair_features,
    says_it_adds,
    slot_value_changed,
    subjects_differ,
    two_values_swapped,
)
from tallei_desktop.core.models import Bucket, MemoryStatus, MemoryType
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store import lifecycle_rows as lr
from tallei_desktop.core.store.queries import fetch_by_id
from tests.core.conftest import ServiceFactory

FACT = MemoryType.FACT


def _new(content: str, *, rowid: int = 10, platform: str = "claude", mtype: MemoryType = FACT) -> NewMemory:
    return NewMemory(
        rowid, f"n{rowid}", mtype, Bucket.LONG_TERM, content, platform, MemoryStatus.ACTIVE, False
    )


def _old(
    content: str,
    similarity: float | None,
    *,
    rowid: int = 1,
    platform: str = "claude",
    pinned: bool = False,
    mtype: MemoryType = FACT,
) -> Candidate:
    return Candidate(rowid, f"o{rowid}", mtype, content, platform, frozenset({platform}), pinned, similarity)


def _constant(logit: float) -> Network:
    """A network that answers ``logit`` whatever the pair."""
    return Network(np.zeros((len(FEATURES), 1)), np.zeros(1), np.zeros(1), logit)


#: A model that calls every pair incompatible, so the rules around it are what is tested.
SURE = PairModel((_constant(30.0),), supersede_at=0.9, conflict_at=0.5)


def test_a_duplicate_merges_before_anything_else_is_decided() -> None:
    case = Case(_new("I prefer dark mode"), (_old("I prefer dark mode.", 0.97),), vector_current=True)
    decision = decide(case, SURE)
    assert decision.merge_into is not None and decision.merge_into.id == "o1"
    assert decision.superseded == () and decision.conflicts == () and decision.store_vector


def test_the_same_assistant_retires_only_a_memory_the_new_one_says_it_replaces() -> None:
    says = Case(_new("The team switched from Jira to Linear."), (_old("The team uses Jira.", 0.6),), True)
    assert [c.id for c in decide(says, SURE).superseded] == ["o1"]
    # One value swapped, no cue, no number, not a statement of what something is: both stand.
    silent = Case(
        _new("Decided with Bruno to move the billing service"),
        (_old("Decided with Amara to move the billing service", 0.88),),
        True,
    )
    assert decide(silent, SURE).superseded == ()
    # A narrower subject ("for the docs") is another statement, not a newer value.
    scoped = Case(
        _new("The staging URL for the docs is docs-stage.example.org."),
        (_old("The staging URL is staging.example.org.", 0.85),),
        True,
    )
    assert decide(scoped, SURE).superseded == ()


def test_a_memory_about_another_named_thing_retires_nothing() -> None:
    case = Case(_new("Project 4 is written in Rust"), (_old("Project 3 is written in Rust", 0.95),), True)
    assert decide(case, SURE).superseded == ()


def test_a_new_memory_that_would_retire_several_is_one_more_of_a_list() -> None:
    olds = (
        _old("The gym costs 30 euros a month.", 0.8, rowid=1),
        _old("The gym costs 35 euros a month.", 0.8, rowid=2),
    )
    case = Case(_new("The gym costs 42 euros a month."), olds, True)
    assert decide(case, SURE).superseded == ()
    assert [c.id for c in decide(Case(case.new, olds[:1], True), SURE).superseded] == ["o1"]


def _by_similarity(at_half: float) -> PairModel:
    """A model whose probability rises steeply with the similarity, 0.5 at ``at_half``."""
    hidden = np.zeros((len(FEATURES), 1))
    hidden[FEATURES.index("similarity"), 0] = 1.0
    return PairModel((Network(hidden, np.zeros(1), np.array([100.0]), -100.0 * at_half),), 0.9, 0.5)


def test_a_new_memory_at_odds_with_several_of_one_assistant_is_one_more_of_a_list() -> None:
    """Sure of one older memory, and at odds with another at the ask threshold: one more of a list
    ("Wants Ctrl+E to focus the explorer" after two other shortcuts), so both stay."""
    model = _by_similarity(0.7)
    sure = _old("Lives in Austin.", 0.95, rowid=1)
    at_odds = _old("Moved to Austin in 2019 for work.", 0.72, rowid=2)
    apart = _old("Works at Dell in Round Rock.", 0.4, rowid=3)
    new = _new("Lives in Denver now.")
    assert [c.id for c in decide(Case(new, (sure, apart), True), model).superseded] == ["o1"]
    assert decide(Case(new, (sure, at_odds), True), model).superseded == ()
    # Another assistant's memory at odds is a conflict to ask about, not a sibling in a list.
    theirs = _old("Moved to Austin in 2019 for work.", 0.72, rowid=2, platform="gemini")
    decision = decide(Case(new, (sure, theirs), True), model)
    assert [c.id for c in decision.superseded] == ["o1"] and [c.id for c in decision.conflicts] == ["o2"]


def test_another_assistant_or_a_pin_raises_a_conflict_and_retires_nothing() -> None:
    other = Case(
        _new("The office is in Munich.", platform="gemini"), (_old("The office is in Berlin.", 0.7),), True
    )
    pinned = Case(
        _new("The office is in Munich."), (_old("The office is in Berlin.", 0.7, pinned=True),), True
    )
    for case in (other, pinned):
        decision = decide(case, SURE)
        assert [c.id for c in decision.conflicts] == ["o1"] and decision.superseded == ()


def test_only_an_older_memory_of_a_judged_type_is_compared() -> None:
    newer = _old("The office is in Berlin.", 0.7, rowid=11)
    note = _old("The office is in Berlin.", 0.7, mtype=MemoryType.NOTE)
    assert decide(Case(_new("The office is in Munich."), (newer,), True), SURE) == decide(
        Case(_new("The office is in Munich."), (), True), SURE
    )
    assert decide(Case(_new("The office is in Munich."), (note,), True), SURE).superseded == ()


def test_a_finished_or_edited_memory_is_not_ruled_on_again() -> None:
    done = NewMemory(10, "n10", FACT, Bucket.LONG_TERM, "x", "claude", MemoryStatus.ACTIVE, True)
    decision = decide(Case(done, (_old("y", 0.99),), vector_current=False), SURE)
    assert decision.merge_into is None and decision.superseded == () and not decision.store_vector


def test_without_vectors_preferences_are_compared_by_their_words() -> None:
    new = _new("Prefers tabs for indentation in Python", mtype=MemoryType.PREFERENCE)
    old = _old("Prefers spaces for indentation in Python", None, mtype=MemoryType.PREFERENCE)
    assert [c.id for c in decide(Case(new, (old,), True)).superseded] == ["o1"]


def test_the_shipped_pair_model_loads_and_rules_both_ways() -> None:
    model = load_pair_model()
    assert 0.0 < model.conflict_at <= model.supersede_at < 1.0
    assert len(pair_features("a", "b", 0.5, preference=False)) == len(FEATURES)
    assert (
        model.incompatible(
            "Prefers dark mode in all apps.", "Prefers light mode in all apps.", 0.9, preference=True
        )
        > model.supersede_at
    )
    assert (
        model.incompatible(
            "Rui works on the mobile team.", "Elena works on the payments team.", 0.6, preference=False
        )
        < model.conflict_at
    )


def test_weights_for_other_features_are_refused() -> None:
    document = json.loads(load_pair_model().to_json())
    with pytest.raises(ValueError, match="other features"):
        PairModel.from_json(json.dumps({**document, "feature_version": document["feature_version"] + 1}))
    with pytest.raises(ValueError, match="other features"):
        PairModel.from_json(json.dumps({**document, "features": document["features"][:-1]}))


def test_gather_reads_only_active_neighbours_and_apply_writes_one_supersede(
    make_service: ServiceFactory, real_embedder: FastEmbedEmbedder
) -> None:
    svc: MemoryService = make_service(embedder=real_embedder)
    old = svc.save("The staging URL is staging.example.org.", type="fact", platform="cursor").id
    gone = svc.save("The build cache lives on cache-3.example.org.", type="fact", platform="cursor").id
    svc.drain()
    svc.forget(gone)
    text = "The staging URL changed to stage2.example.org."
    new = svc.save(text, type="fact", platform="cursor")
    [vector] = real_embedder.embed([text])
    with svc.db.write() as conn:
        found = fetch_by_id(conn, new.id)
        assert found is not None
        rowid = found.rowid
        near = lr.neighbours_in_store(conn, rowid, Bucket.LONG_TERM, vector)
        case = lr.gather_case(conn, rowid, text, vector, None)
        assert case is not None and {c.id for c in case.candidates} == {old}
        assert {r for r, _ in near} >= {c.rowid for c in case.candidates}
        outcome = lr.apply_decision(conn, case, decide(case), vector, svc.now().timestamp())
    assert outcome is not None and outcome.superseded == (old,)
    assert svc.get(old).status is MemoryStatus.SUPERSEDED and svc.get(old).superseded_by == new.id
    # Finished: a second pass over the same memory decides nothing again.
    with svc.db.write() as conn:
        again = lr.gather_case(conn, rowid, text, vector, None)
        assert again is not None and again.new.processed
        assert lr.apply_decision(conn, again, decide(again), vector, svc.now().timestamp()) is None


def test_a_network_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="hidden weights"):
        Network(np.zeros((len(FEATURES) - 1, 4)), np.zeros(4), np.zeros(4), 0.0)
    with pytest.raises(ValueError, match="at least one network"):
        PairModel((), 0.9, 0.5)


def test_the_networks_are_averaged() -> None:
    model = PairModel((_constant(30.0), _constant(-30.0)), 0.9, 0.5)
    assert model.incompatible("a", "b", 0.5, preference=False) == pytest.approx(0.5)


def test_the_shipped_model_round_trips_through_its_file() -> None:
    model = load_pair_model()
    again = PairModel.from_json(model.to_json())
    pair = ("Lives in Glasgow.", "Lives in Cardiff.", 0.6)
    assert again.incompatible(*pair, preference=False) == pytest.approx(
        model.incompatible(*pair, preference=False), abs=1e-6
    )
    assert (again.supersede_at, again.conflict_at) == (model.supersede_at, model.conflict_at)
    assert again.retire_at(preference=True) == model.retire_at(preference=True)
    # Weights written before preferences had a threshold of their own retire them as facts.
    document = json.loads(model.to_json())
    del document["supersede_preference_at"]
    older = PairModel.from_json(json.dumps(document))
    assert older.retire_at(preference=True) == older.retire_at(preference=False) == model.supersede_at


def test_a_preference_retires_at_its_own_threshold_and_a_fact_at_its_own() -> None:
    # Every pair at p 0.73: over the preferences' threshold, under the facts'.
    model = PairModel((_constant(1.0),), supersede_at=0.9, conflict_at=0.5, supersede_preference_at=0.7)
    preference = MemoryType.PREFERENCE
    taste = Case(
        _new("Prefers gRPC between services", mtype=preference),
        (_old("Prefers REST between services", 0.7, mtype=preference),),
        True,
    )
    assert [c.id for c in decide(taste, model).superseded] == ["o1"]
    fact = Case(_new("The staging host moved to db-7"), (_old("The staging host is db-3", 0.7),), True)
    assert decide(fact, model).superseded == ()


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("Relationship status: engaged.", "Relationship status: married.", True),
        ("Bank: Corran Mutual.", "Bank: Lyle Street Credit Union.", True),
        ("Bank: Corran Mutual.", "Bank: Corran Mutual", False),
        ("Bank: Corran Mutual.", "Gym: PulseFit.", False),
        # A field of many values ("extensions", "languages") gains one; "Address", "Status" hold one.
        ("extensions: Ruff", "extensions: Error Lens", False),
        ("Status: on leave", "Status: back at work", True),
        # Lines of dialogue are no fields.
        ("Jon: Thanks!", "Jon: Bye!", False),
        ("Maria: Me too. Talk to you soon.", "Maria: Me too. Talk to you later.", False),
    ],
)
def test_another_value_of_one_field_says_it_replaces(old: str, new: str, changed: bool) -> None:
    assert field_value_changed(old, new) is changed
    if changed:
        # With nothing else saying so (no cue word, no number), the field alone lets it replace.
        decision = decide(Case(_new(new), (_old(old, 0.8),), True), SURE)
        assert [c.id for c in decision.superseded] == ["o1"]


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        # A field against a statement of what the same thing is, either way round.
        ("The build server is ci-03.", "Build server: ci-07.internal", True),
        ("Dentist: Dr Amadi", "My dentist is Dr Lindqvist", True),
        # A word saying the value is new or chosen is no part of what it is for.
        ("Postcode: LS6 2AB", "New postcode: YO1 7HH", True),
        ("Caterer: Fig & Thistle", "Caterer chosen: Harbour Kitchen", True),
        # One that narrows the other may be another thing: someone else's, another kind of record.
        ("Birthday: 3 May", "Dad's birthday: 9 June", False),
        ("MX record: mail.example.org", "Backup MX record: mx2.example.org", False),
        # The same value, or one that only adds to the other, changes nothing.
        ("Gym: PulseFit", "The gym is PulseFit", False),
        ("Home city is Porto.", "Home city: Porto, Portugal", False),
        # Values of two kinds are two things said about one subject.
        ("Ruth is 34", "Ruth is a nurse", False),
        ("My dentist is Dr Amadi", "My dentist is in Headingley", False),
        ("Project Atlas is written in Go", "Project Atlas is due in March", False),
        # Two slots, a slot of many values, a line of dialogue, a sentence of no slot.
        ("Dentist: Dr Amadi", "Optician: Dr Lindqvist", False),
        ("Languages: Dutch", "Languages: Korean", False),
        ("Jon: Thanks!", "Jon: Bye!", False),
        ("Cycles to work.", "Takes the bus to work.", False),
    ],
)
def test_another_value_of_one_slot_in_either_wording(old: str, new: str, changed: bool) -> None:
    assert slot_value_changed(old, new) is changed
    if changed:
        decision = decide(Case(_new(new), (_old(old, 0.8),), True), SURE)
        assert [c.id for c in decision.superseded] == ["o1"]


#: Two things said about one subject by one assistant: both stand, however alike their frames.
TWO_THINGS_ABOUT_ONE = (
    ("Ruth is 34", "Ruth is a nurse"),
    ("My sister is a nurse", "My sister is in Leeds"),
    ("Kofi is on the payments team", "Kofi is based in Leeds"),
    ("The office is in Leeds", "The office is open until 6pm"),
    ("My dentist is Dr Amadi", "My dentist is in Headingley"),
    ("Project Atlas is written in Go", "Project Atlas is due in March"),
)


def test_the_shipped_model_retires_nothing_for_two_things_about_one_subject(
    real_embedder: FastEmbedEmbedder,
) -> None:
    model = load_pair_model()
    for first, second in TWO_THINGS_ABOUT_ONE:
        a, b = np.asarray(real_embedder.embed([first, second]))
        case = Case(_new(second), (_old(first, float(a @ b)),), True)
        assert decide(case, model).superseded == (), (first, second)


@pytest.mark.parametrize(
    ("old", "new", "swapped"),
    [
        ("Dog Juniper weighs 21 kg", "Juniper weighs 24 kg", True),
        ("Rent is 950 a month", "Rent: 1,050 a month", True),
        # A name with a number in it is whom it is about, not the number.
        ("db-main runs PostgreSQL 15", "db-replica-3 runs PostgreSQL 14", False),
        # Another number beside other words: more than the number changed.
        ("Runs 5k in 31 minutes", "Swims 400 m in 9 minutes", False),
        # The same numbers, or none.
        ("Dog Juniper weighs 21 kg", "Juniper weighs 21 kg", False),
        ("Lives in Leeds.", "Lives in York.", False),
    ],
)
def test_a_number_swapped_in_one_frame(old: str, new: str, swapped: bool) -> None:
    assert number_swapped_in_one_frame(old, new) is swapped


@pytest.mark.parametrize(
    ("old", "new", "apart"),
    [
        ("Morning tea: Assam with milk", "Evening tea: peppermint", True),
        ("Dentist: Dr Amadi", "Optician: Dr Lindqvist", True),
        # A name that holds the other's, or differs by a word saying the value is new: one slot.
        ("Theme: Solarized Light", "Editor theme: One Dark Pro", False),
        ("Address: 14 Alder Lane", "New address: 3 Wexford Road", False),
        # Not two fields: a sentence, or lines of dialogue.
        ("Morning tea: Assam with milk", "Drinks peppermint tea in the evening", False),
        ("Tim: Thanks!", "Ana: Bye!", False),
        # Two cases a preference holds for, each opening its memory: two slots too.
        (
            "For work emails, prefers a concise, formal tone.",
            "For birthday messages, prefers a warm tone.",
            True,
        ),
        ("On trains, prefers a forward-facing seat.", "On planes, prefers an aisle seat.", True),
        ("From the noodle bar, wants the dan dan noodles.", "From the chippy, wants haddock.", True),
        ("With clients, keeps emails formal.", "With the team, keeps messages casual.", True),
        # The same case, or one that narrows the other, may be one slot; a case on one side only too.
        ("On weekdays, wakes at 6:30.", "On weekdays, wakes at 7:15.", False),
        ("On weekdays, has porridge.", "On weekdays at work, has granola.", False),
        ("In the morning, drinks green tea.", "Drinks coffee now.", False),
    ],
)
def test_two_fields_of_other_names_are_two_slots_and_neither_retires(old: str, new: str, apart: bool) -> None:
    assert fields_differ(old, new) is apart
    # A preference retires another whenever the model is sure, unless the two are two slots.
    preference = MemoryType.PREFERENCE
    decision = decide(Case(_new(new, mtype=preference), (_old(old, 0.8, mtype=preference),), True), SURE)
    dialogue = is_dialogue(old) and is_dialogue(new)
    assert [c.id for c in decision.superseded] == ([] if apart or dialogue else ["o1"])


@pytest.mark.parametrize(
    ("old", "new", "two_things"),
    [
        ("Sister Hannah lives in Melbourne.", "Sister Hannah is a paediatric nurse.", True),
        ("Father-in-law Ken is 74.", "Father-in-law Ken lives in a bungalow in Norfolk.", True),
        ("The monorepo uses pnpm workspaces.", "The monorepo runs CI on GitHub Actions.", True),
        # One verb, another value: one thing said twice.
        ("Ruth is 34", "Ruth is a nurse", False),
        ("Lives in Porto", "Lives in Braga", False),
        # A verb that says the thing changed is an update's; a negated one says the opposite.
        ("Omar is 9", "Omar turned 10", False),
        ("Ana drinks wine", "Ana doesn't drink", False),
        # No subject shared, or only "User" and "The".
        ("User prefers tea", "User likes coffee", False),
        ("The API runs on port 8080", "API listens on port 3000", False),
    ],
)
def test_two_verbs_after_one_subject(old: str, new: str, two_things: bool) -> None:
    assert another_predicate(old, new) is two_things


@pytest.mark.parametrize(
    ("old", "new", "two_things"),
    [
        ("Prefers Black for Python formatting.", "Prefers gofmt defaults for Go formatting.", True),
        ("Frontend repo uses Vite.", "Docs repo uses Docusaurus.", True),
        ("His mother is 67.", "His father is 71.", True),
        # One run swapped, whatever else is added or dropped: one value.
        ("Works at Spotify as a data engineer", "Works at Klarna as a data engineer", False),
        ("Chose a Toyota RAV4 hybrid as the family car", "Chose a Volvo XC40 as the family car", False),
        ("Cat Mochi is 2 years old", "Mochi is 3 years old", False),
    ],
)
def test_two_runs_of_words_swapped(old: str, new: str, two_things: bool) -> None:
    assert two_values_swapped(old, new) is two_things


@pytest.mark.parametrize(
    ("old", "new", "differ"),
    [
        ("Ines works on the data platform team.", "Kofi works on the billing team.", True),
        ("Colleague Sofia is on the infrastructure team.", "Colleague Lars is on the support team.", True),
        ("web-01 is hosted in eu-central-1.", "web-02 is hosted in us-west-2.", True),
        ("Prefers Goran's summaries of the news.", "Prefers Hana's summaries of the news.", True),
        # The value after a verb, a label's value, a first word no verb follows, and "I" are no subjects.
        ("Prefers Kotlin for Android work.", "Now prefers Flutter for Android work.", False),
        ("Likes 4-space indentation in YAML files.", "Likes 2-space indentation in YAML files.", False),
        ("Age: 34.", "Age: 35.", False),
        ("Salary is 52,000 a year.", "Got a raise; salary is now 58,000 a year.", False),
        ("I'm employed by Deloitte.", "I just started a new job at PwC.", False),
        # An instruction's verb opens it ("Use …"): what follows is the value, not whom.
        ("Use Redis for the job queue.", "Use RabbitMQ for the job queue.", False),
        # A number alone is a value, never a subject; a numbered name still is one.
        ("phone 0478 221 903", "phone 0492 660 175", False),
        ("Room 204 has a projector.", "Room 311 has a projector.", True),
        # Numbered labels name two things (a label's numeric value, "Age: 34", names none: above).
        ("Fact 3: the codename 3 relates to gardening", "Fact 7: the codename 7 relates to baking", True),
    ],
)
def test_what_a_memory_is_about(old: str, new: str, differ: bool) -> None:
    assert subjects_differ(old, new) is differ


def test_lines_of_dialogue_and_changed_fields_are_features_of_their_own() -> None:
    index = {name: i for i, name in enumerate(FEATURES)}
    spoken = pair_features("Tim: Thanks!", "Tim: Way to go!", 0.7, preference=False)
    field = pair_features("Job title: Product Designer.", "Job title: Design Lead.", 0.85, preference=False)
    stated = pair_features("Lives in Leeds.", "Lives in York.", 0.7, preference=False)
    assert spoken[index["dialogue"]] == 1.0 and field[index["dialogue"]] == 0.0
    assert field[index["field_value_changed"]] == 1.0
    assert stated[index["dialogue"]] == stated[index["field_value_changed"]] == 0.0


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("Tim: Thanks!", True),
        ("[2 August 2023] John: Congratulations!", True),
        ("Maria: Me too. Talk to you soon.", True),
        # One name speaking a whole sentence.
        ("John: The Wolves are my team for sure.", True),
        # Fields: a label of two words, a short value, a lowercase value, a value of many.
        ("Job title: Design Lead at Lumen Health.", False),
        ("Bank: Corran Mutual.", False),
        ("Status: on leave", False),
        ("Allergies: peanuts, shellfish", False),
        ("Lives in Leeds.", False),
    ],
)
def test_what_reads_as_a_line_of_dialogue(text: str, spoken: bool) -> None:
    assert is_dialogue(text) is spoken


def test_a_line_of_dialogue_never_retires_another() -> None:
    """Words said at two times both stand, however sure the model is (the dates differ, so the
    lines would otherwise say they replace)."""
    case = Case(
        _new("[2 January 2024] Tim: That app is great."),
        (_old("[2 October 2023] Tim: Wow, what a week.", 0.8),),
        True,
    )
    assert decide(case, SURE).superseded == ()
    # The same two texts as fields of one label would replace: the guard is the dialogue, not the label.
    field = Case(_new("Tim: app"), (_old("Tim: week", 0.8),), True)
    assert [c.id for c in decide(field, SURE).superseded] == ["o1"]


@pytest.mark.parametrize(
    ("old", "new", "swapped"),
    [
        # One place, car or way to travel for another: two of one kind, in one frame.
        ("Lives in Valencia.", "Lives in Seville.", True),
        ("Drives a minivan to work", "Drives a convertible to work", True),
        ("Commutes by bus", "Commutes by train", True),
        # Names are of no kind WordNet knows: another person is another memory.
        (
            "Decided with Amara to move the billing service",
            "Decided with Bruno to move the billing service",
            False,
        ),
        # A frame that holds many values gains one.
        ("Speaks Dutch at home", "Speaks Korean at home", False),
        # Two values swapped: about something else.
        ("Sister lives in Oslo", "Brother lives in Rome", False),
        # Two of different kinds.
        ("Lives in Valencia.", "Lives in hope.", False),
    ],
)
def test_a_thing_swapped_for_another_of_its_kind_says_it_replaces(old: str, new: str, swapped: bool) -> None:
    assert one_of_a_kind_swapped(old, new) is swapped
    decision = decide(Case(_new(new), (_old(old, 0.8),), True), SURE)
    assert [c.id for c in decision.superseded] == (["o1"] if swapped else [])


def test_what_is_ruled_out_is_read_after_the_word_that_rules_it_out() -> None:
    index = {name: i for i, name in enumerate(FEATURES)}
    wine = "Has a glass of red wine with dinner"
    assert (
        pair_features("Never drinks alcohol", wine, 0.3, preference=False)[index["case_of_excluded"]] == 1.0
    )
    # Alcohol named before the word that rules something out is not what is ruled out.
    assert (
        pair_features("Alcohol is never served at home", wine, 0.3, preference=False)[
            index["case_of_excluded"]
        ]
        == 0.0
    )
    # Both sides ruling something out: nothing on either side is a case of the other's.
    assert (
        pair_features("Never drinks alcohol", "Never has red wine", 0.3, preference=False)[
            index["case_of_excluded"]
        ]
        == 0.0
    )
    # A definition rules out only against a side that rules nothing out itself.
    vegetarian = pair_features("Is vegetarian", "Loves a rare steak", 0.3, preference=False)
    assert vegetarian[index["ruled_out_by_definition"]] == 1.0
    assert (
        pair_features("Is vegetarian", "Never eats steak", 0.3, preference=False)[
            index["ruled_out_by_definition"]
        ]
        == 0.0
    )


@pytest.mark.parametrize(
    ("old", "new", "adds"),
    [
        ("Loves Thai food.", "Also really enjoys Ethiopian food.", True),
        ("Speaks Spanish.", "Has also started learning Italian.", True),
        ("Holds a UK passport.", "Holds an Irish passport as well.", True),
        # Said on both sides, or on neither: the words decide nothing.
        ("Also plays the cello.", "Also plays the viola.", False),
        ("Loves Thai food.", "Loves Ethiopian food now.", False),
    ],
)
def test_a_memory_that_says_it_adds_retires_nothing_and_asks_nothing(old: str, new: str, adds: bool) -> None:
    assert says_it_adds(old, new) is adds
    pref = MemoryType.PREFERENCE
    mine = decide(Case(_new(new, mtype=pref), (_old(old, 0.8, mtype=pref),), True), SURE)
    theirs = decide(Case(_new(new, mtype=pref), (_old(old, 0.8, mtype=pref, platform="gemini"),), True), SURE)
    assert [c.id for c in mine.superseded] == ([] if adds else ["o1"])
    assert [c.id for c in theirs.conflicts] == ([] if adds else ["o1"])


@pytest.mark.parametrize(
    ("old", "new", "preference", "allowed"),
    [
        ("Lives in Valencia.", "Lives in Seville.", False, True),
        ("The team uses Jira.", "The team switched to Linear.", False, True),
        # Two named people, two fields, one more thing that says it adds: never one retiring the other.
        ("Kofi works on the billing service.", "Ines works on the search service.", False, False),
        ("Morning tea: Assam.", "Evening tea: chamomile.", True, False),
        ("Loves Thai food.", "Also really enjoys Ethiopian food.", True, False),
        ("Loves Thai food.", "Loves Ethiopian food.", True, True),
        # A fact that does not say it replaces.
        (
            "Decided with Amara to move the billing service",
            "Decided with Bruno to move the billing service",
            False,
            False,
        ),
    ],
)
def test_what_one_assistant_may_retire_at_all(old: str, new: str, preference: bool, allowed: bool) -> None:
    """The gate the retire thresholds are trained on: however sure the pair model is, these stay."""
    assert may_retire(old, new, preference=preference) is allowed


@pytest.mark.parametrize(
    ("old", "new", "judged"),
    [
        # Nothing shared: the whole memories are judged.
        ("Lives in Leeds.", "Lives in Bristol.", ("Lives in Leeds.", "Lives in Bristol.")),
        # One says all the other says and more, or each adds a remark of its own: nothing to judge.
        ("Prefers rooibos in the morning.", "Prefers rooibos in the morning. Source: the all-hands.", None),
        (
            "Prefers rooibos in the morning. Camila agreed.",
            "Prefers rooibos in the morning. Source: Elif.",
            None,
        ),
        ("Lives in Leeds.", "lives in leeds", None),
        # What each says beyond the shared sentence is judged.
        (
            "Acme renews every March with 1,062 seats. (Acme account.)",
            "Acme renews every March with 1,211 seats. (Acme account.)",
            ("Acme renews every March with 1,062 seats.", "Acme renews every March with 1,211 seats."),
        ),
        # A title's full stop ends no sentence.
        ("Dentist is Dr. Hale.", "Dentist is Dr. Moss.", ("Dentist is Dr. Hale.", "Dentist is Dr. Moss.")),
    ],
)
def test_what_two_memories_that_share_a_sentence_can_disagree_on(
    old: str, new: str, judged: tuple[str, str] | None
) -> None:
    assert judged_texts(old, new) == judged


def test_a_shared_sentence_with_a_remark_of_its_own_asks_nothing_and_retires_nothing() -> None:
    old = "I prefer oat flat whites in the morning. Source: the quarterly review with Zanele."
    new = "I prefer oat flat whites in the morning. Camila agreed."
    pref = MemoryType.PREFERENCE
    for platform in ("claude", "gemini"):
        decision = decide(
            Case(_new(new, mtype=pref), (_old(old, 0.93, mtype=pref, platform=platform),), True), SURE
        )
        assert decision.superseded == () and decision.conflicts == ()
    # Beyond the shared sentence the two disagree: that is still asked about.
    theirs = _old("Works at Acme. Lives in Leeds.", 0.9, platform="gemini")
    decision = decide(Case(_new("Works at Acme. Lives in Bristol."), (theirs,), True), SURE)
    assert [c.id for c in decision.conflicts] == ["o1"]


def test_two_lines_of_dialogue_that_open_alike_retire_nothing() -> None:
    """They share their first sentence, and what each says beyond it is judged; whether one may
    retire the other is still read from the whole lines, which are words said at two times."""
    old = "[16 July 2023] John: Thanks! The running shoes feel great."
    new = "[16 July 2023] John: Thanks! The running shoes look odd on me."
    assert judged_texts(old, new) == ("The running shoes feel great.", "The running shoes look odd on me.")
    pref = MemoryType.PREFERENCE
    decision = decide(Case(_new(new, mtype=pref), (_old(old, 0.8, mtype=pref),), True), SURE)
    assert decision.superseded == ()
