"""The three analyses: offline from the catalogue, LLM with timeout and fallback, run in parallel."""

from __future__ import annotations

import json

import pytest

from deepcite.config import PractitionerSettings
from deepcite.practitioners.analysis import run_analyses
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.offline import Conversation, offline_clinical, offline_general, offline_insights
from practitioners.conftest import RemoteLLMStandIn

CATALOGUE = Catalogue.load()
SETTINGS = PractitionerSettings()
CITIES = ["BANGOR", "PORTLAND", "SOUTH PORTLAND"]


def general(text: str):  # noqa: ANN201
    return offline_general(Conversation(text), CATALOGUE, SETTINGS)


def test_named_procedure_is_clear_and_anchored() -> None:
    result = general("I need SVT ablation")
    assert result.specificity == "named_procedure"
    assert result.confidence >= SETTINGS.analysis.clear_confidence
    assert "cardiac electrophysiology" in result.anchor_phrases
    assert "svt ablation" in result.expansion_terms
    assert result.likely_subspecialties == ["CARDIAC ELECTROPHYSIOLOGY"]


def test_symptom_and_diagnosis_specificity() -> None:
    assert general("I have chest pain when I climb stairs").specificity == "symptom"
    confirmed = general("I was diagnosed with CKD")
    assert confirmed.specificity == "confirmed_diagnosis"
    assert "chronic kidney disease" in confirmed.expansion_terms  # the abbreviation, expanded


def test_uncertainty_downgrades_a_diagnosis() -> None:
    assert general("I think I might have AFib").specificity == "symptom"


def test_vague_request_has_low_confidence() -> None:
    result = general("I need a doctor")
    assert result.specificity == "general"
    assert result.confidence < SETTINGS.analysis.clear_confidence


def test_clinical_intent_reads_the_catalogue() -> None:
    clinical = offline_clinical(Conversation("my COPD is getting worse"), CATALOGUE, SETTINGS)
    assert clinical.primary_intent == "lung_breathing"
    assert "pulmonary disease" in clinical.expansion_terms
    assert clinical.likely_subspecialties[0] == "PULMONARY DISEASE"


def test_earlier_messages_count() -> None:
    conversation = Conversation(
        "who should I see?", [("user", "I keep getting palpitations"), ("assistant", "ok")]
    )
    assert offline_clinical(conversation, CATALOGUE, SETTINGS).primary_intent == "arrhythmia_rhythm"


@pytest.mark.parametrize(
    ("text", "urgency"),
    [
        ("I can't breathe and my chest hurts", "emergency"),
        ("I feel suicidal", "crisis"),
        ("need a dermatologist asap", "urgent"),
        ("ingrown toenail", "routine"),
    ],
)
def test_urgency(text: str, urgency: str) -> None:
    assert offline_insights(Conversation(text), CATALOGUE, SETTINGS, CITIES).urgency == urgency
    assert (CATALOGUE.urgency_note(urgency) is None) == (urgency == "routine")


def test_insights_symptoms_preferences_and_city() -> None:
    insights = offline_insights(
        Conversation("female doctor near South Portland, my heart keeps racing and I have palpitations"),
        CATALOGUE,
        SETTINGS,
        CITIES,
    )
    assert "palpitations" in insights.symptoms
    assert "female practitioner" in insights.preferences
    assert insights.location == "South Portland"
    assert insights.specialty == "CARDIAC ELECTROPHYSIOLOGY"


def test_a_city_name_without_a_location_cue_is_not_a_location() -> None:
    insights = offline_insights(Conversation("portland cement allergy"), CATALOGUE, SETTINGS, CITIES)
    assert insights.location is None


def _replies() -> dict[str, str]:
    return {
        "insights": json.dumps(
            {
                "symptoms": ["racing heart"],
                "preferences": [],
                "urgency": "routine",
                "specialty": "Cardiac electrophysiology",
                "location": None,
                "population": None,
                "summary": "Wants an ablation for SVT.",
            }
        ),
        "general": "Here you go:\n```json\n"
        + json.dumps(
            {
                "goal": "SVT ablation",
                "specificity": "named_procedure",
                "confidence": 0.95,
                "expansion_terms": ["catheter ablation"] * 40,
                "negative_terms": ["pediatric"],
                "anchor_phrases": ["cardiac electrophysiology"],
                "likely_subspecialties": ["CARDIAC ELECTROPHYSIOLOGY"],
            }
        )
        + "\n```",
        "clinical": json.dumps(
            {
                "primary_intent": "arrhythmia_rhythm",
                "expansion_terms": ["electrophysiology", "arrhythmia"],
                "negative_terms": [],
                "likely_subspecialties": ["CARDIAC ELECTROPHYSIOLOGY"],
            }
        ),
    }


async def test_llm_analyses_run_together_and_are_used() -> None:
    llm = RemoteLLMStandIn(_replies())
    result = await run_analyses(
        Conversation("I need SVT ablation"),
        catalogue=CATALOGUE,
        settings=SETTINGS,
        cities=CITIES,
        specialties=["CARDIAC ELECTROPHYSIOLOGY"],
        llm=llm,
    )
    assert sorted(llm.calls) == ["clinical", "general", "insights"]
    assert {name: use.source for name, use in result.used.items()} == {
        "insights": "llm",
        "general": "llm",
        "clinical": "llm",
    }
    assert result.general.confidence == 0.95
    assert result.general.expansion_terms == ["catheter ablation"]  # de-duplicated
    assert result.insights.summary == "Wants an ablation for SVT."


async def test_unusable_reply_falls_back_to_offline_with_the_reason() -> None:
    replies = _replies()
    replies["clinical"] = "I am not able to answer in JSON."
    replies["general"] = json.dumps({"goal": "x", "specificity": "very", "confidence": 2})
    result = await run_analyses(
        Conversation("I need SVT ablation"),
        catalogue=CATALOGUE,
        settings=SETTINGS,
        cities=CITIES,
        specialties=[],
        llm=RemoteLLMStandIn(replies),
    )
    assert result.used["insights"].source == "llm"
    assert result.used["general"].source == "offline" and "does not match" in str(
        result.used["general"].fallback_reason
    )
    assert result.used["clinical"].source == "offline" and result.used["clinical"].fallback_reason
    assert result.clinical.primary_intent == "arrhythmia_rhythm"  # from the offline catalogue


async def test_timeouts_and_errors_fall_back_to_offline() -> None:
    fast = PractitionerSettings().tuned(analysis={"timeout_s": 0.05})
    hung = await run_analyses(
        Conversation("CKD"),
        catalogue=CATALOGUE,
        settings=fast,
        cities=CITIES,
        specialties=[],
        llm=RemoteLLMStandIn(hang=True),
    )
    assert all(use.source == "offline" for use in hung.used.values())
    assert "did not answer within 0.05s" in str(hung.used["general"].fallback_reason)
    assert hung.clinical.primary_intent == "kidney"
    failed = await run_analyses(
        Conversation("CKD"),
        catalogue=CATALOGUE,
        settings=SETTINGS,
        cities=CITIES,
        specialties=[],
        llm=RemoteLLMStandIn(fail=True),
    )
    assert "HTTP 503" in str(failed.used["insights"].fallback_reason)
