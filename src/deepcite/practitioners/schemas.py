"""The three query analyses' outputs, shared by the LLM and offline implementations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from deepcite.practitioners.catalogue import Specificity

Urgency = Literal["crisis", "emergency", "urgent", "routine"]


def _clean_terms(value: Any) -> list[str]:
    """Strings only, stripped, non-empty, first occurrence kept (case-insensitive)."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    out: list[str] = []
    seen: set[str] = set()
    for item in value:
        text = " ".join(str(item).split()) if item is not None else ""
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
    return out


class Insights(BaseModel):
    """What the conversation says about the patient."""

    symptoms: list[str] = Field(default_factory=list)
    preferences: list[str] = Field(default_factory=list)
    urgency: Urgency = "routine"
    specialty: str | None = None
    location: str | None = None
    population: str | None = None  # who the care is for: a catalogue population label ("child" …)
    summary: str = ""

    _terms = field_validator("symptoms", "preferences", mode="before")(_clean_terms)


class GeneralIntent(BaseModel):
    """How specific the request is and which words describe it."""

    goal: str = ""
    specificity: Specificity = "general"
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    expansion_terms: list[str] = Field(default_factory=list)
    negative_terms: list[str] = Field(default_factory=list)
    anchor_phrases: list[str] = Field(default_factory=list)
    likely_subspecialties: list[str] = Field(default_factory=list)

    _terms = field_validator(
        "expansion_terms", "negative_terms", "anchor_phrases", "likely_subspecialties", mode="before"
    )(_clean_terms)


class ClinicalIntent(BaseModel):
    """The clinical domain of the request."""

    primary_intent: str = "unknown"
    expansion_terms: list[str] = Field(default_factory=list)
    negative_terms: list[str] = Field(default_factory=list)
    likely_subspecialties: list[str] = Field(default_factory=list)

    _terms = field_validator("expansion_terms", "negative_terms", "likely_subspecialties", mode="before")(
        _clean_terms
    )


class AnalysisUse(BaseModel):
    """Which implementation produced an analysis, and why the LLM's answer was not used when it was not."""

    source: Literal["llm", "offline"]
    fallback_reason: str | None = None
