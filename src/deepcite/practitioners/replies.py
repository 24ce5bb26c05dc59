"""What the finder says back, built by its stages: each result with its reasons, the intent report, emergency
guidance, and the reason when a request gets no results."""

from __future__ import annotations

from deepcite.practitioners.analysis import Analyses
from deepcite.practitioners.api import (
    Emergency,
    IntentReport,
    IntentTerms,
    PractitionerQuery,
    PractitionerResult,
)
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.context import EXAMPLES
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.location import Location, close_matches, parse_location
from deepcite.practitioners.merge import MergedIntent
from deepcite.practitioners.offline import Conversation
from deepcite.practitioners.ranking import PractitionerCandidate, explain
from deepcite.practitioners.records import PractitionerProfile
from deepcite.practitioners.taxonomy import Taxonomy
from deepcite.text import raw_tokens, tokenize


def clean_query(catalogue: Catalogue, user_query: str) -> str:
    """The patient's words for stage A (every user turn of the conversation): lower-case, without stop words
    and request filler ("I need a doctor for …"); kept unstemmed so the query stays readable."""
    filler = catalogue.filler_tokens
    kept = [t for t in raw_tokens(user_query) if (stem := tokenize(t)) and stem[0] not in filler]
    return " ".join(kept)


def emergency(catalogue: Catalogue, conversation: Conversation, analyses: Analyses) -> Emergency | None:
    """Crisis or emergency guidance, with the words of the conversation that called for it; else None."""
    level = analyses.insights.urgency
    rule = catalogue.urgency_rule(level)
    if rule is None or level not in ("crisis", "emergency"):
        return None
    said = catalogue.urgency_matcher.find_in(conversation.patient_text)
    cues = [" ".join(key) for _, key, rules in said if any(r.level == level for r in rules)]
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


def result(
    taxonomy: Taxonomy,
    candidate: PractitionerCandidate,
    year: int,
    near: Location | None,
    merged: MergedIntent,
    intent: str | None,
) -> PractitionerResult:
    """One shown practitioner: the profile, every score part, the specialty matches and the explanation."""
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
        explanation=explain(candidate, intent, matches),
        proximity=near.proximity(p) if near is not None else None,
    )
