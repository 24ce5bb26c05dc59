"""Merge the analyses into the terms stage B scores with, and decide whether the query is clear."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from deepcite.config import PractitionerSettings
from deepcite.practitioners.catalogue import contains_phrase, phrase_key
from deepcite.practitioners.schemas import ClinicalIntent, GeneralIntent

CLEAR_SPECIFICITIES = frozenset({"named_procedure", "confirmed_diagnosis"})


class MergedIntent(BaseModel):
    """What stage B matches against profiles.

    ``intent_terms``: the clinical analysis's terms (expansion terms, then likely subspecialties), then the
    general analysis's, de-duplicated in order (by their stemmed tokens) and without the anchor phrases.
    ``negative_terms`` are applied only when ``clear``: confidence >= ``clear_confidence`` and the
    specificity is named_procedure or confirmed_diagnosis. A negative term that contains, or is contained
    in, an intent term or anchor phrase is dropped.
    """

    q_patient: str
    intent_terms: list[str] = Field(default_factory=list)
    anchor_phrases: list[str] = Field(default_factory=list)
    negative_terms: list[str] = Field(default_factory=list)
    clear: bool = False
    confidence: float = 0.0


def _dedupe(terms: Iterable[str], exclude: set[tuple[str, ...]] | None = None) -> list[str]:
    seen = set(exclude or ())
    out: list[str] = []
    for term in terms:
        key = phrase_key(term)
        if key and key not in seen:
            seen.add(key)
            out.append(term)
    return out


def merge_intent(
    q_patient: str, general: GeneralIntent, clinical: ClinicalIntent, settings: PractitionerSettings
) -> MergedIntent:
    """Intent terms, anchors, negatives and clarity from the general and clinical analyses."""
    anchors = _dedupe(general.anchor_phrases)
    anchor_keys = {phrase_key(a) for a in anchors}
    terms = _dedupe(
        [
            *clinical.expansion_terms,
            *clinical.likely_subspecialties,
            *general.expansion_terms,
            *general.likely_subspecialties,
        ],
        exclude=anchor_keys,
    )
    positive = [phrase_key(t) for t in [*terms, *anchors]]
    negatives = [
        n
        for n in _dedupe([*clinical.negative_terms, *general.negative_terms])
        if not any(contains_phrase(p, phrase_key(n)) or contains_phrase(phrase_key(n), p) for p in positive)
    ]
    clear = general.confidence >= settings.clear_confidence and general.specificity in CLEAR_SPECIFICITIES
    return MergedIntent(
        q_patient=q_patient,
        intent_terms=terms,
        anchor_phrases=anchors,
        negative_terms=negatives,
        clear=clear,
        confidence=general.confidence,
    )
