"""Request and response records of the practitioner search (the HTTP route's JSON shape).

Request: ``{userQuery, messages?, location?, locationMode?, limit?}``; ``location`` is either
``{city, state, zip}`` or a string such as ``"Portland, ME"``; ``messages`` are the earlier turns (user and
assistant), oldest first. Response: ``{emergency, results, specialties, intent: {q_patient, intent_terms,
anchor_phrases, negative_terms, clear, insights, general, clinical}, timings_ms: {analysis, semantic, stage_a,
stage_b}, analysis_used, reason, notes, location, debug: {stage_a_candidates, on_intent, filled_from_intent,
fill_reason, candidates}}``; ``emergency`` comes first and is set for crisis and emergency requests. Each result
carries its ``reasons`` (patient-facing words) and its ``explanation`` (every score part, for developers).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deepcite.practitioners.location import Location, Proximity
from deepcite.practitioners.records import PractitionerProfile
from deepcite.practitioners.schemas import AnalysisUse, ClinicalIntent, GeneralIntent, Insights
from deepcite.validation import InputModel


class ChatMessage(BaseModel):
    """One earlier turn of the conversation."""

    role: Literal["user", "assistant", "system"]
    content: str


class PractitionerQuery(InputModel):
    """A patient's request (every text valid Unicode; an empty or over-long one is refused by the finder)."""

    model_config = ConfigDict(populate_by_name=True)

    user_query: str = Field(alias="userQuery", description="The patient's request in their own words.")
    messages: list[ChatMessage] = Field(default_factory=list, description="Earlier turns, oldest first.")
    location: Location | str | None = None
    location_mode: Literal["filter", "nearby"] = Field(
        default="filter",
        alias="locationMode",
        description="filter: only practitioners at the location; nearby: everyone, nearest first.",
    )
    limit: int | None = Field(default=None, ge=1, le=100, description="Results wanted (default: setting).")


AdjustmentKind = Literal[
    "bm25",
    "rating",
    "reviews",
    "experience",
    "intent_term",
    "anchor_phrase",
    "negative_term",
    "specialty",
    "floor",
    "reserved_slot",
]


class Adjustment(BaseModel):
    """One part of a result's score: the BM25 base, a quality boost, an intent or specialty boost, the
    stage-B floor, or a penalty; ``term`` says which term, phrase or specialty earned it."""

    kind: AdjustmentKind
    value: float
    term: str | None = None


class SpecialtyMatch(BaseModel):
    """A specialty the request points to and why: the semantic stage (with the similarity and the NUCC
    definition sentence, name or cue that matched), the LLM, the offline clinical intent (its best-fit
    specialties), the population the care is for (a negative boost: not for them), or urgency."""

    specialty: str
    source: Literal["semantic", "llm", "intent", "population", "urgency"]
    boost: float = Field(description="Added to the score of every practitioner of this specialty.")
    similarity: float | None = None
    matched_text: str | None = None
    matched_kind: str | None = Field(default=None, description="name, definition or cue (semantic only).")
    definition: str | None = Field(default=None, description="The specialty in plain words (NUCC).")


class Emergency(BaseModel):
    """Guidance shown before any result for a crisis or an emergency."""

    level: Literal["crisis", "emergency"]
    guidance: str
    cues: list[str] = Field(default_factory=list, description="The patient's words that signalled it.")


class PractitionerResult(PractitionerProfile):
    """A practitioner in the results, with every reason for their place."""

    years_of_experience: int | None = None
    rating: float | None = None
    review_count: int | None = None
    score: float
    stage_a_score: float
    bm25: float | None = Field(description="Stage A BM25 on the patient's words; None if filled from intent.")
    source: Literal["stage_a", "intent_fill", "specialty_fill"]
    matched_intent: str | None = Field(default=None, description="The clinical intent behind the request.")
    matched_intent_terms: list[str] = Field(default_factory=list)
    matched_anchor_phrases: list[str] = Field(default_factory=list)
    matched_negative_terms: list[str] = Field(default_factory=list)
    adjustments: list[Adjustment] = Field(default_factory=list)
    specialty_matches: list[SpecialtyMatch] = Field(
        default_factory=list, description="The request's specialty matches this practitioner's specialty met."
    )
    specialty_definition: str | None = Field(
        default=None, description="The primary specialty in plain words."
    )
    reasons: list[str] = Field(
        default_factory=list, description="Why this practitioner fits, in words a patient reads (no scores)."
    )
    explanation: list[str] = Field(
        default_factory=list, description="Every score part behind the place, step by step (for developers)."
    )
    proximity: Proximity | None = None


class IntentTerms(BaseModel):
    """What a request is taken to ask for: the patient's words, the terms and phrases profiles are matched
    on, the terms that count against a profile, and whether the request is clear enough to apply those."""

    q_patient: str
    intent_terms: list[str] = Field(default_factory=list)
    anchor_phrases: list[str] = Field(default_factory=list)
    negative_terms: list[str] = Field(default_factory=list)
    clear: bool = False


class IntentReport(IntentTerms):
    """The merged intent and the three analyses it came from."""

    insights: Insights
    general: GeneralIntent
    clinical: ClinicalIntent


class Timings(BaseModel):
    """Milliseconds spent in each step."""

    analysis: float
    stage_a: float
    stage_b: float
    semantic: float = 0.0


class SearchDebug(BaseModel):
    """How the pipeline reached the results, for developers and logs; never shown to a patient."""

    stage_a_candidates: int = 0  # BM25 hits on the patient's words
    on_intent: int = 0  # of those, the ones fitting the intent
    filled_from_intent: bool = False
    fill_reason: str | None = None
    candidates: int = 0  # every candidate stage B ranked (stage A, fills)


class PractitionerSearchResponse(BaseModel):
    """Results, the intent behind them, timings, and how the answer was reached."""

    emergency: Emergency | None = Field(
        default=None, description="Read this first: crisis/emergency guidance."
    )
    results: list[PractitionerResult]
    specialties: list[SpecialtyMatch] = Field(
        default_factory=list, description="Specialties the request met."
    )
    intent: IntentReport
    timings_ms: Timings
    analysis_used: dict[str, AnalysisUse]
    reason: str | None = Field(default=None, description="Why the results are empty, when they are.")
    notes: list[str] = Field(
        default_factory=list, description="What the patient should know (urgency, place)."
    )
    location: Location | None = None
    debug: SearchDebug = Field(
        default_factory=SearchDebug, description="The pipeline's counts, for developers."
    )
