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
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from deepcite.app.answers import Answers, CheckedQuestion
from deepcite.app.corpus import Corpus
from deepcite.app.practitioners import Practitioners
from deepcite.app.resources import Resources
from deepcite.app.saved import Saved
from deepcite.config import Settings
from deepcite.ingest.report import IngestReport
from deepcite.llm.client import LLMClient
from deepcite.models import Document
from deepcite.research.agent import ResearchResult
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.store import SearchStore
from deepcite.service import AskResponse, Groups, HopCallback, QuestionRequest, SearchRequest, SearchResponse


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
