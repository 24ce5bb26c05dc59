"""The Engine: the composition root of one deepcite process, built once from the settings.

Usage::

    from deepcite import Engine, QuestionRequest, SearchRequest, Settings

    with Engine(Settings.load()) as engine:
        engine.ingest("demo", "corpus.jsonl")
        hits = engine.search(SearchRequest(query="statins and atrial fibrillation", collection="demo"))
        response = engine.ask_sync(QuestionRequest(query="Do statins prevent AF after surgery?", collection="demo"))
        print(response.summary, [c.title for c in response.citations])

The HTTP app (``app.state.engine``, a FastAPI dependency), the MCP server (its lifespan context), the CLI
(Typer's ``ctx.obj``), the evaluations and the Python API all hold one Engine. It composes a few services of
one job each, and is the only place they are built:

- :attr:`resources`: the shared objects (store, embedder, LLM client, reranker, HyDE, grader, writer, support
  check, response contexts, ingest jobs), each built on first use, once;
- :attr:`corpus`: collections, ingest, removal, documents and originals;
- :attr:`answers`: search, research, ask, regenerate, re-run, through the one assembly of a research agent and
  the answer stage (:mod:`deepcite.app.assembly`);
- :attr:`saved`: saved answers; :attr:`practitioners`: the practitioner finder.

The most used operations are on the Engine itself: :meth:`search`, :meth:`research`, :meth:`ask` (and
their ``_sync`` forms) and :meth:`ingest`. :meth:`close` releases what the Engine opened.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.app.answers import Answers, CheckedQuestion
from deepcite.app.assembly import answer_stage
from deepcite.app.corpus import Corpus
from deepcite.app.practitioners import Practitioners
from deepcite.app.resources import Resources
from deepcite.app.saved import Saved
from deepcite.config import Settings
from deepcite.errors import DeepciteError
from deepcite.ingest.report import IngestReport
from deepcite.llm.client import LLMClient
from deepcite.models import Document
from deepcite.research.agent import ResearchResult
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.store import SearchStore
from deepcite.service import (
    AskResponse,
    Groups,
    HopCallback,
    Passage,
    QuestionRequest,
    SearchRequest,
    SearchResponse,
)

log = logging.getLogger(__name__)

WARM_QUERY = "warm start"  # what Engine.warm encodes and searches: any words do


def _context_chunk(passage: Passage, display_id: int) -> ContextChunk:
    """A searched passage as the answer stage numbers it."""
    return ContextChunk(
        **passage.model_dump(exclude={"score", "rank", "graph"}), id=display_id, score=passage.score
    )


class Engine:
    """deepcite's services over shared objects built once per process from ``settings`` (see the module
    docstring). ``store``/``embedder``/``llm`` may be handed in (tests and evaluation profiles share one); the
    Engine then leaves closing the store to its owner."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: SearchStore | None = None,
        embedder: Embedder | None = None,
        llm: LLMClient | None = None,
    ) -> None:
        self.settings = settings
        self.resources = Resources(settings, store=store, embedder=embedder, llm=llm)
        self.corpus = Corpus(self.resources)
        self.saved = Saved(settings)
        self.answers = Answers(self.resources, self.corpus, self.saved)
        self.practitioners = Practitioners(self.resources)
        self.warm_s: float | None = None  # seconds :meth:`warm` took, once it ran

    def sharing(self, settings: Settings) -> Engine:
        """Another Engine under ``settings`` (an evaluated settings profile) on this one's store and embedder:
        the same collections, another research configuration. Close it before this one."""
        return Engine(settings, store=self.resources.store, embedder=self.resources.embedder)

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
        self.resources.contexts.start()

    def warm(self) -> float:
        """Build now what a first question would build on first use, and return the seconds it took: the
        store, the embedding model (a sentence encoded), the LLM and its adapters, the reranker, the web
        source, the answer writer and citation check, and the default collection's research agent (the
        collection searched once, the sentences of ``server.warm_passages`` passages found embedded for the
        citation check and the offline writer, and one research hop and its answer run when no LLM or web source
        would be asked; that answer is neither kept nor saved). What it built is then frozen out of the garbage
        collector's full collections (``gc.freeze``), which the first question would otherwise run over it.
        ``deepcite serve`` calls it before it takes requests (``server.warm_start``), so the first question is as
        quick as the next. A default collection that is missing or cannot be read is left for the first
        question to report."""
        started = time.perf_counter()
        r = self.resources
        _ = (
            r.store,
            r.llm,
            r.reranker,
            r.hyde,
            r.grader,
            r.hop_chooser,
            r.web_source,
            r.generator,
        )  # built once
        r.support.prime([WARM_QUERY], [WARM_QUERY])
        name = self.settings.server.default_collection
        try:
            collection = self.corpus.collection(name)
            self.answers.agent(collection)
            k = min(self.settings.server.warm_passages, self.settings.search.max_k)
            found = self.search(SearchRequest(query=WARM_QUERY, collection=name, k=max(k, 1)))
            # the model's first batches of passage-length texts are slow: these now, their vectors cached for
            # the citation check and the offline writer (a first question embedded them all at once)
            r.support.prime([WARM_QUERY], found.hits[:k])
            if isinstance(r.generator, ExtractiveGenerator):
                r.generator.prime([_context_chunk(p, n) for n, p in enumerate(found.hits[:k], 1)])
            if (
                r.llm is None and r.web_source is None
            ):  # offline: one research hop and its answer, which ask nothing of anyone
                topic = (
                    found.hits[0].title if found.hits else WARM_QUERY
                )  # a question in the collection's words
                asked = f"What do the sources say about {topic}, and why does it matter?"
                result = self.research_sync(QuestionRequest(query=asked, collection=name, max_hops=1))
                ctx = ResponseContext.from_pack(result.pack, self.settings.answer)
                if ctx.selected_chunks:  # the writer, its decision and the citation check once; nothing kept
                    asyncio.run(answer_stage(ctx, r))
        except DeepciteError as exc:
            log.warning("warm start: the default collection %r was not opened (%s)", name, exc)
        # what was built above lives as long as the process: collected once now and frozen out of later
        # collections (half a million objects: a full collection of them took about 1 s in a first question)
        gc.collect()
        gc.freeze()
        self.warm_s = time.perf_counter() - started
        return self.warm_s

    def close(self) -> None:
        """Stop the context cleanup and the ingest jobs; close the practitioner directory, and the store if
        the Engine opened it."""
        self.practitioners.close()
        self.resources.close()
        self.corpus.clear()

    # -- the most used operations ---------------------------------------------------------------------------
    def search(self, request: SearchRequest, groups: Groups = None) -> SearchResponse:
        """One plain search of a collection (no planning), restricted to the caller's ``groups``."""
        return self.answers.search(request, groups)

    async def research(
        self,
        request: QuestionRequest | CheckedQuestion,
        groups: Groups = None,
        on_hop: HopCallback | None = None,
    ) -> ResearchResult:
        """Plan and research the question (the evidence pack, no answer); ``on_hop`` is told each hop."""
        return await self.answers.research(request, groups, on_hop)

    async def ask(
        self,
        request: QuestionRequest | CheckedQuestion,
        groups: Groups = None,
        on_hop: HopCallback | None = None,
    ) -> AskResponse:
        """Research the question, then answer it with citations from one shared context (see
        :meth:`deepcite.app.answers.Answers.ask`)."""
        return await self.answers.ask(request, groups, on_hop)

    def research_sync(self, request: QuestionRequest, groups: Groups = None) -> ResearchResult:
        """:meth:`research` for code without an event loop."""
        return asyncio.run(self.research(request, groups))

    def ask_sync(self, request: QuestionRequest, groups: Groups = None) -> AskResponse:
        """:meth:`ask` for code without an event loop."""
        return asyncio.run(self.ask(request, groups))

    def ingest(
        self, collection: str, source: str | Path | Iterable[Document], **options: Any
    ) -> IngestReport:
        """Read, chunk, embed and index ``source`` into ``collection`` (see :meth:`Corpus.ingest` for the
        options: ``fmt``, ``on_error``, ``rebuild``, ``progress``, ``on_progress``, ``ray``)."""
        return self.corpus.ingest(collection, source, **options)
