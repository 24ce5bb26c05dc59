"""Merge rules, quality boosts, the negative penalty and nearby-first ordering."""

from __future__ import annotations

import pytest

from deepcite.config import PractitionerSettings
from deepcite.models import Chunk
from deepcite.practitioners.api import Adjustment
from deepcite.practitioners.location import Location, parse_location
from deepcite.practitioners.merge import merge_intent
from deepcite.practitioners.ranking import (
    PractitionerCandidate,
    negative_penalty,
    order_nearby,
    quality_boosts,
    stage_b,
)
from deepcite.practitioners.records import Practitioner
from deepcite.practitioners.schemas import ClinicalIntent, GeneralIntent

SETTINGS = PractitionerSettings()


def test_merge_orders_clinical_then_general_and_deduplicates() -> None:
    general = GeneralIntent(
        specificity="named_procedure",
        confidence=0.9,
        expansion_terms=["Cardiology", "ablation"],
        anchor_phrases=["cardiac electrophysiology"],
        negative_terms=["pediatric", "cardiology clinic"],
        likely_subspecialties=["CARDIAC ELECTROPHYSIOLOGY"],
    )
    clinical = ClinicalIntent(
        expansion_terms=["electrophysiology", "cardiology"],
        negative_terms=["transplant"],
        likely_subspecialties=["CARDIOVASCULAR DISEASE (CARDIOLOGY)"],
    )
    merged = merge_intent("svt ablation", general, clinical, SETTINGS)
    assert merged.intent_terms == [
        "electrophysiology",
        "cardiology",
        "CARDIOVASCULAR DISEASE (CARDIOLOGY)",
        "ablation",
    ]
    assert merged.anchor_phrases == ["cardiac electrophysiology"]  # and no longer among the intent terms
    assert merged.negative_terms == ["transplant", "pediatric"]  # "cardiology clinic" overlaps an intent term
    assert merged.clear is True


@pytest.mark.parametrize(
    ("specificity", "confidence", "clear"),
    [
        ("named_procedure", 0.75, True),
        ("confirmed_diagnosis", 0.8, True),
        ("named_procedure", 0.74, False),
        ("symptom", 0.99, False),
        ("general", 0.9, False),
    ],
)
def test_clear_needs_confidence_and_specificity(specificity: str, confidence: float, clear: bool) -> None:
    general = GeneralIntent(specificity=specificity, confidence=confidence)  # type: ignore[arg-type]
    assert merge_intent("q", general, ClinicalIntent(), SETTINGS).clear is clear


def test_quality_boosts_are_bounded_and_follow_the_formula() -> None:
    top = Practitioner(npi="1234567893", name="A", rating=5.0, review_count=10_000, graduation_year=1950)
    boosts = {a.kind: a.value for a in quality_boosts(top, SETTINGS, 2025)}
    assert boosts == pytest.approx({"rating": 0.3, "reviews": 0.2, "experience": 0.2})
    mid = Practitioner(npi="1234567893", name="A", rating=2.5, review_count=22, graduation_year=2010)
    boosts = {a.kind: a.value for a in quality_boosts(mid, SETTINGS, 2025)}
    assert boosts["rating"] == pytest.approx(0.15)
    assert 0 < boosts["reviews"] < 0.2
    assert boosts["experience"] == pytest.approx(0.2 * 15 / 30)
    assert quality_boosts(Practitioner(npi="1234567893", name="A"), SETTINGS, 2025) == []


def test_negative_penalty_scales_with_confidence() -> None:
    assert negative_penalty(0.75, SETTINGS) == pytest.approx(1.0)
    assert negative_penalty(1.0, SETTINGS) == pytest.approx(3.0)
    assert negative_penalty(0.875, SETTINGS) == pytest.approx(2.0)


def _candidate(npi: str, text: str, city: str = "BANGOR", bm25: float = 0.0) -> PractitionerCandidate:
    p = Practitioner(npi=npi, name=npi, city=city, state="ME", zip="04401")
    c = PractitionerCandidate(p, Chunk(chunk_id=npi, doc_id=npi, text=text), "stage_a", bm25)
    c.adjustments.append(Adjustment(kind="bm25", value=bm25))
    return c


def test_stage_b_adds_every_boost_and_applies_negatives_only_when_clear() -> None:
    general = GeneralIntent(specificity="named_procedure", confidence=1.0, anchor_phrases=["heart rhythms"])
    clinical = ClinicalIntent(
        expansion_terms=["electrophysiology", "cardiology"], negative_terms=["transplant"]
    )
    merged = merge_intent("q", general, clinical, SETTINGS)
    ep = _candidate("1000000001", "Clinical Cardiac Electrophysiology: evaluate heart rhythms", bm25=0.2)
    tx = _candidate("1000000002", "cardiology of heart transplant patients", bm25=1.0)
    ranked = stage_b([tx, ep], merged, SETTINGS)
    assert [c.npi for c in ranked] == ["1000000001", "1000000002"]
    assert ep.matched_terms == ["electrophysiology"] and ep.matched_anchors == ["heart rhythms"]
    assert ep.score == pytest.approx(0.2 + 0.3 + 0.5)
    assert [(a.kind, a.term) for a in tx.adjustments][-1] == ("negative_term", "transplant")
    assert tx.score == pytest.approx(1.0 + 0.3 - 3.0)

    unclear = merge_intent("q", GeneralIntent(specificity="symptom", confidence=0.6), clinical, SETTINGS)
    tx2 = _candidate("1000000002", "cardiology of heart transplant patients", bm25=1.0)
    stage_b([tx2], unclear, SETTINGS)
    assert tx2.matched_negatives == ["transplant"] and tx2.score == pytest.approx(1.3)


def test_nearby_first_keeps_score_order_within_a_tier() -> None:
    far_best = _candidate("1000000001", "", city="BANGOR", bm25=1.0)
    near = _candidate("1000000002", "", city="PORTLAND", bm25=0.8)
    weak_near = _candidate("1000000003", "", city="PORTLAND", bm25=0.1)
    ordered = order_nearby([far_best, near, weak_near], Location(city="Portland", state="ME"), SETTINGS)
    assert [c.npi for c in ordered] == ["1000000002", "1000000001", "1000000003"]


@pytest.mark.parametrize(
    ("text", "city", "state", "zip_code"),
    [
        ("Portland, ME 04101", "PORTLAND", "ME", "04101"),
        ("South Portland Maine", "SOUTH PORTLAND", "ME", None),
        ("04401", None, None, "04401"),
        ("bangor", "BANGOR", None, None),
    ],
)
def test_parse_location(text: str, city: str | None, state: str | None, zip_code: str | None) -> None:
    location = parse_location(text)
    assert (location.city, location.state, location.zip) == (city, state, zip_code)


def test_unknown_state_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown US state"):
        Location(state="Atlantis")


def test_intent_terms_count_up_to_their_cap() -> None:
    clinical = ClinicalIntent(expansion_terms=["pregnancy", "childbirth", "postpartum", "labor", "newborn"])
    merged = merge_intent("q", GeneralIntent(specificity="symptom", confidence=0.6), clinical, SETTINGS)
    wordy = "pregnancy, childbirth, postpartum, labor and newborn care"
    many = _candidate("1000000003", wordy)
    stage_b([many], merged, SETTINGS)
    assert SETTINGS.ranking.max_intent_terms == 4
    assert len(many.matched_terms) == 5 and many.score == pytest.approx(4 * 0.3)
    uncapped = PractitionerSettings(ranking={"max_intent_terms": None})
    every = _candidate("1000000003", wordy)
    stage_b([every], merged, uncapped)
    assert every.score == pytest.approx(5 * 0.3)
