"""The clinical intent catalogue: coverage of every specialty, well-formed triggers, safe negatives."""

from __future__ import annotations

import pytest

from deepcite.practitioners.catalogue import (
    TRIGGER_FIELDS,
    Catalogue,
    contains_phrase,
    match_intents,
    named_specialties,
    phrase_key,
)
from deepcite.practitioners.profiles import profile_text
from deepcite.practitioners.records import Practitioner
from deepcite.practitioners.taxonomy import Taxonomy
from deepcite.text import tokenize
from practitioners.conftest import SPECIALTIES

CATALOGUE = Catalogue.load()


def test_every_directory_specialty_is_covered_by_an_intent() -> None:
    covered = {s for i in CATALOGUE.intents for s in [*i.specialties, *i.related_specialties]}
    in_files = {line for line in SPECIALTIES.read_text(encoding="utf-8").splitlines() if line}
    assert in_files - covered == set()
    assert set(Taxonomy.load().specialties) - covered == set()


def test_intents_name_only_known_specialties_and_have_unique_ids() -> None:
    taxonomy = Taxonomy.load()
    unknown = {
        s
        for i in CATALOGUE.intents
        for s in [*i.specialties, *i.related_specialties]
        if not taxonomy.knows(s)
    }
    assert unknown == set()
    ids = [i.id for i in CATALOGUE.intents]
    assert len(ids) == len(set(ids))
    assert all(i.specialties for i in CATALOGUE.intents)


def test_every_phrase_survives_the_tokenizer() -> None:
    empty = []
    for intent in CATALOGUE.intents:
        phrases = [p for p, _ in intent.triggers()] + list(intent.abbreviations)
        phrases += intent.expansion_terms + intent.anchor_phrases + intent.negative_terms
        empty += [(intent.id, p) for p in phrases if not tokenize(p)]
    assert empty == []  # a phrase of stop words only could never match


def test_catalogue_settings_cover_every_trigger_kind() -> None:
    kinds = set(TRIGGER_FIELDS.values())
    assert kinds == set(CATALOGUE.trigger_weights) == set(CATALOGUE.specificity_of)
    assert set(CATALOGUE.specificity_of.values()) | {"none"} == set(CATALOGUE.confidence)


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("SVT", "arrhythmia_rhythm"),
        ("AFib", "arrhythmia_rhythm"),
        ("a-fib", "arrhythmia_rhythm"),
        ("CKD", "kidney"),
        ("COPD", "lung_breathing"),
        ("GERD", "digestive"),
        ("BPH", "urology"),
        ("my ACL", "orthopedic"),
        ("OSA", "sleep"),
    ],
)
def test_abbreviations_reach_their_intent(text: str, intent: str) -> None:
    matches = match_intents(text, CATALOGUE)
    assert matches and matches[0].intent.id == intent
    assert any(t.expansion for t in matches[0].triggers)


def test_longest_phrase_wins() -> None:
    matches = match_intents("chest pain", CATALOGUE)
    assert [m.intent.id for m in matches] == ["coronary_chest_pain"]  # not chronic_pain for "pain"


def test_two_word_triggers_match_in_either_order_within_the_window() -> None:
    def first(text: str, window: int | None) -> list[str]:
        return [m.intent.id for m in match_intents(text, CATALOGUE, window)][:2]

    assert first("someone to help me plan meals for my kidney disease", 1)[0] == "nutrition"  # "meal plan"
    assert first("someone to help me plan meals for my kidney disease", None)[0] == "kidney"
    surgery = "I need surgery to remove a cancerous lump in my breast"  # "cancer surgery", "lump removal"
    assert set(first(surgery, 1)) == {"general_surgery", "surgical_oncology"}
    # words further apart than the window are no phrase: a drooping face and an arm he can't lift
    assert "plastic_surgery" not in first("my dad's face is drooping and he can't lift his arm", 1)
    assert first("chest pain", 1) == ["coronary_chest_pain"]  # a contiguous phrase still wins
    # nor does a spread take a word a contiguous phrase further on holds: no "cancer screening" out of
    # "screening for colon cancer", no "gout in my toe" out of "gout in my big toe"
    assert "preventive_public_health" not in first("screening for colon cancer, I just turned 50", 1)
    assert first("gout in my big toe", 1) == ["rheumatology", "foot_ankle"]


def test_abbreviation_expansions_are_triggers_of_the_same_intent() -> None:
    loose = []
    for intent in CATALOGUE.intents:
        triggers = {phrase_key(p) for p, _ in intent.triggers()} | {
            phrase_key(t) for t in intent.expansion_terms
        }
        loose += [(intent.id, a) for a, e in intent.abbreviations.items() if phrase_key(e) not in triggers]
    assert loose == []


def test_negative_terms_never_hit_the_intents_own_best_specialists() -> None:
    taxonomy = Taxonomy.load()
    hits = []
    for intent in CATALOGUE.intents:
        for specialty in intent.specialties:
            doctor = Practitioner(npi="1234567893", name="X", primary_specialty=specialty)
            tokens = tokenize(profile_text(doctor, taxonomy))
            hits += [
                (intent.id, specialty, n)
                for n in intent.negative_terms
                if contains_phrase(tokens, phrase_key(n))
            ]
    assert hits == []


def test_anchor_phrases_reach_the_intents_best_specialists() -> None:
    taxonomy = Taxonomy.load()
    missing = []
    for intent in CATALOGUE.intents:
        doctor = Practitioner(npi="1234567893", name="X", primary_specialty=intent.specialties[0])
        tokens = tokenize(profile_text(doctor, taxonomy))
        if not any(contains_phrase(tokens, phrase_key(a)) for a in intent.anchor_phrases):
            missing.append(intent.id)
    assert missing == []


def test_named_specialties_are_what_the_patient_asked_for_by_name() -> None:
    asked = named_specialties("an anesthesiologist to talk about my epidural", CATALOGUE, ["specialty"])
    assert "ANESTHESIOLOGY" in asked
    # "vestibular therapy" is a procedure of physical therapy; "vertigo" a diagnosis the hearing intent shares
    text = "balance and vestibular therapy for vertigo"
    named = named_specialties(text, CATALOGUE, ["specialty", "procedure"])
    assert "PHYSICAL THERAPIST IN PRIVATE PRACTICE" in named and "QUALIFIED AUDIOLOGIST" not in named
    assert "QUALIFIED AUDIOLOGIST" in named_specialties(
        text, CATALOGUE, ["specialty", "procedure", "diagnosis"]
    )
