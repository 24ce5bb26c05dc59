"""The finder's stages, in the order :data:`deepcite.practitioners.pipeline.FINDER_PIPELINE` runs them.

Each is declared with :func:`~deepcite.practitioners.context.stage`: the response timing its time counts to and
the :class:`~deepcite.practitioners.context.FinderState` fields it reads and writes. A stage calls only what
:class:`~deepcite.practitioners.context.FinderContext` holds; one that answers the request early (an unknown
location, a request in another language) sets ``done``.
"""

from __future__ import annotations

import asyncio
import logging
import time

from deepcite.models import Filters
from deepcite.practitioners import replies
from deepcite.practitioners.analysis import run_analyses
from deepcite.practitioners.api import PractitionerSearchResponse, Timings
from deepcite.practitioners.catalogue import contains_phrase, match_intents, named_specialties, phrase_key
from deepcite.practitioners.context import (
    EXAMPLES,
    FinderContext,
    FinderState,
    analyses_of,
    merged_of,
    response_of,
    stage,
)
from deepcite.practitioners.merge import (
    merge_intent,
    request_specialties,
    secondary_terms,
    specialty_matches,
)
from deepcite.practitioners.offline import past_reading
from deepcite.practitioners.ranking import (
    fill_candidates,
    match_intent,
    on_intent,
    order_nearby,
    reserve_slots,
    specialty_candidates,
    stage_a,
    stage_b,
)
from deepcite.practitioners.records import Practitioner
from deepcite.practitioners.semantic import SpecialtySimilarity

log = logging.getLogger(__name__)


@stage("analysis", reads=("conversation", "specialties"), writes=("analyses", "proposals", "semantic_ms"))
async def analyse(state: FinderState, context: FinderContext) -> None:
    """Insights, general and clinical intent (LLM or offline) and, alongside them, the semantic stage."""
    started = time.perf_counter()

    def propose() -> list[SpecialtySimilarity]:
        if not context.settings.semantic.enabled:
            return []
        proposals = context.semantic.propose(state.conversation.patient_text, state.specialties)
        state.semantic_ms = round((time.perf_counter() - started) * 1000.0, 2)
        return proposals

    state.analyses, state.proposals = await asyncio.gather(
        run_analyses(
            state.conversation,
            catalogue=context.catalogue,
            settings=context.settings,
            cities=context.directory.cities(),
            specialties=state.specialties,
            llm=context.llm,
        ),
        asyncio.to_thread(propose),
    )


@stage(
    "analysis",
    reads=("conversation", "analyses", "proposals", "specialties", "notes", "location"),
    writes=("merged", "response", "notes"),
)
def merge_analyses(state: FinderState, context: FinderContext) -> None:
    """Intent terms, anchors, negatives and specialty matches from the analyses; the response's frame."""
    s, analyses, catalogue = context.settings, analyses_of(state), context.catalogue
    patient_words = replies.clean_query(catalogue, state.conversation.patient_text)
    merged = merge_intent(patient_words, analyses.general, analyses.clinical, s)
    known = set(state.specialties)
    merged.specialties = specialty_matches(
        state.proposals,
        insights=analyses.insights,
        general=analyses.general,
        clinical=analyses.clinical,
        clinical_from_llm=analyses.used["clinical"].source == "llm",
        catalogue=catalogue,
        taxonomy=context.taxonomy,
        known=known,
        settings=s,
    )
    merged.request_specialties = request_specialties(
        merged.specialties, analyses.general, analyses.clinical, known
    )
    if analyses.used["clinical"].source != "llm":
        top = catalogue.by_id.get(analyses.clinical.primary_intent)
        merged.secondary_terms = secondary_terms(merged.intent_terms, top, analyses.general.expansion_terms)
    words = phrase_key(catalogue.reading.meant_text(state.conversation.patient_text))
    merged.patient_anchors = [a for a in merged.anchor_phrases if contains_phrase(words, phrase_key(a))]
    text, window = state.conversation.patient_text, s.analysis.trigger_window
    if s.floor.named_by is not None:  # the floor protects only what the patient asked for by name
        from_llm = (
            analyses.clinical.likely_subspecialties if analyses.used["clinical"].source == "llm" else []
        )
        past = past_reading(s)
        named = [*named_specialties(text, catalogue, s.floor.named_by, window, past), *from_llm]
        merged.request_specialties = sorted({n.strip().upper() for n in named} & known)
        # a symptom's words ("back pain") found in a rheumatologist's profile ask for no one by name, nor does a
        # past event's ("after my hip replacement")
        fired = [t for m in match_intents(text, catalogue, window, past) for t in m.triggers]
        weak = {
            phrase_key(t.expansion or t.phrase) for t in fired if t.kind not in s.floor.named_by or t.past
        }
        merged.patient_anchors = [a for a in merged.patient_anchors if phrase_key(a) not in weak]
    note = catalogue.urgency_note(analyses.insights.urgency)
    if note:
        state.notes.append(note)
    state.merged = merged
    state.response = PractitionerSearchResponse(
        emergency=replies.emergency(catalogue, state.conversation, analyses, s),
        results=[],
        specialties=merged.specialties,
        intent=replies.intent_report(merged, analyses),
        timings_ms=Timings(analysis=0.0, stage_a=0.0, stage_b=0.0),
        analysis_used=analyses.used,
        notes=state.notes,
        location=state.location,
    )


@stage("stage_a", reads=("location", "filtering", "response"), writes=("response", "done"))
def refuse_unknown_location(state: FinderState, context: FinderContext) -> None:
    """A filtering location with no practitioner at all: say so (with close city names) instead of results."""
    where = state.filter_location
    if (
        where is not None
        and context.directory.count_at(city=where.city, state=where.state, zip_code=where.zip) == 0
    ):
        response_of(state).reason = replies.unknown_location(context.directory, where)
        state.done = True


@stage("stage_a", reads=("merged", "request", "response"), writes=("response", "done"))
def refuse_foreign_words(state: FinderState, context: FinderContext) -> None:
    """Foreign words would only meet stray BM25 matches (hospital names, initials): say why instead."""
    merged = merged_of(state)
    if not merged.intent_terms and not merged.anchor_phrases and _non_ascii_letters(state.request.user_query):
        response_of(state).reason = (
            "the request names no symptom, condition, procedure or specialty deepcite recognises and does not "
            f"look like English; deepcite reads English requests, so please write it in English, {EXAMPLES}"
        )
        state.done = True


@stage("stage_a", reads=("merged", "location", "filtering", "year"), writes=("candidates",))
def run_stage_a(state: FinderState, context: FinderContext) -> None:
    """BM25 on the patient's own words as meant (top ``ranking.stage_a_k``, quality boosts: "can't" searched as
    "cannot"), intent terms matched."""
    merged = merged_of(state)
    lookup = context.directory.get_many
    words = context.catalogue.reading.meant_text(merged.q_patient)
    state.candidates = stage_a(context.index, lookup, words, context.settings, _filters(state), state.year)
    for candidate in state.candidates:
        match_intent(candidate, merged)


@stage(
    "stage_a",
    reads=("candidates", "limit", "merged", "location", "filtering", "year", "response"),
    writes=("candidates", "response"),
)
def fill_from_intent(state: FinderState, context: FinderContext) -> None:
    """Fewer on-intent candidates than requested: add BM25 searches on the intent terms and anchors."""
    s, merged = context.settings, merged_of(state)
    fitting = sum(on_intent(c, s) for c in state.candidates)
    debug = response_of(state).debug
    debug.stage_a_candidates, debug.on_intent = len(state.candidates), fitting
    if fitting >= state.limit:
        return
    existing = {c.npi for c in state.candidates}
    lookup = context.directory.get_many
    added = fill_candidates(context.index, lookup, merged, existing, s, _filters(state), state.year)
    if not added:
        return
    debug.filled_from_intent = True
    debug.fill_reason = (
        f"stage A found {len(state.candidates)} candidates for the patient's words, {fitting} of them fitting "
        f"the intent (fewer than the {state.limit} requested); added {len(added)} from the intent terms and "
        "anchor phrases"
    )
    log.info("practitioner search: %s", debug.fill_reason)
    state.candidates.extend(added)


@stage("stage_a", reads=("location", "filtering", "candidates", "merged", "year"), writes=("candidates",))
def fill_from_specialties(state: FinderState, context: FinderContext) -> None:
    """Practitioners of each matched specialty not yet considered (within the filtering location)."""
    where = state.filter_location

    def of_specialty(specialty: str, k: int) -> list[Practitioner]:
        return context.directory.with_specialty(
            specialty,
            k,
            city=where.city if where else None,
            state=where.state if where else None,
            zip_code=where.zip if where else None,
        )

    existing = {c.npi for c in state.candidates}
    state.candidates.extend(
        specialty_candidates(
            of_specialty, merged_of(state), existing, context.taxonomy, context.settings, state.year
        )
    )


@stage(
    "stage_b", reads=("candidates", "merged", "response"), writes=("candidates", "ranked", "response")
)  # re-scores in place
def run_stage_b(state: FinderState, context: FinderContext) -> None:
    """Intent, anchor, specialty and negative terms re-score the candidates, then the floor; best first."""
    state.ranked = stage_b(state.candidates, merged_of(state), context.settings)
    response_of(state).debug.candidates = len(state.ranked)


@stage(
    "stage_b",
    reads=("location", "filtering", "analyses", "response", "ranked"),
    writes=("nearby", "ranked", "response"),
)
def order_by_proximity(state: FinderState, context: FinderContext) -> None:
    """Nearest first among the strong candidates, from the request's location (when it does not filter) or
    a directory city the conversation names."""
    if state.location is not None and not state.filtering:
        state.nearby = state.location
    else:
        named = replies.mentioned(context.directory, analyses_of(state))
        state.nearby = named[0] if named else None
        if named:
            response_of(state).notes.append(named[1])
    if state.nearby is not None:
        state.ranked = order_nearby(state.ranked, state.nearby, context.settings)


@stage("stage_b", reads=("ranked", "merged", "limit"), writes=("ranked",))
def reserve_specialty_slots(state: FinderState, context: FinderContext) -> None:
    """A specialty the request names strongly gets its best practitioner into the shown results."""
    state.ranked = reserve_slots(state.ranked, merged_of(state), state.limit, context.settings)


@stage(
    "stage_b",
    reads=(
        "analyses",
        "merged",
        "response",
        "ranked",
        "limit",
        "year",
        "nearby",
        "request",
        "location",
        "filtering",
    ),
    writes=("response",),
)
def write_results(state: FinderState, context: FinderContext) -> None:
    """The top ``limit`` with their explanations, or the reason there are none."""
    analyses, merged, response = analyses_of(state), merged_of(state), response_of(state)
    primary = analyses.clinical.primary_intent
    intent = context.catalogue.by_id.get(primary)
    label = intent.label if intent else (primary if primary != "unknown" else None)
    response.results = [
        replies.result(
            context.taxonomy, context.catalogue, c, state.year, state.nearby, merged, analyses, label
        )
        for c in state.ranked[: state.limit]
    ]
    if not response.results:
        response.reason = replies.empty_reason(state.request, state.filter_location)


def _non_ascii_letters(text: str) -> bool:
    return any(ord(ch) > 127 and ch.isalpha() for ch in text)


def _filters(state: FinderState) -> Filters | None:
    where = state.filter_location
    return where.filters() if where is not None else None
