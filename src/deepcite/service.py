"""The one orchestration the HTTP API, the CLI and the MCP server share: research, then answer.

Usage::

    from deepcite import service

    response = await service.ask("Does atrial fibrillation raise stroke risk?", collection="demo")
    print(response.summary, [c.title for c in response.citations])

:func:`ask` runs the research engine (synchronous, so in a worker thread), then the answer stage: the
sub-answers, then the quick summary and the long answer in parallel from one shared context, which is
kept in the process-wide :func:`context_store` so :func:`regenerate_summary` and
:func:`regenerate_answer` can rewrite them later by request id. ``groups`` are the caller's ACL groups:
they restrict retrieval, so no chunk outside them reaches evidence, citations or answers.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

from deepcite.answer.citations import CitationCheck
from deepcite.answer.context import ResponseContext, ResponseContextManager
from deepcite.answer.factory import build_generator
from deepcite.answer.generators import AnswerGenerator, require_selected
from deepcite.answer.pipeline import (
    AnswerResult,
    Citation,
    PartResult,
    answer_context,
    generate_long_answer,
    generate_summary,
)
from deepcite.config import Settings, get_settings
from deepcite.errors import DeepciteError, InputError, NotFoundError
from deepcite.llm.factory import get_llm
from deepcite.models import Chunk, Filters, RoundReport, SearchHit, SearchMode
from deepcite.research.agent import ResearchAgent, ResearchResult
from deepcite.research.state import ExecutorState
from deepcite.research.web.source import web_source_for
from deepcite.retrieval.collection import Collection, open_collection, passage_text
from deepcite.retrieval.embedder import Embedder
from deepcite.retrieval.embedders import get_embedder
from deepcite.retrieval.filters import filter_conditions


class HopEvent(BaseModel):
    """One finished research hop, with the coverage reached so far (streamed to clients as it happens)."""

    hop: int
    subquestion: str
    queries: list[str]
    selected: int
    new_evidence: int
    evidence_total: int
    coverage_percentage: float
    weighted_coverage: float
    uncovered_aspects: list[str]
    decision: str
    reason: str
    coverage: dict[str, Any]  # {threshold, coverage_percentage, aspects: [{aspect, coverage_score}]}

    @classmethod
    def from_round(cls, state: ExecutorState, report: RoundReport, threshold: float) -> HopEvent:
        scores = state.coverage.coverage_scores
        return cls(
            hop=report.round,
            subquestion=report.subquestion,
            queries=report.queries,
            selected=len(report.selected),
            new_evidence=report.new_evidence,
            evidence_total=len(state.evidence),
            coverage_percentage=report.coverage_percentage,
            weighted_coverage=report.weighted_coverage,
            uncovered_aspects=report.uncovered_aspects,
            decision=report.decision,
            reason=report.reason,
            coverage={
                "threshold": threshold,
                "coverage_percentage": report.coverage_percentage,
                "weighted_coverage": report.weighted_coverage,
                "aspects": [
                    {"aspect": a.aspect, "coverage_score": scores.get(a.aspect, 0.0)}
                    for a in state.coverage.aspects
                ],
            },
        )


HopCallback = Callable[[HopEvent], None]
Groups = list[str] | tuple[str, ...] | None  # the caller's ACL groups; None means unrestricted


class AskResponse(AnswerResult):
    """The ``/api/unified-search`` response; ``coverage`` is the aspect coverage summary of the research."""

    coverage: dict[str, Any] | None = None  # type: ignore[assignment]


class OwnedContext(ResponseContext):
    """A response context that remembers the ACL groups it was retrieved under (None: unrestricted)."""

    acl_groups: list[str] | None = None


class PartResponse(BaseModel):
    """A regenerated quick summary or long answer of a stored request."""

    success: bool = True
    request_id: str
    query: str
    part: Literal["summary", "answer"]
    text: str
    citations: list[Citation]
    citation_check: CitationCheck
    latency_ms: float
    chunks_used: int


# -- process-wide state ---------------------------------------------------------------------------------
_lock = threading.Lock()
_contexts: ResponseContextManager | None = None
_passage_vectors: PassageVectorCache | None = None
_generators: dict[tuple[int, str], tuple[Embedder, AnswerGenerator]] = {}


def context_store(settings: Settings | None = None) -> ResponseContextManager:
    """The process-wide store of response contexts (created, with background cleanup, on first use)."""
    global _contexts
    with _lock:
        if _contexts is None:
            _contexts = ResponseContextManager((settings or get_settings()).answer)
            _contexts.start()
        return _contexts


def passage_vectors(settings: Settings | None = None) -> PassageVectorCache:
    """The process-wide passage vector cache (``research.vector_cache_size`` rows)."""
    global _passage_vectors
    with _lock:
        if _passage_vectors is None:
            _passage_vectors = PassageVectorCache((settings or get_settings()).research.vector_cache_size)
        return _passage_vectors


def generator_for(embedder: Embedder, settings: Settings) -> AnswerGenerator:
    """The answer generator for this embedder and these settings (built once, then reused)."""
    key = (id(embedder), settings.llm.model_dump_json() + settings.answer.model_dump_json())
    with _lock:
        cached = _generators.get(key)
        if cached is None or cached[0] is not embedder:
            cached = (embedder, build_generator(settings, embedder, get_llm(settings)))
            _generators[key] = cached
        return cached[1]


# -- helpers --------------------------------------------------------------------------------------------
def restrict_filters(filters: Filters | None, groups: Groups) -> Filters | None:
    """``filters`` limited to the caller's ACL ``groups`` (None: unrestricted). Requested groups are
    intersected with the caller's, so a request can narrow its access but never widen it."""
    if groups is None:
        return filters
    restricted = filters.model_copy(deep=True) if filters is not None else Filters()
    allowed = set(groups)
    requested = restricted.acl_groups
    restricted.acl_groups = sorted(allowed if requested is None else allowed & set(requested))
    return restricted


def resolve_collection(collection: Collection | str, settings: Settings) -> Collection:
    """A Collection object as is, or an existing collection by name (CollectionNotFoundError otherwise)."""
    if isinstance(collection, Collection):
        return collection
    return open_collection(collection, settings, create=False)


def prepare_filters(filters: Filters | None, groups: Groups) -> Filters | None:
    """The filters a search runs with: restricted to ``groups``; InputError when no store could run them."""
    restricted = restrict_filters(filters, groups)
    filter_conditions(restricted)  # raises InputError on a filter no store could run
    return restricted


def check_max_hops(max_hops: int | None, settings: Settings) -> None:
    cap = settings.research.max_hops
    if max_hops is not None and not 1 <= max_hops <= cap:
        raise InputError(f"max_hops must be between 1 and {cap} (setting research.max_hops), not {max_hops}")


class PassageVectorCache:
    """Process-wide LRU of passage vectors by (collection, chunk id), shared by every request (thread-safe).

    Chunk ids are stable (same text, same id), so a passage embedded for one question is reused by the
    next; ``research.vector_cache_size`` rows are kept.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._rows: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, collection: Collection, chunks: Sequence[Chunk]) -> np.ndarray:
        """One unit row per chunk; misses are embedded with the collection's embedder, then kept."""
        keys = [(collection.name, c.chunk_id) for c in chunks]
        with self._lock:
            found = {k: self._rows[k] for k in keys if k in self._rows}
            for k in found:
                self._rows.move_to_end(k)
        missing = {k: c for k, c in zip(keys, chunks, strict=True) if k not in found}
        if missing:
            rows = collection.embed([passage_text(c) for c in missing.values()])
            fresh = dict(zip(missing, np.asarray(rows, dtype=np.float32), strict=True))
            found.update(fresh)
            with self._lock:
                self._rows.update(fresh)
                while len(self._rows) > self.capacity:
                    self._rows.popitem(last=False)
        if not keys:
            return np.zeros((0, collection.embedder.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])


class _RequestRetriever:
    """A collection as one request's research retriever: passage vectors from the shared cache, and
    a memory of whether every search failed.

    The executor records a failing search and carries on (one bad query must not sink a question); but
    when *no* search succeeded the store itself is broken, and an "insufficient evidence" answer would
    hide that, so :func:`research` re-raises the first failure.
    """

    def __init__(self, collection: Collection, cache: PassageVectorCache) -> None:
        self._collection = collection
        self._cache = cache
        self.succeeded = 0
        self.failure: DeepciteError | None = None

    def search(
        self, query: str, *, mode: SearchMode, k: int, filters: Filters | None = None
    ) -> list[SearchHit]:
        try:
            hits = self._collection.search(query, mode=mode, k=k, filters=filters)
        except DeepciteError as exc:
            self.failure = self.failure or exc
            raise
        self.succeeded += 1
        return hits

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._collection.embed(texts)

    def vectors(self, chunks: Sequence[Chunk]) -> np.ndarray:
        """Passage vectors (:class:`deepcite.research.vectors.StoredVectors`): the collection's stored
        ones when it can hand them back, else the shared cache's."""
        stored = getattr(self._collection, "vectors", None)
        if callable(stored):
            return stored(chunks)
        return self._cache.vectors(self._collection, chunks)


# -- the three operations -------------------------------------------------------------------------------
def search(
    query: str,
    *,
    collection: Collection | str,
    mode: SearchMode | str | None = None,
    k: int | None = None,
    filters: Filters | None = None,
    groups: Groups = None,
    settings: Settings | None = None,
) -> list[SearchHit]:
    """One plain search of a collection (no planning), restricted to the caller's groups."""
    settings = settings or get_settings()
    col = resolve_collection(collection, settings)
    return col.search(query, mode=mode, k=k, filters=prepare_filters(filters, groups))


async def research(
    query: str,
    *,
    collection: Collection | str,
    filters: Filters | None = None,
    max_hops: int | None = None,
    groups: Groups = None,
    settings: Settings | None = None,
    on_hop: HopCallback | None = None,
) -> ResearchResult:
    """Run the research engine in a worker thread; ``on_hop`` is called on the event loop after each hop."""
    settings = settings or get_settings()
    check_max_hops(max_hops, settings)
    filters = prepare_filters(filters, groups)
    col = resolve_collection(collection, settings)
    llm = get_llm(settings)
    web = web_source_for(settings, llm)  # web evidence per sub-question when settings.web.enabled
    retriever = _RequestRetriever(col, passage_vectors(settings))
    agent = ResearchAgent(
        retriever, llm_client=llm, max_hops=max_hops, settings=settings.research, web_source=web
    )
    loop = asyncio.get_running_loop()

    def on_round(state: ExecutorState, report: RoundReport) -> None:
        if on_hop is not None:
            event = HopEvent.from_round(state, report, agent.settings.aspect_coverage_threshold)
            loop.call_soon_threadsafe(on_hop, event)

    result = await asyncio.to_thread(agent.process, query, filters=filters, on_round=on_round)
    if retriever.failure is not None and not retriever.succeeded:
        raise retriever.failure
    return result


async def ask(
    query: str,
    *,
    collection: Collection | str,
    filters: Filters | None = None,
    max_hops: int | None = None,
    groups: Groups = None,
    settings: Settings | None = None,
    on_hop: HopCallback | None = None,
) -> AskResponse:
    """Research ``query`` in ``collection``, then answer it with citations (see the module docstring).

    An empty evidence pack yields the insufficient-evidence template with ``success`` true and no citations.
    """
    settings = settings or get_settings()
    col = resolve_collection(collection, settings)
    filters = prepare_filters(filters, groups)
    started = time.perf_counter()
    result = await research(
        query, collection=col, filters=filters, max_hops=max_hops, settings=settings, on_hop=on_hop
    )
    retrieval_ms = (time.perf_counter() - started) * 1000.0
    ctx = OwnedContext.from_pack(result.pack, settings.answer)
    ctx.acl_groups = filters.acl_groups if filters is not None else None
    context_store(settings).put(ctx)
    answered = await answer_context(ctx, generator_for(col.embedder, settings), settings.answer)
    coverage = result.coverage.model_dump(mode="json")
    return AskResponse(
        **answered.model_dump(exclude={"coverage", "retrieval_report", "retrieval_latency_ms"}),
        coverage=coverage,
        retrieval_report=result.pack.retrieval_report,
        retrieval_latency_ms=retrieval_ms,
    )


def _generator(embedder: Embedder | None, settings: Settings) -> AnswerGenerator:
    return generator_for(embedder or get_embedder(settings), settings)


def _stored(request_id: str, groups: Groups, settings: Settings) -> ResponseContext:
    """The stored context, if the caller may read it (else NotFoundError, so ids do not leak)."""
    ctx = context_store(settings).get(request_id)
    owner = ctx.acl_groups if isinstance(ctx, OwnedContext) else None
    if groups is not None and (owner is None or not set(owner) <= set(groups)):
        raise NotFoundError(
            f"no answer context for request id {request_id!r} that you may read; run the search again"
        )
    require_selected(ctx)  # 422: nothing is regenerated from an empty context
    return ctx


async def regenerate_summary(
    request_id: str,
    *,
    groups: Groups = None,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
) -> PartResponse:
    """A new quick summary of a stored request (NotFoundError: unknown/expired; InsufficientEvidenceError:
    no chunks)."""
    settings = settings or get_settings()
    ctx = _stored(request_id, groups, settings)
    part = await generate_summary(ctx, _generator(embedder, settings), settings.answer)
    return _part_response(ctx, "summary", part)


async def regenerate_answer(
    request_id: str,
    *,
    groups: Groups = None,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
) -> PartResponse:
    """A new long answer of a stored request (errors as :func:`regenerate_summary`)."""
    settings = settings or get_settings()
    ctx = _stored(request_id, groups, settings)
    part = await generate_long_answer(ctx, _generator(embedder, settings), settings.answer)
    return _part_response(ctx, "answer", part)


def _part_response(
    ctx: ResponseContext, name: Literal["summary", "answer"], part: PartResult
) -> PartResponse:
    return PartResponse(
        request_id=ctx.request_id,
        query=ctx.query,
        part=name,
        text=part.text,
        citations=[Citation.from_chunk(c) for c in ctx.selected_chunks],
        citation_check=part.check,
        latency_ms=part.latency_ms,
        chunks_used=len(part.check.cited_ids),
    )
