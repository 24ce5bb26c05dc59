"""The one wiring of a research agent and of the answer stage, for every caller: the Engine (and through it
the HTTP API, the CLI, MCP and the Python API), every evaluation and the tests. A figure measured through an
agent built here is a figure of what users run.

The agent's retriever is the collection itself, seen through :class:`ServedRetriever` (which keeps a tally of
one request's searches). When ``graph.enabled`` the retriever is a :class:`GraphServedRetriever`: the research
steps see the collection's entity graph (its ranked list with ``research.retrieval.use_graph``, graph bridges
and known-title matching), since they switch it on by the :class:`GraphRetriever` protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from deepcite.answer.context import ResponseContext
from deepcite.answer.pipeline import AnswerResult, answer_context
from deepcite.app.resources import Resources
from deepcite.config import ResearchSettings
from deepcite.errors import DeepciteError
from deepcite.models import Chunk, Filters, SearchHit, SearchMode
from deepcite.research.agent import ResearchAgent
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.graph.ppr import GraphWalk
from deepcite.retrieval.graph.store import EntityGraph


@dataclass
class SearchTally:
    """One request's searches: how many succeeded, and the first failure."""

    succeeded: int = 0
    failure: DeepciteError | None = field(default=None)


search_tally: ContextVar[SearchTally | None] = ContextVar("deepcite_search_tally", default=None)


class ServedRetriever:
    """A collection as the research agent's retriever, keeping a tally of the current request's searches.

    The executor records a failing search and carries on (one bad query must not sink a question); but
    when *no* search of a request succeeded the store itself is broken, and an "insufficient evidence"
    answer would hide that, so the answer service re-raises the first failure. The tally is per request
    (a context variable), so one agent serves concurrent requests.
    """

    def __init__(self, collection: Collection) -> None:
        self.collection = collection
        self.rrf_k = collection.rrf_k

    def search(
        self, query: str, *, mode: SearchMode, k: int, filters: Filters | None = None, anchors: bool = True
    ) -> list[SearchHit]:
        tally = search_tally.get()
        try:
            hits = self.collection.search(query, mode=mode, k=k, filters=filters, anchors=anchors)
        except DeepciteError as exc:
            if tally is not None and tally.failure is None:
                tally.failure = exc
            raise
        if tally is not None:
            tally.succeeded += 1
        return hits

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.collection.embed(texts)

    def vectors(self, chunks: Sequence[Chunk]) -> np.ndarray:
        """The stored dense vectors of these chunks (embedding only those the store lacks)."""
        return self.collection.vectors(chunks)


class GraphServedRetriever(ServedRetriever):
    """A :class:`ServedRetriever` over a collection that keeps an entity graph: it is a
    :class:`~deepcite.research.protocols.GraphRetriever`, so the research steps use the graph."""

    @property
    def graph(self) -> EntityGraph:
        return self.collection.graph

    def graph_walk(self, query: str, *, seed_chunk_ids: Sequence[str] | None = None) -> GraphWalk:
        return self.collection.graph_walk(query, seed_chunk_ids=seed_chunk_ids)


def served_retriever(collection: Collection) -> ServedRetriever:
    """The retriever research sees for ``collection``: with its entity graph whenever graphs are on."""
    if collection.settings.graph.enabled:
        return GraphServedRetriever(collection)
    return ServedRetriever(collection)


def research_agent(
    collection: Collection, resources: Resources, research: ResearchSettings | None = None
) -> ResearchAgent:
    """The research agent of ``collection`` with the shared adapters of ``resources`` (the LLM steps, the
    reranker, HyDE, the grader, the web source, the next-hop chooser) under ``research`` (default: the
    resources' settings)."""
    return ResearchAgent(
        served_retriever(collection),
        research or resources.settings.research,
        llm_client=resources.llm,
        reranker=resources.reranker,
        hyde=resources.hyde,
        grader=resources.grader,
        web_source=resources.web_source,
        hop_chooser=resources.hop_chooser,
        likelihood=resources.likelihood,
        notes=resources.reranker_errors,
    )


async def answer_stage(ctx: ResponseContext, resources: Resources) -> AnswerResult:
    """The answer stage over one shared context: per-sub-question answers, the quick summary and the long
    answer (in parallel), every citation checked, with the resources' writer and support check."""
    generator = await asyncio.to_thread(lambda: resources.generator)  # may load the model once
    support = await asyncio.to_thread(lambda: resources.support)
    return await answer_context(ctx, generator, resources.settings.answer, support)
