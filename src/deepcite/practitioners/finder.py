"""The practitioner finder: a patient's request in, ranked practitioners with their reasons out.

Usage::

    finder = engine.practitioners.finder                                    # the Engine's: its store, embedder and LLM
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

The finder builds the stages' :class:`~deepcite.practitioners.context.FinderContext` once (settings, directory,
profile index, semantic stage, taxonomy, catalogue, LLM) and hands it with each request's state to the
pipeline; the stages never see the finder.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

from deepcite.config import Settings
from deepcite.errors import InputError, NotFoundError, RequestError
from deepcite.llm.client import LLMClient
from deepcite.models import Chunk
from deepcite.practitioners.api import PractitionerQuery, PractitionerSearchResponse
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.importers import ImportReport, import_file
from deepcite.practitioners.index import ProfileIndex
from deepcite.practitioners.location import Location, parse_location
from deepcite.practitioners.offline import Conversation
from deepcite.practitioners.pipeline import (
    EXAMPLES,
    FINDER_PIPELINE,
    FinderContext,
    FinderPipeline,
    FinderState,
)
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
        self.context = FinderContext(
            settings=settings.practitioners,
            directory=directory,
            index=self.index,
            semantic=self.semantic,
            taxonomy=self.taxonomy,
            catalogue=self.catalogue,
            llm=llm,
        )

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
        return await self.pipeline.run(state, self.context)

    # -- helpers ------------------------------------------------------------------------------------------

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


async def search_practitioners(
    request: PractitionerQuery, finder: PractitionerFinder
) -> PractitionerSearchResponse:
    """Answer a patient's request with ranked practitioners, the intent behind them and the timings.

    Raises InputError (empty, over-long or unreadable request; bad location) and NotFoundError (empty
    directory); everything else, including a failing LLM, is answered.
    """
    return await finder.search(request)
