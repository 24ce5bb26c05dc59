"""How the offline intent weighs specialties and terms (issue 48, eighteenth session): the specialties that also
treat the intent, a secondary intent's terms, and a crisis before who the patient is; on the shipped catalogue."""

from __future__ import annotations

import pytest

from deepcite.config import PractitionerSettings
from deepcite.models import Chunk
from deepcite.practitioners.api import SpecialtyMatch
from deepcite.practitioners.catalogue import Catalogue, match_intents
from deepcite.practitioners.merge import merge_intent, secondary_terms, specialty_matches
from deepcite.practitioners.offline import Conversation, offline_clinical, offline_general, offline_insights
from deepcite.practitioners.ranking import PractitionerCandidate, stage_b
from deepcite.practitioners.records import Practitioner
from deepcite.practitioners.schemas import ClinicalIntent, GeneralIntent
from deepcite.practitioners.taxonomy import Taxonomy

CATALOGUE = Catalogue.load()
TAXONOMY = Taxonomy.load()
SETTINGS = PractitionerSettings()


def matches_for(*turns: str, settings: PractitionerSettings = SETTINGS) -> list[SpecialtyMatch]:
    """The specialty matches the offline analyses give a conversation (no semantic stage)."""
    conversation = Conversation(turns[-1], [("user", t) for t in turns[:-1]])
    return specialty_matches(
        [],
        insights=offline_insights(conversation, CATALOGUE, settings, []),
        general=offline_general(conversation, CATALOGUE, settings),
        clinical=offline_clinical(conversation, CATALOGUE, settings),
        clinical_from_llm=False,
        catalogue=CATALOGUE,
        taxonomy=TAXONOMY,
        known={s.upper() for s in TAXONOMY.specialties},
        settings=settings,
    )


def boosts(matches: list[SpecialtyMatch], source: str) -> dict[str, float]:
    return {m.specialty: m.boost for m in matches if m.source == source}


def test_the_specialties_that_also_treat_the_intent_are_boosted_after_its_best_fits() -> None:
    heart = CATALOGUE.by_id["heart_failure"]
    assert "CARDIOVASCULAR DISEASE (CARDIOLOGY)" in heart.related_specialties
    r = SETTINGS.ranking
    symptom = boosts(matches_for("I have swollen ankles"), "intent")
    assert symptom["ADVANCED HEART FAILURE AND TRANSPLANT CARDIOLOGY"] == pytest.approx(
        r.intent_specialty_boost
    )
    assert symptom["CARDIOVASCULAR DISEASE (CARDIOLOGY)"] == pytest.approx(
        r.intent_specialty_boost * r.related_specialty_factor
    )
    # a named diagnosis goes to its best fits first
    diagnosis = boosts(matches_for("my heart failure is getting worse"), "intent")
    assert diagnosis["CARDIOVASCULAR DISEASE (CARDIOLOGY)"] == pytest.approx(
        r.intent_specialty_boost * r.related_specialty_clear_factor
    )
    assert r.related_specialty_clear_factor < r.related_specialty_factor
    off = PractitionerSettings(ranking={"related_specialty_factor": 0.0})
    assert "CARDIOVASCULAR DISEASE (CARDIOLOGY)" not in boosts(
        matches_for("I have swollen ankles", settings=off), "intent"
    )


def test_a_childs_ordinary_illness_reaches_the_pediatric_variant_of_primary_care() -> None:
    # diarrhoea is the digestive intent's, which primary care also treats: for a child, pediatrics
    assert "FAMILY PRACTICE" in CATALOGUE.by_id["digestive"].related_specialties
    population = boosts(matches_for("my 2 year old has diarrhea"), "population")
    assert population["PEDIATRIC MEDICINE"] == pytest.approx(
        SETTINGS.ranking.population_boost + SETTINGS.ranking.population_variant_boost
    )


def test_a_crisis_comes_before_who_the_patient_is() -> None:
    matches = matches_for("my teenage daughter says she wants to kill herself")
    r = SETTINGS.ranking
    assert boosts(matches, "urgency")["PSYCHIATRY"] == pytest.approx(r.urgency_boost)
    own = boosts(matches, "population")["PEDIATRIC MEDICINE"]
    # its own boost and its variant of primary care (which also treats a child's needs), both scaled
    assert own == pytest.approx(
        (r.population_symptom_boost + r.population_variant_boost) * r.population_urgency_factor
    )
    calm = boosts(matches_for("my teenage daughter has a sore throat"), "population")["PEDIATRIC MEDICINE"]
    assert calm > own


def _candidate(npi: str, text: str) -> PractitionerCandidate:
    return PractitionerCandidate(
        Practitioner(npi=npi, name=npi), Chunk(chunk_id=npi, doc_id=npi, text=text), "intent_fill", None
    )


def test_terms_only_a_secondary_intent_brought_weigh_less() -> None:
    top = CATALOGUE.by_id["heart_failure"]
    clinical = ClinicalIntent(expansion_terms=[*top.expansion_terms, "lungs and airways", "pulmonologist"])
    general = GeneralIntent(specificity="symptom", confidence=0.6, expansion_terms=["swollen legs"])
    merged = merge_intent("q", general, clinical, SETTINGS)
    merged.secondary_terms = secondary_terms(merged.intent_terms, top, general.expansion_terms)
    assert merged.secondary_terms == ["lungs and airways", "pulmonologist"]
    lungs = _candidate("1000000001", "a pulmonologist treats the lungs and airways")
    heart = _candidate("1000000002", "heart failure and swollen legs")
    stage_b([lungs, heart], merged, SETTINGS)
    factor = SETTINGS.ranking.secondary_term_factor
    assert lungs.score == pytest.approx(2 * 0.3 * factor)
    assert heart.score == pytest.approx(
        2 * 0.3
    )  # "heart failure" is the best intent's, "swollen legs" the patient's


@pytest.mark.parametrize(
    ("text", "first"),
    [("my eyes and skin have turned yellow", "digestive"), ("my baby's skin is yellow", "digestive")],
)
def test_yellow_skin_reads_as_jaundice(text: str, first: str) -> None:
    assert match_intents(text, CATALOGUE)[0].intent.id == first


def test_cannot_bend_a_knee_is_no_diving_sickness() -> None:
    found = [
        m.intent.id for m in match_intents("I had a knee replacement and still can't bend it", CATALOGUE)
    ]
    assert "hyperbaric_wound" not in found and found[0] == "orthopedic"
