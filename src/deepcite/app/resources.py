"""Resources: every object one deepcite process shares, each built on first use, once, under a lock.

The search store (one handle for the data dir), the embedder, the LLM client (which remembers the
structured-output mode its server accepts), the reranker, HyDE, the coverage grader, the next-hop chooser,
the hop questions' local LM, the web source, the answer generator, the citation support check, the response contexts and the ingest jobs.
No library constructor falls back to process settings or a module cache: each is built here and handed in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from deepcite.answer.context import ResponseContextManager
from deepcite.answer.factory import build_generator, build_support
from deepcite.answer.generators import AnswerGenerator
from deepcite.answer.support import CitationSupport
from deepcite.config import Settings
from deepcite.ingest.jobs import IngestJobs
from deepcite.llm.client import LLMClient
from deepcite.llm.factory import get_llm
from deepcite.research.likelihood import question_likelihood_for
from deepcite.research.llm_adapters import LLMCoverageGrader, LLMHyde, hop_chooser_for
from deepcite.research.web.source import web_source_for
from deepcite.retrieval.embedders import Embedder, build_embedder
from deepcite.retrieval.rerankers import load_reranker
from deepcite.retrieval.store import SearchStore, open_store

if TYPE_CHECKING:
    from deepcite.research.protocols import (
        CoverageGrader,
        HopChooser,
        HydeGenerator,
        QuestionLikelihood,
        Reranker,
        WebSource,
    )

T = TypeVar("T")
_UNSET: Any = object()


class Resources:
    """The shared objects of one process, built from ``settings`` on first use.

    ``store``/``embedder``/``llm`` may be handed in (tests and evaluation profiles share one); closing the
    store is then left to its owner.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: SearchStore | None = None,
        embedder: Embedder | None = None,
        llm: LLMClient | None = None,
    ) -> None:
        self.settings = settings
        self.lock = threading.RLock()
        self._store = store
        self._owns_store = store is None
        self._embedder = embedder
        self._llm: LLMClient | None = llm if llm is not None else _UNSET
        self._reranker: Reranker | None = _UNSET
        self.reranker_errors: list[str] = []  # problems met loading the reranker, reported with every result
        self._hyde: HydeGenerator | None = _UNSET
        self._grader: CoverageGrader | None = _UNSET
        self._hop_chooser: HopChooser | None = _UNSET
        self._likelihood: QuestionLikelihood | None = _UNSET
        self._web: WebSource | None = _UNSET
        self._generator: AnswerGenerator | None = None
        self._support: CitationSupport | None = None
        self._contexts: ResponseContextManager | None = None
        self._jobs: IngestJobs | None = None

    def _once(self, attr: str, build: Callable[[], T], *, optional: bool = False) -> T:
        """``self.<attr>``, built by ``build`` on first use (once, under the lock). ``None`` means not built
        yet, unless ``optional``: then ``None`` is what ``build`` answered for a feature that is off."""

        def missing(value: Any) -> bool:
            return value is _UNSET or (value is None and not optional)

        value = getattr(self, attr)
        if missing(value):
            with self.lock:
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
            "_reranker", lambda: load_reranker(self.settings.research, self.reranker_errors), optional=True
        )

    @property
    def hyde(self) -> HydeGenerator | None:
        """HyDE through the LLM (a hypothetical answer passage searched for), or None offline."""
        return self._once("_hyde", lambda: LLMHyde(self.llm) if self.llm is not None else None, optional=True)

    @property
    def grader(self) -> CoverageGrader | None:
        """The LLM's grading of aspect coverage, or None offline (the heuristic grades alone)."""
        return self._once(
            "_grader",
            lambda: LLMCoverageGrader(self.llm, self.settings.llm.stages) if self.llm is not None else None,
            optional=True,
        )

    @property
    def hop_chooser(self) -> HopChooser | None:
        """The LLM's choice of each next hop when ``research.next_hop.enabled``, else None."""
        return self._once("_hop_chooser", lambda: hop_chooser_for(self.settings, self.llm), optional=True)

    @property
    def likelihood(self) -> QuestionLikelihood | None:
        """The small local LM scoring the hop questions in the pack's order when
        ``research.ranking.hop_likelihood_weight`` is on, else None."""
        return self._once(
            "_likelihood", lambda: question_likelihood_for(self.settings.research.ranking), optional=True
        )

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

    def close(self) -> None:
        """Stop the context cleanup and the ingest jobs; close the web source, and the store if opened here."""
        with self.lock:
            if self._contexts is not None:
                self._contexts.stop()
            if self._jobs is not None:
                self._jobs.shutdown()  # queued uploads are dropped; a running one finishes
                self._jobs = None
            if self._owns_store and self._store is not None:
                self._store.close()
                self._store = None
            if self._web is not _UNSET and self._web is not None:
                self._web.close()  # stops the web source's event-loop thread
                self._web = _UNSET  # built again if used after close()
