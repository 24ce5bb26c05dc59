"""Answers: plain search, research, and cited answers (ask, regenerate, re-run) over the corpus.

A request is checked once, into a :class:`CheckedQuestion` (limits applied, the collection found, the filters
checked and narrowed to the caller's ACL groups), which every later step takes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from deepcite.answer.context import ResponseContext
from deepcite.answer.generators import require_selected
from deepcite.answer.pipeline import (
    Citation,
    PartResult,
    answer_budget,
    generate_long_answer,
    generate_summary,
)
from deepcite.app.assembly import SearchTally, answer_stage, research_agent, search_tally
from deepcite.app.corpus import Corpus
from deepcite.app.resources import Resources
from deepcite.app.saved import Saved
from deepcite.errors import NotFoundError, StoreError
from deepcite.llm.deadline import RequestCancelled, current_budget
from deepcite.models import Filters, RoundReport, SearchMode
from deepcite.research.agent import ResearchAgent, ResearchResult
from deepcite.research.state import ExecutorState
from deepcite.retrieval.collection import Collection
from deepcite.saved_answers import SavedAnswer, new_saved_answer
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

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckedQuestion:
    """A question request checked once: within the limits, its collection found and its filter fields known,
    its filters narrowed to the caller's ACL groups (``acl_groups``: None for an unrestricted caller)."""

    request: QuestionRequest
    collection: Collection
    filters: Filters | None
    acl_groups: list[str] | None


class Answers:
    """Search, research and answer over the corpus's collections, one research agent per collection."""

    def __init__(self, resources: Resources, corpus: Corpus, saved: Saved) -> None:
        self.resources = resources
        self.settings = resources.settings
        self.corpus = corpus
        self.saved = saved
        self._agents: dict[str, ResearchAgent] = {}

    def agent(self, collection: Collection) -> ResearchAgent:
        """The research agent of a collection, built once (its passage-vector cache kept across questions),
        anew when the collection was dropped and opened again."""
        cached = self._agents.get(collection.name)
        if cached is None or cached.retriever.collection is not collection:  # type: ignore[attr-defined]
            with self.resources.lock:
                cached = self._agents[collection.name] = research_agent(collection, self.resources)
        return cached

    def check(self, request: QuestionRequest | CheckedQuestion, groups: Groups = None) -> CheckedQuestion:
        """``request`` checked once (see :class:`CheckedQuestion`): RequestError (422) out of limits or for an
        unknown filter field, CollectionNotFoundError (404) for an unknown collection."""
        if isinstance(request, CheckedQuestion):
            return request
        request = request.checked(self.settings)
        collection = self.corpus.checked(request.collection, request.filters)
        filters = restrict_filters(request.filters, groups)
        acl = filters.acl_groups if filters is not None else None
        return CheckedQuestion(request=request, collection=collection, filters=filters, acl_groups=acl)

    def search(self, request: SearchRequest, groups: Groups = None) -> SearchResponse:
        """One plain search of a collection (no planning), restricted to the caller's ``groups``."""
        request = request.checked(self.settings)
        col = self.corpus.checked(request.collection, request.filters)
        mode = request.mode or SearchMode.from_str(self.settings.search.default_mode)
        filters = restrict_filters(request.filters, groups)
        hits = col.search(request.query, mode=mode, k=request.k, filters=filters, fusion=request.fusion)
        return SearchResponse(
            collection=col.name, query=request.query, mode=mode, hits=[Passage.from_hit(h) for h in hits]
        )

    async def research(
        self,
        request: QuestionRequest | CheckedQuestion,
        groups: Groups = None,
        on_hop: HopCallback | None = None,
    ) -> ResearchResult:
        """Plan and research the question in a worker thread; ``on_hop`` runs on the event loop after each hop."""
        checked = await asyncio.to_thread(self.check, request, groups)
        agent = await asyncio.to_thread(self.agent, checked.collection)
        loop = asyncio.get_running_loop()
        query = checked.request.query

        def on_round(state: ExecutorState, report: RoundReport) -> None:
            budget = current_budget()
            if budget is not None and budget.cancelled:  # the client went away: no further hops
                raise RequestCancelled(f"research of {query!r} stopped after hop {report.round}")
            if on_hop is not None:
                coverage = agent.coverage_report(state.coverage)
                loop.call_soon_threadsafe(on_hop, HopEvent.from_round(state, report, coverage))

        def work() -> ResearchResult:
            tally = SearchTally()
            token = search_tally.set(tally)
            try:
                result = agent.process(
                    query, max_hops=checked.request.max_hops, filters=checked.filters, on_round=on_round
                )
            finally:
                search_tally.reset(token)
            if tally.failure is not None and not tally.succeeded:
                raise tally.failure
            return result

        return await asyncio.to_thread(work)

    async def ask(
        self,
        request: QuestionRequest | CheckedQuestion,
        groups: Groups = None,
        on_hop: HopCallback | None = None,
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
        request: QuestionRequest | CheckedQuestion,
        groups: Groups,
        on_hop: HopCallback | None,
        previous: SavedAnswer | None = None,
    ) -> SavedAnswer:
        """Research and answer ``request``, and save the answer (a re-run of ``previous`` when given)."""
        checked = await asyncio.to_thread(self.check, request, groups)
        started = time.perf_counter()
        result = await self.research(checked, groups, on_hop)
        retrieval_ms = (time.perf_counter() - started) * 1000.0
        ctx = OwnedContext.from_pack(result.pack, self.settings.answer)
        ctx.acl_groups = checked.acl_groups
        self.resources.contexts.put(ctx)
        answered = await answer_stage(ctx, self.resources)
        response = AskResponse(
            **answered.model_dump(exclude={"coverage", "retrieval_report", "retrieval_latency_ms"}),
            coverage=result.coverage,
            retrieval_report=result.pack.retrieval_report,
            retrieval_latency_ms=retrieval_ms,
        )
        saved = new_saved_answer(
            collection=checked.collection.name,
            request=checked.request,
            settings=self.settings,
            pack=result.pack,
            response=response,
            acl_groups=ctx.acl_groups,
            previous=previous,
        )
        try:
            await asyncio.to_thread(self.saved.store.save, saved)
        except StoreError as exc:  # the answer still reaches the caller; the log says why it was not kept
            log.error("answer %s was not saved: %s", response.request_id, exc)
        return saved

    async def regenerate(self, request_id: str, part: str, groups: Groups = None) -> PartResponse:
        """A new quick summary (``part="summary"``) or long answer (``"answer"``) of a stored request.

        NotFoundError when the id is unknown, expired or not the caller's to read (ids do not leak);
        InsufficientEvidenceError when the context holds no chunks.
        """
        ctx = self._stored(request_id, groups)
        generator = await asyncio.to_thread(lambda: self.resources.generator)
        support = await asyncio.to_thread(lambda: self.resources.support)
        with answer_budget(self.settings.answer):
            if part == "summary":
                result: PartResult = await generate_summary(ctx, generator, self.settings.answer, support)
                return _part_response(ctx, "summary", result)
            result = await generate_long_answer(ctx, generator, self.settings.answer, support)
            return _part_response(ctx, "answer", result)

    async def rerun(self, answer_id: str, groups: Groups = None) -> SavedAnswer:
        """Ask a saved answer's question again, as it was asked, against the collection as it is now; the new
        answer is saved with ``rerun_of`` and ``changes``: which cited passages were added, removed or
        changed. NotFoundError when there is no saved answer the caller may read."""
        previous = await asyncio.to_thread(self.saved.get, answer_id, groups)
        request = previous.request.model_copy(update={"collection": previous.collection})
        with answer_budget(self.settings.answer):
            return await self._answer(request, groups, None, previous)

    def context_count(self) -> int:
        """How many response contexts are kept for regeneration now (``answer.context.max_count`` at most)."""
        return self.resources.contexts.size()

    def _stored(self, request_id: str, groups: Groups) -> ResponseContext:
        ctx = self.resources.contexts.get(request_id)
        owner = ctx.acl_groups if isinstance(ctx, OwnedContext) else None
        if groups is not None and (owner is None or not set(owner) <= set(groups)):
            raise NotFoundError(
                f"no answer context for request id {request_id!r} that you may read; run the search again"
            )
        require_selected(ctx)  # 422: nothing is regenerated from an empty context
        return ctx


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
        written=part.written,
    )
