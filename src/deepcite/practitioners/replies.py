"""What the finder says back, built by its stages: each result with its reasons, the intent report, emergency
guidance, and the reason when a request gets no results."""

from __future__ import annotations

from deepcite.config import PractitionerSettings
from deepcite.practitioners.analysis import Analyses
from deepcite.practitioners.api import (
    Emergency,
    IntentReport,
    IntentTerms,
    PractitionerQuery,
    PractitionerResult,
    SpecialtyMatch,
)
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.context import EXAMPLES
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.location import Location, close_matches, parse_location
from deepcite.practitioners.merge import MergedIntent
from deepcite.practitioners.offline import Conversation, urgency_cues
from deepcite.practitioners.ranking import PractitionerCandidate, explain
from deepcite.practitioners.records import PractitionerProfile
from deepcite.practitioners.taxonomy import Taxonomy
from deepcite.text import tokenize


def clean_query(catalogue: Catalogue, user_query: str) -> str:
    """The patient's words for stage A (every user turn of the conversation) as written, lower-case, without
    the words that mean only stop words or request filler ("I need a doctor for …", "it's"): a contraction or
    possessive stays whole ("can't sleep", "daughter's"), so the query reads as the patient wrote it."""
    filler, reading = catalogue.filler_tokens, catalogue.reading
    kept = [
        word
        for word in reading.written(user_query)
        if any(stem not in filler for part in reading.word_meaning(word) for stem in tokenize(part))
    ]
    return " ".join(kept)


def emergency(
    catalogue: Catalogue, conversation: Conversation, analyses: Analyses, settings: PractitionerSettings
) -> Emergency | None:
    """Crisis or emergency guidance, with the words of the conversation that called for it; else None."""
    level = analyses.insights.urgency
    rule = catalogue.urgency_rule(level)
    if rule is None or level not in ("crisis", "emergency"):
        return None
    cues = [cue for found, cue in urgency_cues(conversation, catalogue, settings) if found.level == level]
    return Emergency(level=level, guidance=rule.note, cues=list(dict.fromkeys(cues)))  # type: ignore[arg-type]


def intent_report(merged: MergedIntent, analyses: Analyses) -> IntentReport:
    """The intent terms the ranking used, with the three analyses behind them."""
    return IntentReport(
        **merged.model_dump(include=set(IntentTerms.model_fields)),
        insights=analyses.insights,
        general=analyses.general,
        clinical=analyses.clinical,
    )


def mentioned(directory: Directory, analyses: Analyses) -> tuple[Location, str] | None:
    """A directory city the patient named in the conversation, for nearby-first ordering, and the note that
    says so."""
    said = analyses.insights.location
    if not said:
        return None
    try:
        location = parse_location(said)
    except ValueError:
        return None
    if not location.city or location.city not in directory.cities(location.state):
        return None
    return location, f"results near {location.city.title()} (mentioned in the conversation) are listed first"


def unknown_location(directory: Directory, location: Location) -> str:
    """Why a filtering location gets no results: no practitioner there, and the close city names."""
    reason = f"no practitioner in the directory is at {location.label()}"
    if location.city:
        suggestions = close_matches(location.city, directory.cities(location.state))
        if suggestions:
            reason += f"; did you mean {' or '.join(s.title() for s in suggestions)}?"
    return reason + " Check the spelling, use a ZIP or state only, or set locationMode to 'nearby'."


def empty_reason(request: PractitionerQuery, location: Location | None) -> str:
    """Why a request that was searched found nobody."""
    if location is not None:
        return (
            f"no practitioner at {location.label()} matches the request; try locationMode 'nearby' or a "
            "wider location (state only)"
        )
    return (
        f"no practitioner profile contains the words of {request.user_query.strip()!r}, and the request "
        f"names no symptom, condition, procedure or specialty deepcite recognises; describe the problem "
        f"in other words, {EXAMPLES}"
    )


def treats(catalogue: Catalogue, specialty: str) -> list[str]:
    """What a specialty treats, in the catalogue's plain labels (the intents it is a best fit for)."""
    return [i.label for i in catalogue.intents if specialty in (s.upper() for s in i.specialties)]


def patient_reasons(
    catalogue: Catalogue,
    candidate: PractitionerCandidate,
    matches: list[SpecialtyMatch],
    analyses: Analyses,
    intent: str | None,
) -> list[str]:
    """Why a practitioner fits, in words a patient reads: what the specialty treats and whether that is what
    the request is about, who it cares for, emergency care, the request's words in the profile. No score."""
    specialty = (candidate.practitioner.primary_specialty or "").upper()
    name = specialty.title() if specialty else "This practitioner"
    labels = treats(catalogue, specialty)
    out: list[str] = []
    if intent and intent in labels:
        out.append(f"{name} treats {intent}, which is what your request is about.")
    elif labels:
        out.append(f"{name} treats {labels[0]}.")
    fitting = [m for m in matches if m.boost > 0]
    said = next((m.matched_text for m in fitting if m.source == "semantic" and m.matched_kind == "cue"), None)
    if said and not (intent and intent in labels):
        out.append(f"Your request sounds like “{said}”, which this specialty sees.")
    population = catalogue.population_of(analyses.insights.population)
    if population is not None and any(m.source == "population" for m in fitting) and population.reason:
        out.append(f"{name} {population.reason}.")
    unfit = any(m.source == "population" and m.boost < 0 for m in matches)
    if population is not None and unfit and population.not_for_reason:
        out.append(f"{name} {population.not_for_reason}, so it is listed lower.")
    if any(m.source == "urgency" for m in fitting):
        out.append("Gives emergency care, which what you describe may need now.")
    shown = [*candidate.matched_anchors, *candidate.matched_terms][:3]
    if shown:
        out.append(f"The profile mentions {', '.join(shown)}.")
    return [line for line in out if line] or [f"{name} is among the closest matches in the directory."]


def result(
    taxonomy: Taxonomy,
    catalogue: Catalogue,
    candidate: PractitionerCandidate,
    year: int,
    near: Location | None,
    merged: MergedIntent,
    analyses: Analyses,
    intent: str | None,
) -> PractitionerResult:
    """One shown practitioner: the profile, every score part, the specialty matches, the patient-facing reasons
    and the step-by-step explanation."""
    p = candidate.practitioner
    specialty = (p.primary_specialty or "").upper()
    matches = [m for m in merged.specialties if m.specialty == specialty]
    return PractitionerResult(
        **p.model_dump(include=set(PractitionerProfile.model_fields)),
        years_of_experience=p.years_of_experience(year),
        rating=p.rating,
        review_count=p.review_count,
        score=round(candidate.score, 4),
        stage_a_score=round(candidate.stage_a_score, 4),
        bm25=round(candidate.bm25, 4) if candidate.bm25 is not None else None,
        source=candidate.source,  # type: ignore[arg-type]
        matched_intent=intent,
        matched_intent_terms=candidate.matched_terms,
        matched_anchor_phrases=candidate.matched_anchors,
        matched_negative_terms=candidate.matched_negatives,
        adjustments=[a.model_copy(update={"value": round(a.value, 4)}) for a in candidate.adjustments],
        specialty_matches=matches,
        specialty_definition=taxonomy.plain_definition(specialty) if specialty else None,
        reasons=patient_reasons(catalogue, candidate, matches, analyses, intent),
        explanation=explain(candidate, intent, matches),
        proximity=near.proximity(p) if near is not None else None,
    )
