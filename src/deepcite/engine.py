"""The Engine: everything one deepcite process shares, built once from the settings.

Usage::

    from deepcite import Engine, QuestionRequest, SearchRequest, Settings

    with Engine(Settings.load()) as engine:
        hits = engine.search(SearchRequest(query="statins and atrial fibrillation", collection="demo"))
        response = engine.ask_sync(QuestionRequest(query="Do statins prevent AF after surgery?", collection="demo"))
        print(response.summary, [c.title for c in response.citations])

The HTTP app (``app.state.engine``, a FastAPI dependency), the MCP server (its lifespan context), the CLI
(Typer's ``ctx.obj``) and the Python API all hold one Engine, and call its operations: :meth:`search`,
:meth:`research`, :meth:`ask`, :meth:`regenerate`, :meth:`ingest`, :meth:`remove`, :attr:`jobs` and
:meth:`find_practitioners`. The Engine is the only place a shared object is built: the search store (one
handle for the data dir), the embedder, the LLM client (which remembers the structured-output mode its
server accepts), the reranker, HyDE, the coverage grader, the next-hop chooser, the web source, the
citation support check, the answer generator, the response-context store, the practitioner finder, the
ingest jobs, each collection and one research agent per collection (its passage-vector cache kept across
questions; the hop cap is each question's). Each is built on first use, under a lock, exactly once, and
handed to what needs it: no library constructor falls back to process settings or a module cache.
:meth:`close` releases what the Engine opened.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np

from deepcite.answer.context import ResponseContext, ResponseContextManager
from deepcite.answer.factory import build_generator, build_support
from deepcite.answer.generators import AnswerGenerator, require_selected
from deepcite.answer.pipeline import (
    Citation,
    PartResult,
    answer_budget,
    answer_context,
    generate_long_answer,
    generate_summary,
)
from deepcite.answer.support import CitationSupport
from deepcite.config import Settings
from deepcite.errors import (
    CollectionNotFoundError,
    DeepciteError,
    ForbiddenError,
    InputError,
    NotFoundError,
    RequestError,
    StoreError,
    document_not_found,
)
from deepcite.ingest.jobs import IngestJobs
from deepcite.ingest.pipeline import IngestPipeline, OnError
from deepcite.ingest.report import FileProgressCallback, IngestReport, ProgressCallback
from deepcite.llm.client import LLMClient
from deepcite.llm.deadline import RequestCancelled, current_budget
from deepcite.llm.factory import get_llm
from deepcite.models import (
    Chunk,
    CollectionInfo,
    CollectionStats,
    CoverageReport,
    Document,
    Filters,
    RoundReport,
    SearchHit,
    SearchMode,
)
from deepcite.research.agent import ResearchAgent, ResearchResult
from deepcite.research.llm_adapters import LLMCoverageGrader, LLMHyde, hop_chooser_for
from deepcite.research.state import ExecutorState
from deepcite.research.web.source import web_source_for
from deepcite.retrieval.check import CollectionCheck, check_collection
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import Embedder, build_embedder, embedder_precision
from deepcite.retrieval.filters import FILTER_FIELDS, check_filter_fields
from deepcite.retrieval.originals import OriginalsStore, StoredOriginal
from deepcite.retrieval.points import validate_collection_name
from deepcite.retrieval.rerankers import load_reranker
from deepcite.retrieval.store import SearchStore, open_store
from deepcite.saved_answers import SavedAnswer, SavedAnswerList, SavedAnswers, new_saved_answer
from deepcite.service import (
    AskResponse,
    Groups,
    HopCallback,
    HopEvent,
    OwnedContext,
    PartResponse,
    Passage,
    QuestionRequest,
    SearchRequest,
    SearchResponse,
    restrict_filters,
)

if TYPE_CHECKING:
    from deepcite.practitioners.api import PractitionerQuery, PractitionerSearchResponse
    from deepcite.practitioners.evaluation import EvalQuery, EvalReport
    from deepcite.practitioners.finder import PractitionerFinder
    from deepcite.practitioners.importers import ImportReport
    from deepcite.research.protocols import CoverageGrader, HopChooser, HydeGenerator, Reranker, WebSource

T = TypeVar("T")
# told, during a practitioner import, the rows read so far ("read") and each batch of profiles indexed ("indexed")
ImportProgress = Callable[[Literal["read", "indexed"], int], None]

log = logging.getLogger(__name__)


@dataclass
class _SearchTally:
    """One request's searches: how many succeeded, and the first failure."""

    succeeded: int = 0
    failure: DeepciteError | None = field(default=None)


_tally: ContextVar[_SearchTally | None] = ContextVar("deepcite_search_tally", default=None)


class _CollectionRetriever:
    """A collection as the research agent's retriever, keeping a tally of the current request's searches.

    The executor records a failing search and carries on (one bad query must not sink a question); but
    when *no* search of a request succeeded the store itself is broken, and an "insufficient evidence"
    answer would hide that, so :meth:`Engine.research` re-raises the first failure. The tally is
    per request (a context variable), so one agent serves concurrent requests.
    """

    def __init__(self, collection: Collection) -> None:
        self._collection = collection
        self.rrf_k = collection.rrf_k

    def search(
        self, query: str, *, mode: SearchMode, k: int, filters: Filters | None = None
    ) -> list[SearchHit]:
        tally = _tally.get()
        try:
            hits = self._collection.search(query, mode=mode, k=k, filters=filters)
        except DeepciteError as exc:
            if tally is not None and tally.failure is None:
                tally.failure = exc
            raise
        if tally is not None:
            tally.succeeded += 1
        return hits

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._collection.embed(texts)

    def vectors(self, chunks: Sequence[Chunk]) -> np.ndarray:
        """The stored dense vectors of these chunks (embedding only those the store lacks)."""
        return self._collection.vectors(chunks)


_UNSET: Any = object()


class Engine:
    """deepcite's shared objects, built once per process from ``settings`` (see the module docstring).

    ``store``/``embedder`` may be handed in (tests share one across apps); the Engine then leaves
    closing the store to its owner.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: SearchStore | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.settings = settings
        self._lock = threading.RLock()
        self._store = store
        self._owns_store = store is None
        self._embedder = embedder
        self._llm: LLMClient | None = _UNSET
        self._reranker: Reranker | None = _UNSET
        self._reranker_errors: list[str] = []
        self._hyde: HydeGenerator | None = _UNSET
        self._grader: CoverageGrader | None = _UNSET
        self._hop_chooser: HopChooser | None = _UNSET
        self._web: WebSource | None = _UNSET
        self._generator: AnswerGenerator | None = None
        self._support: CitationSupport | None = None
        self._contexts: ResponseContextManager | None = None
        self._saved: SavedAnswers | None = None
        self._finder: PractitionerFinder | None = None
        self._jobs: IngestJobs | None = None
        self._collections: dict[str, Collection] = {}
        self._agents: dict[str, ResearchAgent] = {}

    # -- lifecycle ------------------------------------------------------------------------------------------
    def __enter__(self) -> Engine:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start the background cleanup of expired response contexts."""
        self.contexts.start()

    def close(self) -> None:
        """Stop the context cleanup; close the practitioner directory, and the store if the Engine opened it."""
        with self._lock:
            if self._contexts is not None:
                self._contexts.stop()
            if self._jobs is not None:
                self._jobs.shutdown()  # queued uploads are dropped; a running one finishes
                self._jobs = None
            if self._finder is not None:
                self._finder.directory.close()  # not finder.close(): the store is shared
                self._finder = None
            if self._owns_store and self._store is not None:
                self._store.close()
                self._store = None
            if self._web is not _UNSET and self._web is not None:
                self._web.close()  # stops the web source's event-loop thread
                self._web = _UNSET  # built again if the Engine is used after close()
            self._collections.clear()
            self._agents.clear()

    # -- shared objects, each built once ---------------------------------------------------------------------
    def _once(self, attr: str, build: Callable[[], T], *, optional: bool = False) -> T:
        """``self.<attr>``, built by ``build`` on first use (once, under the lock). ``None`` means not built
        yet, unless ``optional``: then ``None`` is what ``build`` answered for a feature that is off."""

        def missing(value: Any) -> bool:
            return value is _UNSET or (value is None and not optional)

        value = getattr(self, attr)
        if missing(value):
            with self._lock:
                value = getattr(self, attr)
                if missing(value):
                    value = build()
                    setattr(self, attr, value)
        return value

    @property
    def store(self) -> SearchStore:
        """The search store of ``settings.data_dir`` (or the configured Qdrant server)."""
        return self._once("_store", lambda: open_store(self.settings))

    @property
    def embedder(self) -> Embedder:
        """The dense embedding model (loaded on first use: ``/healthz`` never loads it)."""
        return self._once("_embedder", lambda: build_embedder(self.settings))

    @property
    def llm(self) -> LLMClient | None:
        """The LLM client, or None offline; one client, so the structured-output mode it learned persists."""
        return self._once("_llm", lambda: get_llm(self.settings), optional=True)

    @property
    def reranker(self) -> Reranker | None:
        """The cross-encoder reranker when ``research.rerank_enabled``, loaded once."""
        return self._once(
            "_reranker", lambda: load_reranker(self.settings.research, self._reranker_errors), optional=True
        )

    @property
    def hyde(self) -> HydeGenerator | None:
        """HyDE through the LLM (a hypothetical answer passage searched for), or None offline."""
        return self._once("_hyde", lambda: LLMHyde(self.llm) if self.llm is not None else None, optional=True)

    @property
    def grader(self) -> CoverageGrader | None:
        """The LLM's grading of aspect coverage, or None offline (the heuristic grades alone)."""
        return self._once(
            "_grader", lambda: LLMCoverageGrader(self.llm) if self.llm is not None else None, optional=True
        )

    @property
    def hop_chooser(self) -> HopChooser | None:
        """The LLM's choice of each next hop when ``research.next_hop.enabled``, else None."""
        return self._once("_hop_chooser", lambda: hop_chooser_for(self.settings, self.llm), optional=True)

    @property
    def web_source(self) -> WebSource | None:
        """Web evidence per sub-question when ``web.enabled``, else None."""
        return self._once("_web", lambda: web_source_for(self.settings, self.llm), optional=True)

    @property
    def generator(self) -> AnswerGenerator:
        """The answer generator: the LLM writer with its extractive fallback, or the extractive writer."""
        return self._once("_generator", lambda: build_generator(self.settings, self.embedder, self.llm))

    @property
    def support(self) -> CitationSupport:
        """The check that a cited passage supports its sentence (the embedder; the LLM judge if configured)."""
        return self._once("_support", lambda: build_support(self.settings, self.embedder, self.llm))

    @property
    def contexts(self) -> ResponseContextManager:
        """The response contexts by request id (for regenerating a summary or an answer later)."""
        return self._once("_contexts", lambda: ResponseContextManager(self.settings.answer))

    @property
    def jobs(self) -> IngestJobs:
        """The background ingest jobs (uploads), run one at a time; ``server.job_history`` kept readable."""
        return self._once("_jobs", lambda: IngestJobs(self.settings.server.job_history))

    @property
    def saved(self) -> SavedAnswers:
        """The saved answers of the data dir: every answer, the newest ``saved.max_answers`` kept."""
        return self._once("_saved", lambda: SavedAnswers.open(self.settings))

    @property
    def finder(self) -> PractitionerFinder:
        """The practitioner finder over this Engine's store (its directory opened on first use)."""

        def build() -> PractitionerFinder:
            from deepcite.practitioners.finder import PractitionerFinder

            return PractitionerFinder.open(
                self.settings, store=self.store, embedder=self.embedder, llm=self.llm
            )

        return self._once("_finder", build)

    def context_count(self) -> int:
        """How many response contexts are kept for regeneration now (``answer.context.max_count`` at most)."""
        return self.contexts.size()

    # -- collections ------------------------------------------------------------------------------------------
    def collection_names(self) -> list[str]:
        """The document collections (the practitioner directory's profile index is not one)."""
        internal = {self.settings.practitioners.collection}
        return sorted(name for name in self.store.list_collections() if name not in internal)

    def collections(self, groups: Groups = None) -> list[CollectionInfo]:
        """The document collections with their chunk counts, read from each one's metadata: no collection is
        opened, so listing takes no lock (with ``groups``, the count of the chunks the caller may read opens
        it). A collection that cannot be read is listed as unreadable with the reason; the rest still work."""
        infos = []
        for name in self.collection_names():
            info = self.store.describe(name)
            if groups is not None and info.status == "ok":
                try:
                    info.chunks = self.count(name, groups)
                except DeepciteError as exc:
                    info = CollectionInfo(name=name, chunks=None, status="unreadable", problem=str(exc))
            infos.append(info)
        return infos

    def collection_name(self, name: str | None = None) -> str:
        """The document collection ``name`` names (default ``server.default_collection``); CollectionNotFoundError
        (404, naming the known ones) when there is none: the practitioner index is not one."""
        name = (name or self.settings.server.default_collection).strip()
        if not self._is_document_collection(name):
            raise CollectionNotFoundError(name, self.collection_names())
        return name

    def _is_document_collection(self, name: str) -> bool:
        return name != self.settings.practitioners.collection and self.store.has_collection(name)

    def collection(self, name: str | None = None, *, create: bool = False) -> Collection:
        """The named document collection (default ``server.default_collection``), opened once; 404 naming the
        known ones. An internal collection (the practitioner index) is not one: it gets the same 404, or
        with ``create`` (a collection an ingest makes) a 400. Its embedder is loaded when it first embeds."""
        name = (name or self.settings.server.default_collection).strip()
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        with self._lock:
            if name not in self._collections:
                if create:
                    self.check_target(name)
                else:
                    self.collection_name(name)
                self._collections[name] = Collection(name, self.store, self.settings, lambda: self.embedder)
            return self._collections[name]

    def collection_variant(self, name: str, settings: Settings) -> Collection:
        """Collection ``name`` under other ``settings`` (an evaluation's variant, e.g. its graph built with LLM
        triples), on this Engine's store and embedder; not kept: each call opens it anew."""
        self.check_target(name)
        return Collection(name, self.store, settings, lambda: self.embedder)

    def ingest_pipeline(self, name: str) -> IngestPipeline:
        """An ingest into collection ``name`` (created on its first write) with this Engine's store and
        embedder, and its LLM client to read triples when ``graph.llm_triples`` is on."""
        collection = self.collection(name, create=True)
        return IngestPipeline(collection, llm=self.llm if self.settings.graph.llm_triples else None)

    def check_target(self, name: str) -> None:
        """InputError (400) unless documents can be written to collection ``name``: a name that can name a
        folder, and not the practitioner directory's index."""
        OriginalsStore.for_collection(self.settings, name)  # checks the name
        if name == self.settings.practitioners.collection:
            raise InputError(
                f"{name!r} is the practitioner directory's index, not a document collection; "
                "write to another collection"
            )

    def checked_collection(self, request: SearchRequest | QuestionRequest) -> Collection:
        """The collection a checked ``request`` names, its filter fields checked against it: 404 for an
        unknown collection, RequestError (422) for a field that is neither a Chunk field nor a metadata key
        the collection has recorded (naming the known ones)."""
        col = self.collection(request.collection)
        filters = request.filters
        if filters is not None and filters.equals:
            metadata = any(f not in FILTER_FIELDS for f in filters.equals)  # read the keys only when named
            try:
                check_filter_fields(filters, self.store.metadata_keys(col.name) if metadata else ())
            except InputError as exc:
                raise RequestError(f"filters: {exc}") from exc
        return col

    def check(self, name: str) -> CollectionCheck:
        """Read a whole collection back and report what is damaged (see :func:`check_collection`)."""
        return check_collection(self.store, name)  # type: ignore[arg-type]

    def stats(self, name: str) -> CollectionStats:
        """A collection's chunks, documents and chunks per source, counted over every chunk."""
        name = self.collection_name(name)
        docs: set[str] = set()
        sources: Counter[str] = Counter()
        for chunk in self.store.scroll(name):
            docs.add(chunk.doc_id)
            sources[chunk.source or "(none)"] += 1
        return CollectionStats(
            name=name,
            chunks=sources.total(),
            documents=len(docs),
            sources=dict(sources),
            backend=self.settings.store.backend,
            vectors=self.store.vector_source(name),
            embedder_precision=embedder_precision(self.settings.embedder),
        )

    def count(self, name: str, groups: Groups = None) -> int:
        """How many chunks of collection ``name`` the caller with ``groups`` may read."""
        return self.store.count(name, restrict_filters(None, groups))

    def agent(self, collection: str | None = None) -> ResearchAgent:
        """The research agent of a collection, built once (its passage-vector cache kept across questions);
        each question brings its own hop cap."""
        col = self.collection(collection)
        cached = self._agents.get(col.name)
        if cached is not None:
            return cached
        with self._lock:
            if col.name not in self._agents:
                self._agents[col.name] = ResearchAgent(
                    _CollectionRetriever(col),
                    self.settings.research,
                    llm_client=self.llm,
                    reranker=self.reranker,
                    hyde=self.hyde,
                    grader=self.grader,
                    web_source=self.web_source,
                    hop_chooser=self.hop_chooser,
                    notes=self._reranker_errors,
                )
            return self._agents[col.name]

    # -- the operations ------------------------------------------------------------------------------------------
    def search(self, request: SearchRequest, groups: Groups = None) -> SearchResponse:
        """One plain search of a collection (no planning), restricted to the caller's ``groups``."""
        request = request.checked(self.settings)
        col = self.checked_collection(request)
        mode = request.mode or SearchMode.from_str(self.settings.search.default_mode)
        filters = restrict_filters(request.filters, groups)
        hits = col.search(request.query, mode=mode, k=request.k, filters=filters, fusion=request.fusion)
        return SearchResponse(
            collection=col.name, query=request.query, mode=mode, hits=[Passage.from_hit(h) for h in hits]
        )

    async def research(
        self, request: QuestionRequest, groups: Groups = None, on_hop: HopCallback | None = None
    ) -> ResearchResult:
        """Plan and research the question in a worker thread; ``on_hop`` runs on the event loop after each hop."""
        request = request.checked(self.settings)
        filters = restrict_filters(request.filters, groups)
        await asyncio.to_thread(self.checked_collection, request)
        agent = await asyncio.to_thread(self.agent, request.collection)
        loop = asyncio.get_running_loop()

        def on_round(state: ExecutorState, report: RoundReport) -> None:
            budget = current_budget()
            if budget is not None and budget.cancelled:  # the client went away: no further hops
                raise RequestCancelled(f"research of {request.query!r} stopped after hop {report.round}")
            if on_hop is not None:
                coverage = CoverageReport.from_coverage(
                    state.coverage,
                    threshold=agent.settings.coverage.threshold,
                    enabled=agent.settings.coverage.enabled,
                )
                event = HopEvent.from_round(state, report, coverage)
                loop.call_soon_threadsafe(on_hop, event)

        def work() -> ResearchResult:
            tally = _SearchTally()
            token = _tally.set(tally)
            try:
                result = agent.process(
                    request.query, max_hops=request.max_hops, filters=filters, on_round=on_round
                )
            finally:
                _tally.reset(token)
            if tally.failure is not None and not tally.succeeded:
                raise tally.failure
            return result

        return await asyncio.to_thread(work)

    async def ask(
        self, request: QuestionRequest, groups: Groups = None, on_hop: HopCallback | None = None
    ) -> AskResponse:
        """Research the question, then answer it with citations from one shared context.

        An empty evidence pack yields the insufficient-evidence template with ``success`` true and no
        citations. The context is kept (``answer.context.ttl_s``) for :meth:`regenerate`. The whole request
        runs within ``answer.budget.request_s`` (see :func:`deepcite.answer.pipeline.answer_budget`).
        """
        with answer_budget(self.settings.answer):
            return (await self._answer(request, groups, on_hop)).response

    async def _answer(
        self,
        request: QuestionRequest,
        groups: Groups,
        on_hop: HopCallback | None,
        previous: SavedAnswer | None = None,
    ) -> SavedAnswer:
        """Research and answer ``request``, and save the answer (a re-run of ``previous`` when given)."""
        request = request.checked(self.settings)
        started = time.perf_counter()
        result = await self.research(request, groups, on_hop)
        retrieval_ms = (time.perf_counter() - started) * 1000.0
        ctx = OwnedContext.from_pack(result.pack, self.settings.answer)
        filters = restrict_filters(request.filters, groups)
        ctx.acl_groups = filters.acl_groups if filters is not None else None
        self.contexts.put(ctx)
        generator = await asyncio.to_thread(lambda: self.generator)  # may load the model once
        support = await asyncio.to_thread(lambda: self.support)
        answered = await answer_context(ctx, generator, self.settings.answer, support)
        response = AskResponse(
            **answered.model_dump(exclude={"coverage", "retrieval_report", "retrieval_latency_ms"}),
            coverage=result.coverage,
            retrieval_report=result.pack.retrieval_report,
            retrieval_latency_ms=retrieval_ms,
        )
        saved = new_saved_answer(
            collection=request.collection or self.settings.server.default_collection,
            request=request,
            settings=self.settings,
            pack=result.pack,
            response=response,
            acl_groups=ctx.acl_groups,
            previous=previous,
        )
        try:
            await asyncio.to_thread(self.saved.save, saved)
        except StoreError as exc:  # the answer still reaches the caller; the log says why it was not kept
            log.error("answer %s was not saved: %s", response.request_id, exc)
        return saved

    def research_sync(self, request: QuestionRequest, groups: Groups = None) -> ResearchResult:
        """:meth:`research` for code without an event loop."""
        return asyncio.run(self.research(request, groups))

    def ask_sync(self, request: QuestionRequest, groups: Groups = None) -> AskResponse:
        """:meth:`ask` for code without an event loop."""
        return asyncio.run(self.ask(request, groups))

    async def regenerate(self, request_id: str, part: str, groups: Groups = None) -> PartResponse:
        """A new quick summary (``part="summary"``) or long answer (``"answer"``) of a stored request.

        NotFoundError when the id is unknown, expired or not the caller's to read (ids do not leak);
        InsufficientEvidenceError when the context holds no chunks.
        """
        ctx = self._stored(request_id, groups)
        generator = await asyncio.to_thread(lambda: self.generator)
        support = await asyncio.to_thread(lambda: self.support)
        with answer_budget(self.settings.answer):
            if part == "summary":
                result: PartResult = await generate_summary(ctx, generator, self.settings.answer, support)
                return _part_response(ctx, "summary", result)
            result = await generate_long_answer(ctx, generator, self.settings.answer, support)
            return _part_response(ctx, "answer", result)

    def saved_answers(
        self, collection: str | None = None, groups: Groups = None, limit: int | None = None
    ) -> SavedAnswerList:
        """The newest saved answers of a collection (default ``server.default_collection``) that the caller
        with ``groups`` may read."""
        name = (collection or self.settings.server.default_collection).strip()
        try:
            validate_collection_name(name, self.settings.store.max_collection_name_chars)
        except InputError as exc:
            raise RequestError(f"collection: {exc}") from exc
        return SavedAnswerList(collection=name, answers=self.saved.list(name, groups, limit))

    def saved_answer(self, answer_id: str, groups: Groups = None) -> SavedAnswer:
        """One saved answer; NotFoundError when there is none the caller may read."""
        return self.saved.get(answer_id, groups)

    def delete_saved_answer(self, answer_id: str, groups: Groups = None) -> None:
        """Delete a saved answer the caller may read; NotFoundError otherwise."""
        self.saved.delete(answer_id, groups)

    async def rerun(self, answer_id: str, groups: Groups = None) -> SavedAnswer:
        """Ask a saved answer's question again, as it was asked, against the collection as it is now; the new
        answer is saved with ``rerun_of`` and ``changes``: which cited passages were added, removed or
        changed. NotFoundError when there is no saved answer the caller may read."""
        previous = await asyncio.to_thread(self.saved.get, answer_id, groups)
        request = previous.request.model_copy(update={"collection": previous.collection})
        with answer_budget(self.settings.answer):
            return await self._answer(request, groups, None, previous)

    async def find_practitioners(self, query: PractitionerQuery) -> PractitionerSearchResponse:
        """Ranked practitioners for a patient's request, with the intent behind them and the timings."""
        from deepcite.practitioners.finder import search_practitioners

        finder = await asyncio.to_thread(lambda: self.finder)
        return await search_practitioners(query, finder)

    def import_practitioners(
        self, path: Path, fmt: str, progress: ImportProgress | None = None
    ) -> ImportReport:
        """Import (or update by NPI) a practitioner file into the directory in one transaction, then index the
        profiles; ``progress`` is told the rows read so far (``"read"``) and each batch of profiles indexed
        (``"indexed"``) as they go."""
        if progress is None:
            return self.finder.import_file(path, fmt)
        return self.finder.import_file(
            path, fmt, on_row=lambda n: progress("read", n), on_index=lambda n: progress("indexed", n)
        )

    def reindex_practitioners(self) -> int:
        """Rewrite every profile into the practitioner search collection; returns how many were written."""
        finder = self.finder
        return finder.index.sync(finder.directory)

    def practitioner_count(self) -> int:
        """How many practitioners the directory holds."""
        return self.finder.directory.count()

    async def evaluate_practitioners(self, queries: list[EvalQuery]) -> EvalReport:
        """nDCG@10 and P@10 of the finder's systems on judged ``queries`` (see
        :func:`deepcite.practitioners.evaluation.evaluate`)."""
        from deepcite.practitioners.evaluation import evaluate

        finder = await asyncio.to_thread(lambda: self.finder)
        return await evaluate(finder, queries)

    def ingest(
        self,
        collection: str,
        source: str | Path | Iterable[Document],
        *,
        fmt: str = "auto",
        on_error: OnError = "fail",
        rebuild: bool = False,
        progress: ProgressCallback | None = None,
        on_progress: FileProgressCallback | None = None,
        ray: str | None = None,
    ) -> IngestReport:
        """Read, chunk, embed and index ``source`` (a file, a folder or Documents) into ``collection``, made
        on first ingest; ``rebuild`` drops the collection first. See :meth:`IngestPipeline.ingest`."""
        if rebuild:
            self.drop(collection)
        return self.ingest_pipeline(collection).ingest(
            source, fmt=fmt, on_error=on_error, progress=progress, on_progress=on_progress, ray=ray
        )

    def ingest_files(
        self,
        collection: str,
        paths: Sequence[Path],
        *,
        names: Sequence[str] | None = None,
        acl: Sequence[str] = (),
        on_error: OnError = "fail",
        on_progress: FileProgressCallback | None = None,
    ) -> IngestReport:
        """Ingest these files (uploads) into ``collection`` under ``names``, each document shared with the
        ``acl`` groups. See :meth:`IngestPipeline.ingest_files`."""
        return self.ingest_pipeline(collection).ingest_files(
            paths, names=names, acl=acl, on_error=on_error, on_progress=on_progress
        )

    def remove(self, collection: str, doc_id: str, groups: Groups = None) -> int:
        """Delete a document's chunks and its original; returns the number of chunks deleted.

        NotFoundError (404) when the collection holds no such document the caller with ``groups`` may read;
        ForbiddenError (403) when a restricted caller may read it but it is not shared with one of its
        groups (a public document only an unrestricted caller may delete).
        """
        col = self.collection(collection)
        readable = self._readable(col.name, doc_id, groups)
        if not readable and (groups is not None or col.originals.get(doc_id) is None):
            raise document_not_found(col.name)
        if groups is not None and not col.count(Filters(doc_ids=[doc_id], equals={"acl": list(groups)})):
            raise ForbiddenError(
                "this document is public or shared with groups your token does not have; only an "
                "unrestricted token may delete it"
            )
        return col.delete_document(doc_id)

    def document_passages(self, collection: str, doc_id: str, groups: Groups = None) -> list[Chunk]:
        """A document's passages that the caller with ``groups`` may read, in reading order.

        CollectionNotFoundError (404) for an unknown collection; NotFoundError (404) when there are none: a
        document that does not exist and one the caller may not read look the same.
        """
        name = self.collection_name(collection)
        chunks = list(self.store.scroll(name, _document_filter(doc_id, groups)))
        if not chunks:
            raise document_not_found(name)
        return sorted(chunks, key=lambda chunk: chunk.position)

    def original_record(self, collection: str, doc_id: str, groups: Groups = None) -> StoredOriginal | None:
        """The record of a document's stored original file (its name and media type), None when none is
        stored, for a caller who may read the document: InputError (400) for a name that cannot be a
        collection, NotFoundError (404) when there is no such document the caller may read."""
        originals = OriginalsStore.for_collection(self.settings, collection)
        if not self._readable(collection, doc_id, groups):
            raise document_not_found(collection)
        return originals.get(doc_id)

    def original(self, collection: str, doc_id: str, groups: Groups = None) -> tuple[StoredOriginal, Path]:
        """A document's stored original file (its record and its path), as :meth:`original_record` checks
        it; NotFoundError also when no original is stored for it."""
        row = self.original_record(collection, doc_id, groups)
        path = OriginalsStore.for_collection(self.settings, collection).path_for(doc_id) if row else None
        if row is None or path is None:
            raise NotFoundError(
                f"the document is in collection {collection!r} but no original file is stored for it "
                "(it was ingested from records, or before originals were kept); re-ingest its file"
            )
        return row, path

    def _readable(self, collection: str, doc_id: str, groups: Groups) -> int:
        """How many chunks of document ``doc_id`` in ``collection`` the caller with ``groups`` may read (the
        search ACL rule; 0 for the practitioner index or a collection that does not exist)."""
        if not self._is_document_collection(collection):
            return 0
        return self.store.count(collection, _document_filter(doc_id, groups))

    def drop(self, collection: str) -> None:
        """Delete a document collection, its originals and its graph (nothing happens when it does not exist)."""
        try:
            col = self.collection(collection)
        except CollectionNotFoundError:
            return
        with self._lock:
            col.drop()
            self._collections.pop(col.name, None)
            self._agents.pop(col.name, None)

    def _stored(self, request_id: str, groups: Groups) -> ResponseContext:
        ctx = self.contexts.get(request_id)
        owner = ctx.acl_groups if isinstance(ctx, OwnedContext) else None
        if groups is not None and (owner is None or not set(owner) <= set(groups)):
            raise NotFoundError(
                f"no answer context for request id {request_id!r} that you may read; run the search again"
            )
        require_selected(ctx)  # 422: nothing is regenerated from an empty context
        return ctx


def _document_filter(doc_id: str, groups: Groups) -> Filters | None:
    """The chunks of document ``doc_id`` that the caller with ``groups`` may read (the search ACL rule)."""
    return restrict_filters(Filters(doc_ids=[doc_id]), groups)


def _part_response(ctx: ResponseContext, name: str, part: PartResult) -> PartResponse:
    return PartResponse(
        request_id=ctx.request_id,
        query=ctx.query,
        part=name,  # type: ignore[arg-type]
        text=part.text,
        citations=[Citation.from_chunk(c, part.check.claims) for c in ctx.selected_chunks],
        citation_check=part.check,
        latency_ms=part.latency_ms,
        chunks_used=len(part.check.cited_ids),
        degraded=part.degraded,
        insufficient=part.insufficient,
    )
