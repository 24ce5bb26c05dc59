"""The two stages: BM25 on the patient's words with bounded quality boosts (A), intent rescoring (B).

Stage A score = BM25 / best BM25 in the list (0..1) + rating boost + reviews boost + experience boost:

- rating:     ``rating_boost_max * rating / 5``
- reviews:    ``reviews_boost_max * min(1, log(1 + reviews) / log(1 + reviews_saturation))``
- experience: ``experience_boost_max * min(1, years since graduation / experience_saturation_years)``

so quality never adds more than the three maxima together (0.7 by default). Candidates added from the
intent terms (the fill) have no BM25 part: they did not match the patient's words.

Stage B adds ``intent_term_boost`` per intent term and ``anchor_phrase_boost`` per anchor phrase found in
the profile, and, only when the query is clear, subtracts per negative term found a penalty that grows
linearly from ``negative_penalty_min`` at ``clear_confidence`` to ``negative_penalty_max`` at confidence 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from deepcite.config import PractitionerSettings
from deepcite.models import Chunk, Filters
from deepcite.practitioners.api import Adjustment
from deepcite.practitioners.catalogue import contains_phrase, phrase_key
from deepcite.practitioners.index import ProfileIndex
from deepcite.practitioners.location import PROXIMITY_TIERS, Location
from deepcite.practitioners.merge import MergedIntent
from deepcite.practitioners.records import Practitioner
from deepcite.text import tokenize

PractitionerLookup = Callable[[Iterable[str]], dict[str, Practitioner]]


@dataclass
class Candidate:
    """A practitioner under consideration, with every score part it earned."""

    practitioner: Practitioner
    chunk: Chunk
    source: str  # "stage_a" | "intent_fill"
    bm25: float | None
    adjustments: list[Adjustment] = field(default_factory=list)
    matched_terms: list[str] = field(default_factory=list)
    matched_anchors: list[str] = field(default_factory=list)
    matched_negatives: list[str] = field(default_factory=list)

    @property
    def npi(self) -> str:
        return self.practitioner.npi

    @property
    def score(self) -> float:
        return sum(a.value for a in self.adjustments)

    @property
    def stage_a_score(self) -> float:
        return sum(a.value for a in self.adjustments if a.kind in ("bm25", "rating", "reviews", "experience"))


def quality_boosts(practitioner: Practitioner, settings: PractitionerSettings, year: int) -> list[Adjustment]:
    """The bounded rating, reviews and experience boosts (only those the record has data for)."""
    out: list[Adjustment] = []
    if practitioner.rating is not None:
        out.append(Adjustment(kind="rating", value=settings.rating_boost_max * practitioner.rating / 5.0))
    if practitioner.review_count:
        share = math.log1p(practitioner.review_count) / math.log1p(settings.reviews_saturation)
        out.append(Adjustment(kind="reviews", value=settings.reviews_boost_max * min(1.0, share)))
    years = practitioner.years_of_experience(year)
    if years:
        share = years / settings.experience_saturation_years
        out.append(Adjustment(kind="experience", value=settings.experience_boost_max * min(1.0, share)))
    return out


def _candidates(
    hits: list[tuple[Chunk, float]],
    practitioners: dict[str, Practitioner],
    settings: PractitionerSettings,
    year: int,
    *,
    source: str,
) -> list[Candidate]:
    best = max((score for _, score in hits), default=0.0)
    out: list[Candidate] = []
    for chunk, score in hits:
        practitioner = practitioners.get(chunk.doc_id)
        if practitioner is None:  # the index lags the directory; the next sync removes it
            continue
        candidate = Candidate(practitioner, chunk, source, score if source == "stage_a" else None)
        if source == "stage_a" and best > 0:
            candidate.adjustments.append(Adjustment(kind="bm25", value=score / best))
        candidate.adjustments.extend(quality_boosts(practitioner, settings, year))
        out.append(candidate)
    return out


def stage_a(
    index: ProfileIndex,
    practitioners_of: PractitionerLookup,
    q_patient: str,
    settings: PractitionerSettings,
    filters: Filters | None,
    year: int,
) -> list[Candidate]:
    """BM25 on the patient's words (top ``stage_a_k``), re-ordered by BM25 share plus quality boosts."""
    hits = index.search(q_patient, settings.stage_a_k, filters) if q_patient.strip() else []
    practitioners = practitioners_of(chunk.doc_id for chunk, _ in hits)
    candidates = _candidates(hits, practitioners, settings, year, source="stage_a")
    return sorted(candidates, key=lambda c: -c.stage_a_score)


def match_intent(candidate: Candidate, merged: MergedIntent) -> None:
    """Record which intent terms, anchor phrases and negative terms the candidate's profile contains."""
    tokens = tokenize(candidate.chunk.text)
    candidate.matched_terms = [t for t in merged.intent_terms if contains_phrase(tokens, phrase_key(t))]
    candidate.matched_anchors = [a for a in merged.anchor_phrases if contains_phrase(tokens, phrase_key(a))]
    candidate.matched_negatives = [n for n in merged.negative_terms if contains_phrase(tokens, phrase_key(n))]


def on_intent(candidate: Candidate, settings: PractitionerSettings) -> bool:
    """Whether a candidate fits the intent: enough intent terms, or any anchor phrase."""
    return bool(candidate.matched_anchors) or len(candidate.matched_terms) >= max(
        1, settings.fill_min_intent_matches
    )


def fill_phrases(merged: MergedIntent) -> list[str]:
    """What the fill searches for, one BM25 query each: the anchor phrases, then the intent terms."""
    return [*merged.anchor_phrases, *merged.intent_terms]


def fill_candidates(
    index: ProfileIndex,
    practitioners_of: PractitionerLookup,
    merged: MergedIntent,
    existing: set[str],
    settings: PractitionerSettings,
    filters: Filters | None,
    year: int,
) -> list[Candidate]:
    """Up to ``stage_a_k`` new candidates from one BM25 search per anchor phrase and intent term, taken in
    turn (best hit of each phrase, then the second of each …) so that a phrase shared by a large specialty
    does not crowd out a small one; fill candidates have no BM25 part."""
    ranked = [index.search(phrase, settings.stage_a_k, filters) for phrase in fill_phrases(merged)]
    seen = set(existing)
    picked: list[tuple[Chunk, float]] = []
    for depth in range(settings.stage_a_k):
        for hits in ranked:
            if depth < len(hits) and hits[depth][0].doc_id not in seen and len(picked) < settings.stage_a_k:
                seen.add(hits[depth][0].doc_id)
                picked.append(hits[depth])
    practitioners = practitioners_of(chunk.doc_id for chunk, _ in picked)
    return _candidates(picked, practitioners, settings, year, source="intent_fill")


def negative_penalty(confidence: float, settings: PractitionerSettings) -> float:
    """The penalty per negative term at this confidence (min at the clear threshold, max at 1.0)."""
    span = max(1e-9, 1.0 - settings.clear_confidence)
    share = min(1.0, max(0.0, (confidence - settings.clear_confidence) / span))
    return (
        settings.negative_penalty_min
        + (settings.negative_penalty_max - settings.negative_penalty_min) * share
    )


def stage_b(
    candidates: list[Candidate], merged: MergedIntent, settings: PractitionerSettings
) -> list[Candidate]:
    """Add intent and anchor boosts (and negative penalties when the query is clear); best first."""
    penalty = negative_penalty(merged.confidence, settings)
    for candidate in candidates:
        match_intent(candidate, merged)
        for term in candidate.matched_terms:
            candidate.adjustments.append(
                Adjustment(kind="intent_term", term=term, value=settings.intent_term_boost)
            )
        for anchor in candidate.matched_anchors:
            candidate.adjustments.append(
                Adjustment(kind="anchor_phrase", term=anchor, value=settings.anchor_phrase_boost)
            )
        if merged.clear:
            for negative in candidate.matched_negatives:
                candidate.adjustments.append(Adjustment(kind="negative_term", term=negative, value=-penalty))
    return sorted(candidates, key=lambda c: (-c.score, -c.stage_a_score, c.npi))


def order_nearby(
    candidates: list[Candidate], location: Location, settings: PractitionerSettings
) -> list[Candidate]:
    """Nearest first among candidates scoring at least ``nearby_min_score_ratio`` of the best; the rest after.

    Within a proximity tier the score order is kept.
    """
    if not candidates:
        return candidates
    floor = candidates[0].score * settings.nearby_min_score_ratio if candidates[0].score > 0 else 0.0
    strong = [c for c in candidates if c.score >= floor]
    weak = [c for c in candidates if c.score < floor]
    strong.sort(
        key=lambda c: PROXIMITY_TIERS[location.proximity(c.practitioner)]
    )  # stable: keeps score order
    return strong + weak
