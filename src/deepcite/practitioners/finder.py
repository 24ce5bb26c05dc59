"""The practitioner finder: a patient's request in, ranked practitioners with their reasons out.

Usage::

    finder = engine.finder                                    # the Engine's: its store, embedder and LLM
    finder.import_file(Path("maine.csv"), "cms-reduced")      # once
    response = await search_practitioners(PractitionerQuery(userQuery="I need SVT ablation"), finder)

Flow: validate the request, then the stages of :data:`deepcite.practitioners.pipeline.FINDER_PIPELINE`, listed
as data there: run insights, general and clinical intent in parallel (LLM or offline) and, alongside them, the
semantic stage (the patient's words against every directory specialty's names, NUCC definition and cues);
merge them into intent terms, anchors, negatives and specialty matches (semantic, LLM, population, urgency);
stage A (BM25 on the patient's own words, top ``ranking.stage_a_k``, quality boosts); fill from the intent
terms when stage A holds fewer on-intent candidates than requested, and from the matched specialties; stage B
(intent, anchor, specialty and negative terms, then the floor that keeps a strong literal stage-A match);
location filter or nearest-first order; top ``limit``, each result with its explanation. Crisis and emergency
requests carry their guidance first (``emergency``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path

from deepcite.config import Settings
from deepcite.errors import InputError, NotFoundError, RequestError
from deepcite.llm.client import LLMClient
from deepcite.models import Chunk
from deepcite.practitioners.analysis import Analyses
from deepcite.practitioners.api import (
    Emergency,
    IntentReport,
    IntentTerms,
    PractitionerQuery,
    PractitionerResult,
    PractitionerSearchResponse,
)
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.importers import ImportReport, import_file
from deepcite.practitioners.index import ProfileIndex
from deepcite.practitioners.location import Location, close_matches, parse_location
from deepcite.practitioners.merge import MergedIntent
from deepcite.practitioners.offline import Conversation
from deepcite.practitioners.pipeline import EXAMPLES, FINDER_PIPELINE, FinderPipeline, FinderState
from deepcite.practitioners.ranking import PractitionerCandidate, explain
from deepcite.practitioners.records import Practitioner, PractitionerProfile
from deepcite.practitioners.semantic import SemanticStage
from deepcite.practitioners.taxonomy import Taxonomy
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.store import SearchStore
from deepcite.text import raw_tokens, tokenize
from deepcite.validation import is_blank


class PractitionerFinder:
    """The directory, its search index, the catalogue and (optionally) an LLM, ready to answer requests."""

    def __init__(
        self,
        settings: Settings,
        *,
        directory: Directory,
        store: SearchStore,
        embedder: Embedder,
        llm: LLMClient | None = None,
        taxonomy: Taxonomy | None = None,
        catalogue: Catalogue | None = None,
        semantic: SemanticStage | None = None,
        pipeline: FinderPipeline = FINDER_PIPELINE,
    ) -> None:
        self.settings = settings
        self.directory = directory
        self.store = store
        self.llm = llm
        self.taxonomy = taxonomy or Taxonomy.load()
        self.catalogue = catalogue or Catalogue.load()
        self.index = ProfileIndex(store, settings, self.taxonomy)
        self.semantic = semantic or SemanticStage(
            directory, self.taxonomy, self.catalogue, settings, embedder
        )
        self.pipeline = pipeline

    @classmethod
    def open(
        cls, settings: Settings, *, store: SearchStore, embedder: Embedder, llm: LLMClient | None = None
    ) -> PractitionerFinder:
        """The finder over the directory of ``settings`` (opened here), the profile index in ``store``, the
        semantic stage with ``embedder`` and the LLM analyses with ``llm`` (offline when None)."""
        return cls(settings, directory=Directory.open(settings), store=store, embedder=embedder, llm=llm)

    def close(self) -> None:
        """Close the directory and the store."""
        self.directory.close()
        self.store.close()

    # -- directory maintenance ----------------------------------------------------------------------------

    def import_file(
        self,
        path: Path,
        fmt: str,
        *,
        on_row: Callable[[int], None] | None = None,
        on_index: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Import a file into the directory (one transaction), then bring the search index and the stored
        specialty embeddings up to date."""
        report = import_file(path, fmt, self.directory, taxonomy=self.taxonomy, on_row=on_row)
        self.index.sync(self.directory, on_batch=on_index)
        if self.settings.practitioners.semantic.enabled:
            self.semantic.sync()
        return report

    def ensure_index(self, on_batch: Callable[[int], None] | None = None) -> int:
        """Sync the search index if it lags the directory; returns the profiles written (0 if current)."""
        if self.index.is_current(self.directory):
            return 0
        return self.index.sync(self.directory, on_batch=on_batch)

    def baseline(self, query: str, k: int) -> list[tuple[Chunk, float]]:
        """Plain BM25 on the query over the profiles: the evaluation's baseline."""
        self.ensure_index()
        return self.index.search(query, k)

    # -- search -------------------------------------------------------------------------------------------

    async def search(self, request: PractitionerQuery) -> PractitionerSearchResponse:
        """Answer one request: check it, then run :attr:`pipeline`'s stages (the module docstring has the flow)."""
        s = self.settings.practitioners
        conversation, notes = self._conversation(request)
        if self.directory.count() == 0:
            raise NotFoundError(
                f"the practitioner directory {self.directory.path} is empty; import a file first with "
                "`deepcite practitioners import FILE --format cms-national|cms-reduced|csv|jsonl`"
            )
        self.ensure_index()
        location = self._location(request)
        state = FinderState(
            request=request,
            conversation=conversation,
            notes=notes,
            location=location,
            filtering=location is not None and request.location_mode == "filter",
            limit=request.limit or s.result_limit,
            year=s.quality.reference_year or date.today().year,
            specialties=sorted(self.directory.primary_specialties()),
        )
        return await self.pipeline.run(state, self)

    def clean_query(self, user_query: str) -> str:
        """The patient's words for stage A (every user turn of the conversation): lower-case, without stop
        words and request filler ("I need a doctor for …"); kept unstemmed so the query stays readable."""
        filler = self.catalogue.filler_tokens
        kept = [t for t in raw_tokens(user_query) if (stem := tokenize(t)) and stem[0] not in filler]
        return " ".join(kept)

    # -- helpers ------------------------------------------------------------------------------------------

    def lookup(self, npis: Iterable[str]) -> dict[str, Practitioner]:
        return self.directory.get_many(npis)

    def emergency(self, conversation: Conversation, analyses: Analyses) -> Emergency | None:
        level = analyses.insights.urgency
        rule = self.catalogue.urgency_rule(level)
        if rule is None or level not in ("crisis", "emergency"):
            return None
        said = self.catalogue.urgency_matcher.find_in(conversation.patient_text)
        cues = [" ".join(key) for _, key, rules in said if any(r.level == level for r in rules)]
        return Emergency(level=level, guidance=rule.note, cues=list(dict.fromkeys(cues)))  # type: ignore[arg-type]

    def _conversation(self, request: PractitionerQuery) -> tuple[Conversation, list[str]]:
        s = self.settings.practitioners
        query = request.user_query.strip()
        if is_blank(query):
            raise RequestError(f"userQuery is empty: describe what you need, {EXAMPLES}")
        if len(query) > s.max_query_chars:
            raise RequestError(
                f"userQuery is {len(query)} characters long; the limit is {s.max_query_chars} "
                "(DEEPCITE_PRACTITIONERS_MAX_QUERY_CHARS). Say the main need in a sentence or two, "
                + EXAMPLES
            )
        notes: list[str] = []
        kept: list[tuple[str, str]] = []
        budget = s.max_conversation_chars
        for message in reversed(request.messages):
            if len(message.content) > budget:
                break
            budget -= len(message.content)
            kept.append((message.role, message.content))
        if len(kept) < len(request.messages):
            dropped = len(request.messages) - len(kept)
            notes.append(
                f"{dropped} earlier message(s) were left out: the conversation is limited to "
                f"{s.max_conversation_chars} characters (DEEPCITE_PRACTITIONERS_MAX_CONVERSATION_CHARS)"
            )
        location = request.location if isinstance(request.location, str) else None
        conversation = Conversation(query, list(reversed(kept)), location)
        if not tokenize(conversation.patient_text):
            if not raw_tokens(conversation.patient_text):
                raise InputError(
                    "the request has no words deepcite can read (it searches English text in the Latin "
                    f"alphabet); please write it in English, {EXAMPLES}"
                )
            raise InputError(
                f"the request {query!r} holds only common words (stop words such as 'the', 'and', 'I'); "
                f"describe a symptom, condition, procedure or specialty, {EXAMPLES}"
            )
        return conversation, notes

    def _location(self, request: PractitionerQuery) -> Location | None:
        raw = request.location
        if raw is None:
            return None
        try:
            location = parse_location(raw) if isinstance(raw, str) else raw
        except ValueError as exc:
            raise InputError(f"cannot read location {raw!r}: {exc}") from None
        return None if location.is_empty() else location

    def mentioned(self, analyses: Analyses, notes: list[str]) -> Location | None:
        """A directory city the patient named in the conversation, for nearby-first ordering."""
        said = analyses.insights.location
        if not said:
            return None
        try:
            location = parse_location(said)
        except ValueError:
            return None
        if not location.city or location.city not in self.directory.cities(location.state):
            return None
        notes.append(f"results near {location.city.title()} (mentioned in the conversation) are listed first")
        return location

    def unknown_location(self, location: Location) -> str:
        where = location.label()
        reason = f"no practitioner in the directory is at {where}"
        if location.city:
            suggestions = close_matches(location.city, self.directory.cities(location.state))
            if suggestions:
                reason += f"; did you mean {' or '.join(s.title() for s in suggestions)}?"
        return reason + " Check the spelling, use a ZIP or state only, or set locationMode to 'nearby'."

    def empty_reason(
        self, request: PractitionerQuery, merged: MergedIntent, location: Location | None
    ) -> str:
        if location is not None:
            return (
                f"no practitioner at {location.label()} matches the request; try locationMode 'nearby' or a "
                "wider location (state only)"
            )
        reason = (
            f"no practitioner profile contains the words of {request.user_query.strip()!r}, and the request "
            f"names no symptom, condition, procedure or specialty deepcite recognises; describe the problem "
            f"in other words, {EXAMPLES}"
        )
        return reason

    def intent_report(self, merged: MergedIntent, analyses: Analyses) -> IntentReport:
        return IntentReport(
            **merged.model_dump(include=set(IntentTerms.model_fields)),
            insights=analyses.insights,
            general=analyses.general,
            clinical=analyses.clinical,
        )

    def result(
        self,
        candidate: PractitionerCandidate,
        year: int,
        near: Location | None,
        merged: MergedIntent,
        intent: str | None,
    ) -> PractitionerResult:
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
            specialty_definition=self.taxonomy.plain_definition(specialty) if specialty else None,
            explanation=explain(candidate, intent, matches),
            proximity=near.proximity(p) if near is not None else None,
        )


async def search_practitioners(
    request: PractitionerQuery, finder: PractitionerFinder
) -> PractitionerSearchResponse:
    """Answer a patient's request with ranked practitioners, the intent behind them and the timings.

    Raises InputError (empty, over-long or unreadable request; bad location) and NotFoundError (empty
    directory); everything else, including a failing LLM, is answered.
    """
    return await finder.search(request)
