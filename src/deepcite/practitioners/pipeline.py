"""The practitioner finder as data: named stages run in order over one request's state.

    from deepcite.practitioners.pipeline import FINDER_PIPELINE
    [s.name for s in FINDER_PIPELINE.stages]
    # ['analyse', 'merge_analyses', 'refuse_unknown_location', 'refuse_foreign_words', 'run_stage_a',
    #  'fill_from_intent', 'fill_from_specialties', 'run_stage_b', 'order_by_proximity',
    #  'reserve_specialty_slots', 'write_results']

Each stage is a function ``stage(state, finder)`` (a coroutine for ``analyse``) that reads and writes
:class:`FinderState`; a stage that answers the request early (an unknown location, a request in another
language) sets ``state.done``. Its time is added to the response's timing it is listed under (``analysis``,
``stage_a`` or ``stage_b``). Swap a stage with :meth:`FinderPipeline.replaced`; the runner never changes.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from deepcite.errors import ConfigError
from deepcite.models import Filters
from deepcite.practitioners.analysis import Analyses, run_analyses
from deepcite.practitioners.api import PractitionerQuery, PractitionerSearchResponse, Timings
from deepcite.practitioners.location import Location
from deepcite.practitioners.merge import MergedIntent, merge_intent, request_specialties, specialty_matches
from deepcite.practitioners.offline import Conversation
from deepcite.practitioners.ranking import (
    PractitionerCandidate,
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

if TYPE_CHECKING:
    from deepcite.practitioners.finder import PractitionerFinder

Timing = Literal["analysis", "stage_a", "stage_b"]
EXAMPLES = (
    "e.g. 'I need SVT ablation' or 'my knee hurts when I run'"  # closes every "say it otherwise" message
)


@dataclass
class FinderState:
    """One request on its way through the stages: what was asked, and what each stage found."""

    request: PractitionerQuery
    conversation: Conversation
    notes: list[str]
    location: Location | None
    filtering: bool  # the location filters the results (otherwise it only orders them)
    limit: int
    year: int  # experience is counted to this year
    specialties: list[str]  # the directory's primary specialties
    analyses: Analyses | None = None
    proposals: list[SpecialtySimilarity] = field(default_factory=list)
    semantic_ms: float = 0.0
    merged: MergedIntent | None = None
    response: PractitionerSearchResponse | None = None
    candidates: list[PractitionerCandidate] = field(default_factory=list)
    ranked: list[PractitionerCandidate] = field(default_factory=list)
    nearby: Location | None = None  # results are ordered nearest first from here
    timings: dict[Timing, float] = field(
        default_factory=lambda: dict.fromkeys(("analysis", "stage_a", "stage_b"), 0.0)
    )
    done: bool = False

    @property
    def filter_location(self) -> Location | None:
        return self.location if self.filtering else None


StageRun = Callable[["FinderState", "PractitionerFinder"], Awaitable[None] | None]


@dataclass(frozen=True)
class Stage:
    """A named step of the finder and the response timing its time counts to."""

    name: str
    run: StageRun
    timing: Timing


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


async def analyse(state: FinderState, finder: PractitionerFinder) -> None:
    """Insights, general and clinical intent (LLM or offline) and, alongside them, the semantic stage."""
    started = time.perf_counter()

    def propose() -> list[SpecialtySimilarity]:
        if not finder.settings.practitioners.semantic.enabled:
            return []
        proposals = finder.semantic.propose(state.conversation.patient_text, state.specialties)
        state.semantic_ms = round(_ms(started), 2)
        return proposals

    state.analyses, state.proposals = await asyncio.gather(
        run_analyses(
            state.conversation,
            catalogue=finder.catalogue,
            settings=finder.settings.practitioners,
            cities=finder.directory.cities(),
            specialties=state.specialties,
            llm=finder.llm,
        ),
        asyncio.to_thread(propose),
    )


def merge_analyses(state: FinderState, finder: PractitionerFinder) -> None:
    """Intent terms, anchors, negatives and specialty matches from the analyses; the response's frame."""
    s, analyses = finder.settings.practitioners, _analyses(state)
    merged = merge_intent(
        finder.clean_query(state.conversation.patient_text), analyses.general, analyses.clinical, s
    )
    known = set(state.specialties)
    merged.specialties = specialty_matches(
        state.proposals,
        insights=analyses.insights,
        general=analyses.general,
        clinical=analyses.clinical,
        clinical_from_llm=analyses.used["clinical"].source == "llm",
        catalogue=finder.catalogue,
        taxonomy=finder.taxonomy,
        known=known,
        settings=s,
    )
    merged.request_specialties = request_specialties(
        merged.specialties, analyses.general, analyses.clinical, known
    )
    note = finder.catalogue.urgency_note(analyses.insights.urgency)
    if note:
        state.notes.append(note)
    state.merged = merged
    state.response = PractitionerSearchResponse(
        emergency=finder.emergency(state.conversation, analyses),
        results=[],
        specialties=merged.specialties,
        intent=finder.intent_report(merged, analyses),
        timings_ms=Timings(analysis=0.0, stage_a=0.0, stage_b=0.0),
        analysis_used=analyses.used,
        notes=state.notes,
        location=state.location,
    )


def refuse_unknown_location(state: FinderState, finder: PractitionerFinder) -> None:
    """A filtering location with no practitioner at all: say so (with close city names) instead of results."""
    where = state.filter_location
    if (
        where is not None
        and finder.directory.count_at(city=where.city, state=where.state, zip_code=where.zip) == 0
    ):
        _response(state).reason = finder.unknown_location(where)
        state.done = True


def refuse_foreign_words(state: FinderState, finder: PractitionerFinder) -> None:
    """Foreign words would only meet stray BM25 matches (hospital names, initials): say why instead."""
    merged = _merged(state)
    if not merged.intent_terms and not merged.anchor_phrases and _non_ascii_letters(state.request.user_query):
        _response(state).reason = (
            "the request names no symptom, condition, procedure or specialty deepcite recognises and does not "
            f"look like English; deepcite reads English requests, so please write it in English, {EXAMPLES}"
        )
        state.done = True


def run_stage_a(state: FinderState, finder: PractitionerFinder) -> None:
    """BM25 on the patient's own words (top ``ranking.stage_a_k``, quality boosts), intent terms matched."""
    merged, filters = _merged(state), _filters(state)
    s = finder.settings.practitioners
    state.candidates = stage_a(finder.index, finder.lookup, merged.q_patient, s, filters, state.year)
    for candidate in state.candidates:
        match_intent(candidate, merged)


def fill_from_intent(state: FinderState, finder: PractitionerFinder) -> None:
    """Fewer on-intent candidates than requested: add BM25 searches on the intent terms and anchors."""
    s, merged = finder.settings.practitioners, _merged(state)
    fitting = sum(on_intent(c, s) for c in state.candidates)
    if fitting >= state.limit:
        return
    existing = {c.npi for c in state.candidates}
    added = fill_candidates(finder.index, finder.lookup, merged, existing, s, _filters(state), state.year)
    if not added:
        return
    response = _response(state)
    response.filled_from_intent = True
    response.fill_reason = (
        f"stage A found {len(state.candidates)} candidates for the patient's words, {fitting} of them fitting "
        f"the intent (fewer than the {state.limit} requested); added {len(added)} from the intent terms and "
        "anchor phrases"
    )
    state.candidates.extend(added)


def fill_from_specialties(state: FinderState, finder: PractitionerFinder) -> None:
    """Practitioners of each matched specialty not yet considered (within the filtering location)."""
    where = state.filter_location

    def of_specialty(specialty: str, k: int) -> list[Practitioner]:
        return finder.directory.with_specialty(
            specialty,
            k,
            city=where.city if where else None,
            state=where.state if where else None,
            zip_code=where.zip if where else None,
        )

    existing = {c.npi for c in state.candidates}
    state.candidates.extend(
        specialty_candidates(
            of_specialty, _merged(state), existing, finder.taxonomy, finder.settings.practitioners, state.year
        )
    )


def run_stage_b(state: FinderState, finder: PractitionerFinder) -> None:
    """Intent, anchor, specialty and negative terms re-score the candidates, then the floor; best first."""
    state.ranked = stage_b(state.candidates, _merged(state), finder.settings.practitioners)


def order_by_proximity(state: FinderState, finder: PractitionerFinder) -> None:
    """Nearest first among the strong candidates, from the request's location (when it does not filter) or
    a directory city the conversation names."""
    if state.location is not None and not state.filtering:
        state.nearby = state.location
    else:
        state.nearby = finder.mentioned(_analyses(state), _response(state).notes)
    if state.nearby is not None:
        state.ranked = order_nearby(state.ranked, state.nearby, finder.settings.practitioners)


def reserve_specialty_slots(state: FinderState, finder: PractitionerFinder) -> None:
    """A specialty the request names strongly gets its best practitioner into the shown results."""
    state.ranked = reserve_slots(state.ranked, _merged(state), state.limit, finder.settings.practitioners)


def write_results(state: FinderState, finder: PractitionerFinder) -> None:
    """The top ``limit`` with their explanations, or the reason there are none."""
    analyses, merged, response = _analyses(state), _merged(state), _response(state)
    intent = finder.catalogue.by_id.get(analyses.clinical.primary_intent)
    primary = analyses.clinical.primary_intent
    label = intent.label if intent else (primary if primary != "unknown" else None)
    response.results = [
        finder.result(c, state.year, state.nearby, merged, label) for c in state.ranked[: state.limit]
    ]
    if not response.results:
        response.reason = finder.empty_reason(state.request, merged, state.filter_location)


@dataclass(frozen=True)
class FinderPipeline:
    """The finder's stages in order; :meth:`run` runs them until one answers early or all have run."""

    stages: tuple[Stage, ...]

    async def run(self, state: FinderState, finder: PractitionerFinder) -> PractitionerSearchResponse:
        """Run the stages over ``state``; the response with each timing's milliseconds."""
        for stage in self.stages:
            started = time.perf_counter()
            out = stage.run(state, finder)
            if inspect.isawaitable(out):
                await out
            state.timings[stage.timing] += _ms(started)
            if state.done:
                break
        response = _response(state)
        response.timings_ms = Timings(
            **{name: round(ms, 2) for name, ms in state.timings.items()}, semantic=state.semantic_ms
        )
        return response

    def replaced(self, name: str, new: Stage) -> FinderPipeline:
        """This pipeline with the stage called ``name`` swapped for ``new``."""
        names = [s.name for s in self.stages]
        if name not in names:
            raise ConfigError(f"no finder stage named {name!r}; the finder runs: {', '.join(names)}")
        index = names.index(name)
        return replace(self, stages=(*self.stages[:index], new, *self.stages[index + 1 :]))


FINDER_PIPELINE = FinderPipeline(
    stages=(
        Stage("analyse", analyse, "analysis"),
        Stage("merge_analyses", merge_analyses, "analysis"),
        Stage("refuse_unknown_location", refuse_unknown_location, "stage_a"),
        Stage("refuse_foreign_words", refuse_foreign_words, "stage_a"),
        Stage("run_stage_a", run_stage_a, "stage_a"),
        Stage("fill_from_intent", fill_from_intent, "stage_a"),
        Stage("fill_from_specialties", fill_from_specialties, "stage_a"),
        Stage("run_stage_b", run_stage_b, "stage_b"),
        Stage("order_by_proximity", order_by_proximity, "stage_b"),
        Stage("reserve_specialty_slots", reserve_specialty_slots, "stage_b"),
        Stage("write_results", write_results, "stage_b"),
    )
)


def _non_ascii_letters(text: str) -> bool:
    return any(ord(ch) > 127 and ch.isalpha() for ch in text)


def _analyses(state: FinderState) -> Analyses:
    if state.analyses is None:
        raise RuntimeError("a finder stage ran before 'analyse'")
    return state.analyses


def _merged(state: FinderState) -> MergedIntent:
    if state.merged is None:
        raise RuntimeError("a finder stage ran before 'merge_analyses'")
    return state.merged


def _response(state: FinderState) -> PractitionerSearchResponse:
    if state.response is None:
        raise RuntimeError("a finder stage ran before 'merge_analyses'")
    return state.response


def _filters(state: FinderState) -> Filters | None:
    where = state.filter_location
    return where.filters() if where is not None else None
