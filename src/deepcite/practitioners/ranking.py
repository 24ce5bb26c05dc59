"""The two stages: BM25 on the patient's words with bounded quality boosts (A), intent rescoring (B).

Stage A score = BM25 / best BM25 in the list (0..1) + rating boost + reviews boost + experience boost:

- rating:     ``quality.rating_boost_max * rating / 5``
- reviews:    ``quality.reviews_boost_max * min(1, log(1 + reviews) / log(1 + reviews_saturation))``
- experience: ``quality.experience_boost_max * min(1, years since graduation / experience_saturation_years)``

so quality never adds more than the three maxima together (0.7 by default). Candidates added from the
intent terms (the fill) have no BM25 part: they did not match the patient's words.

Stage B adds ``ranking.intent_term_boost`` per intent term (times ``ranking.secondary_term_factor`` for a term only
a secondary offline intent brought; the ``ranking.max_intent_terms`` weightiest the profile contains, so a specialty
whose definition repeats many of them does not outrank the one the request is for) and ``ranking.anchor_phrase_boost`` per anchor phrase found in
the profile, each specialty match's boost to the practitioners of that specialty (semantic stage, LLM,
population, urgency), and, only when the query is clear, subtracts per negative term found a penalty that
grows linearly from ``ranking.negative_penalty_min`` at ``analysis.clear_confidence`` to ``ranking.negative_penalty_max`` at
confidence 1. Then the floor: a stage-A candidate with a strong BM25 part (at least
``floor.min_bm25_share``) whose profile literally contains an anchor phrase the patient wrote, or whose
specialty the patient asked for by name (see ``floor.named_by``), is lifted to ``floor.ratio`` of the best
score (by at most ``floor.max_lift``), so stage B never buries a strong literal match of what was asked for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from deepcite.config import PractitionerSettings
from deepcite.models import Chunk, Filters
from deepcite.practitioners.api import Adjustment, SpecialtyMatch
from deepcite.practitioners.catalogue import contains_phrase, phrase_key
from deepcite.practitioners.index import ProfileIndex
from deepcite.practitioners.location import PROXIMITY_TIERS, Location
from deepcite.practitioners.merge import MergedIntent
from deepcite.practitioners.profiles import profile_chunk
from deepcite.practitioners.records import Practitioner
from deepcite.practitioners.taxonomy import Taxonomy
from deepcite.text import tokenize

PractitionerLookup = Callable[[Iterable[str]], dict[str, Practitioner]]


@dataclass
class PractitionerCandidate:
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
        out.append(
            Adjustment(kind="rating", value=settings.quality.rating_boost_max * practitioner.rating / 5.0)
        )
    if practitioner.review_count:
        share = math.log1p(practitioner.review_count) / math.log1p(settings.quality.reviews_saturation)
        out.append(Adjustment(kind="reviews", value=settings.quality.reviews_boost_max * min(1.0, share)))
    years = practitioner.years_of_experience(year)
    if years:
        share = years / settings.quality.experience_saturation_years
        out.append(
            Adjustment(kind="experience", value=settings.quality.experience_boost_max * min(1.0, share))
        )
    return out


def _candidates(
    hits: list[tuple[Chunk, float]],
    practitioners: dict[str, Practitioner],
    settings: PractitionerSettings,
    year: int,
    *,
    source: str,
) -> list[PractitionerCandidate]:
    best = max((score for _, score in hits), default=0.0)
    out: list[PractitionerCandidate] = []
    for chunk, score in hits:
        practitioner = practitioners.get(chunk.doc_id)
        if practitioner is None:  # the index lags the directory; the next sync removes it
            continue
        candidate = PractitionerCandidate(practitioner, chunk, source, score if source == "stage_a" else None)
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
) -> list[PractitionerCandidate]:
    """BM25 on the patient's words (top ``ranking.stage_a_k``), re-ordered by BM25 share plus quality boosts."""
    hits = index.search(q_patient, settings.ranking.stage_a_k, filters) if q_patient.strip() else []
    practitioners = practitioners_of(chunk.doc_id for chunk, _ in hits)
    candidates = _candidates(hits, practitioners, settings, year, source="stage_a")
    return sorted(candidates, key=lambda c: -c.stage_a_score)


def match_intent(candidate: PractitionerCandidate, merged: MergedIntent) -> None:
    """Record which intent terms, anchor phrases and negative terms the candidate's profile contains."""
    tokens = tokenize(candidate.chunk.text)
    candidate.matched_terms = [t for t in merged.intent_terms if contains_phrase(tokens, phrase_key(t))]
    candidate.matched_anchors = [a for a in merged.anchor_phrases if contains_phrase(tokens, phrase_key(a))]
    candidate.matched_negatives = [n for n in merged.negative_terms if contains_phrase(tokens, phrase_key(n))]


def on_intent(candidate: PractitionerCandidate, settings: PractitionerSettings) -> bool:
    """Whether a candidate fits the intent: enough intent terms, or any anchor phrase."""
    return bool(candidate.matched_anchors) or len(candidate.matched_terms) >= max(
        1, settings.ranking.fill_min_intent_matches
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
) -> list[PractitionerCandidate]:
    """Up to ``ranking.stage_a_k`` new candidates from one BM25 search per anchor phrase and intent term, taken in
    turn (best hit of each phrase, then the second of each …) so that a phrase shared by a large specialty
    does not crowd out a small one; fill candidates have no BM25 part."""
    ranked = [index.search(phrase, settings.ranking.stage_a_k, filters) for phrase in fill_phrases(merged)]
    seen = set(existing)
    picked: list[tuple[Chunk, float]] = []
    for depth in range(settings.ranking.stage_a_k):
        for hits in ranked:
            if (
                depth < len(hits)
                and hits[depth][0].doc_id not in seen
                and len(picked) < settings.ranking.stage_a_k
            ):
                seen.add(hits[depth][0].doc_id)
                picked.append(hits[depth])
    practitioners = practitioners_of(chunk.doc_id for chunk, _ in picked)
    return _candidates(picked, practitioners, settings, year, source="intent_fill")


def specialty_candidates(
    practitioners_of_specialty: Callable[[str, int], list[Practitioner]],
    merged: MergedIntent,
    existing: set[str],
    taxonomy: Taxonomy,
    settings: PractitionerSettings,
    year: int,
) -> list[PractitionerCandidate]:
    """Up to ``semantic.fill_k`` practitioners of each matched specialty not already considered: a small
    specialty whose records share no word with the request is still reached."""
    seen = set(existing)
    out: list[PractitionerCandidate] = []
    for specialty in dict.fromkeys(m.specialty for m in merged.specialties):
        for practitioner in practitioners_of_specialty(specialty, settings.semantic.fill_k):
            if practitioner.npi in seen:
                continue
            seen.add(practitioner.npi)
            candidate = PractitionerCandidate(
                practitioner, profile_chunk(practitioner, taxonomy), "specialty_fill", None
            )
            candidate.adjustments.extend(quality_boosts(practitioner, settings, year))
            out.append(candidate)
    return out


def negative_penalty(confidence: float, settings: PractitionerSettings) -> float:
    """The penalty per negative term at this confidence (min at the clear threshold, max at 1.0)."""
    span = max(1e-9, 1.0 - settings.analysis.clear_confidence)
    share = min(1.0, max(0.0, (confidence - settings.analysis.clear_confidence) / span))
    return (
        settings.ranking.negative_penalty_min
        + (settings.ranking.negative_penalty_max - settings.ranking.negative_penalty_min) * share
    )


def stage_b(
    candidates: list[PractitionerCandidate], merged: MergedIntent, settings: PractitionerSettings
) -> list[PractitionerCandidate]:
    """Add intent and anchor boosts (and negative penalties when the query is clear); best first."""
    penalty = negative_penalty(merged.confidence, settings)
    secondary = {phrase_key(t) for t in merged.secondary_terms}

    def weight(term: str) -> float:
        return settings.ranking.secondary_term_factor if phrase_key(term) in secondary else 1.0

    for candidate in candidates:
        match_intent(candidate, merged)
        for term in sorted(candidate.matched_terms, key=lambda t: -weight(t))[
            : settings.ranking.max_intent_terms
        ]:
            candidate.adjustments.append(
                Adjustment(
                    kind="intent_term", term=term, value=settings.ranking.intent_term_boost * weight(term)
                )
            )
        for anchor in candidate.matched_anchors:
            candidate.adjustments.append(
                Adjustment(kind="anchor_phrase", term=anchor, value=settings.ranking.anchor_phrase_boost)
            )
        specialty = (candidate.practitioner.primary_specialty or "").upper()
        for match in merged.specialties:
            if match.specialty == specialty and match.boost:
                candidate.adjustments.append(
                    Adjustment(
                        kind="specialty", term=f"{match.specialty} ({match.source})", value=match.boost
                    )
                )
        if merged.clear:
            for negative in candidate.matched_negatives:
                candidate.adjustments.append(Adjustment(kind="negative_term", term=negative, value=-penalty))
    apply_floor(candidates, merged, settings)
    return sorted(candidates, key=lambda c: (-c.score, -c.stage_a_score, c.npi))


def floor_reason(
    candidate: PractitionerCandidate, merged: MergedIntent, settings: PractitionerSettings
) -> str | None:
    """Why a candidate keeps the floor (its anchor phrase or specialty), or None when it does not."""
    share = sum(a.value for a in candidate.adjustments if a.kind == "bm25")
    if candidate.source != "stage_a" or share < settings.floor.min_bm25_share:
        return None
    own = merged.patient_anchors if settings.floor.patient_anchors_only else candidate.matched_anchors
    anchor = next((a for a in candidate.matched_anchors if a in own), None)
    if anchor is not None:
        return anchor
    specialty = (candidate.practitioner.primary_specialty or "").upper()
    return specialty if specialty and specialty in merged.request_specialties else None


def apply_floor(
    candidates: list[PractitionerCandidate], merged: MergedIntent, settings: PractitionerSettings
) -> None:
    """Lift strong literal stage-A matches to ``floor.ratio`` of the best score (bounded by ``floor.max_lift``)."""
    best = max((c.score for c in candidates), default=0.0)
    if best <= 0:
        return
    line = best * settings.floor.ratio
    for candidate in candidates:
        lift = min(settings.floor.max_lift, line - candidate.score)
        if lift <= 0:
            continue
        reason = floor_reason(candidate, merged, settings)
        if reason is not None:
            candidate.adjustments.append(Adjustment(kind="floor", term=reason, value=lift))


def reserve_slots(
    ranked: list[PractitionerCandidate], merged: MergedIntent, limit: int, settings: PractitionerSettings
) -> list[PractitionerCandidate]:
    """A specialty the request names strongly (a semantic match of at least ``semantic.strong_similarity`` when
    set, or the urgency level's) that has no practitioner in the top ``limit`` gets its best practitioner moved to
    position ``floor.reserved_slot_position``: a request about two things ("spinal adjustment for lower back pain")
    shows both. Moved candidates carry a zero ``reserved_slot`` adjustment that says why."""
    strong_similarity = settings.semantic.strong_similarity
    strong = [
        m.specialty
        for m in merged.specialties
        if m.source == "urgency"
        or (strong_similarity is not None and (m.similarity or 0.0) >= strong_similarity)
    ]
    shown = {(c.practitioner.primary_specialty or "").upper() for c in ranked[:limit]}
    moved: list[PractitionerCandidate] = []
    for specialty in dict.fromkeys(strong):
        if specialty in shown or len(moved) >= settings.floor.reserved_slots_max:
            continue
        best = next(
            (c for c in ranked if (c.practitioner.primary_specialty or "").upper() == specialty), None
        )
        if best is not None:
            best.adjustments.append(Adjustment(kind="reserved_slot", term=specialty, value=0.0))
            moved.append(best)
            shown.add(specialty)
    if not moved:
        return ranked
    rest = [c for c in ranked if all(c is not m for m in moved)]
    at = min(settings.floor.reserved_slot_position, len(rest))
    return [*rest[:at], *moved, *rest[at:]]


def order_nearby(
    candidates: list[PractitionerCandidate], location: Location, settings: PractitionerSettings
) -> list[PractitionerCandidate]:
    """Nearest first among candidates scoring at least ``ranking.nearby_min_score_ratio`` of the best; the rest after.

    Within a proximity tier the score order is kept.
    """
    if not candidates:
        return candidates
    floor = candidates[0].score * settings.ranking.nearby_min_score_ratio if candidates[0].score > 0 else 0.0
    strong = [c for c in candidates if c.score >= floor]
    weak = [c for c in candidates if c.score < floor]
    strong.sort(
        key=lambda c: PROXIMITY_TIERS[location.proximity(c.practitioner)]
    )  # stable: keeps score order
    return strong + weak


_SOURCES = {
    "stage_a": "found by BM25 on the patient's own words",
    "intent_fill": "added from the intent terms and anchor phrases (the patient's words are not in the record)",
    "specialty_fill": "added as a practitioner of a specialty the request points to",
}


def _describe(adjustment: Adjustment, matches: list[SpecialtyMatch]) -> str:
    value = f"{adjustment.value:+.2f}"
    term = adjustment.term
    if adjustment.kind == "bm25":
        return f"{value} BM25 on the patient's words (share of the best match)"
    if adjustment.kind in ("rating", "reviews", "experience"):
        return f"{value} {adjustment.kind} (quality boost)"
    if adjustment.kind == "intent_term":
        return f"{value} intent term {term!r} in the profile"
    if adjustment.kind == "anchor_phrase":
        return f"{value} anchor phrase {term!r} in the profile"
    if adjustment.kind == "negative_term":
        return f"{value} negative term {term!r} in the profile (the request is clear)"
    if adjustment.kind == "reserved_slot":
        return f"moved up to a reserved place: the request names {term} strongly and it had no one higher"
    if adjustment.kind == "floor":
        return f"{value} floor: a strong literal match of {term!r} stays near the top"
    match = next((m for m in matches if term and term.startswith(m.specialty) and m.source in term), None)
    if match is not None and match.source == "semantic":
        return (
            f"{value} specialty {match.specialty}: the request is close to its {match.matched_kind} "
            f"{match.matched_text!r} (similarity {match.similarity:.2f})"
        )
    reasons = {
        "llm": "named by the LLM",
        "intent": "treats what the request is about",
        "population": "cares for who the patient is",
        "urgency": "urgency",
    }
    why = reasons.get(match.source, "") if match is not None else ""
    if match is not None and match.source == "population" and match.boost < 0:
        why = "not for who the patient is"
    return f"{value} specialty {term}" + (f": {why}" if why else "")


def explain(candidate: PractitionerCandidate, intent: str | None, matches: list[SpecialtyMatch]) -> list[str]:
    """A result's reasons in words: how it was found, the matched intent, and every score part with its size."""
    lines = [
        f"{candidate.practitioner.primary_specialty or 'unknown specialty'}: {_SOURCES[candidate.source]}"
    ]
    if intent:
        terms = [*candidate.matched_anchors, *candidate.matched_terms]
        lines.append(
            f"matched intent: {intent}" + (f" ({', '.join(terms)})" if terms else " (no intent term)")
        )
    lines.extend(_describe(a, matches) for a in candidate.adjustments)
    lines.append(f"score {candidate.score:.2f}")
    return lines
