"""ResearchAgent: plan a question, run the executor pipeline until its aspects are covered, return the evidence pack.

from deepcite.research import ResearchAgent
agent = ResearchAgent.for_collection("papers")
result = agent.process("compare statins and PCSK9 inhibitors for lowering LDL")
result.pack.final_evidence[0].chunk.title
result.coverage.weighted_coverage
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from cachetools import LRUCache
from pydantic import BaseModel, ConfigDict

from deepcite.config import ResearchSettings, Settings, get_settings
from deepcite.llm.client import LLMClient
from deepcite.models import CoverageReport, EvidencePack, Filters, RoundReport
from deepcite.research.hoplog import format_chain_step, format_hop, format_next_hop, format_plan
from deepcite.research.llm_adapters import LLMCoverageGrader, LLMHyde, hop_chooser_for
from deepcite.research.nodes import Adapters
from deepcite.research.nodes.should_continue import check_hop_budget
from deepcite.research.pipeline import RESEARCH_PIPELINE, Pipeline
from deepcite.research.planner import QueryPlanner
from deepcite.research.protocols import (
    CoverageGrader,
    HopChooser,
    HydeGenerator,
    Reranker,
    Retriever,
    WebSource,
)
from deepcite.research.state import ExecutorState, ResearchPlan
from deepcite.research.web.source import web_source_for
from deepcite.retrieval.rerankers import load_reranker

log = logging.getLogger(__name__)

RoundCallback = Callable[[ExecutorState, RoundReport], None]
PlanCallback = Callable[[ResearchPlan], None]


class ResearchResult(BaseModel):
    """The evidence pack, the sub-questions asked, the hops run and the aspect coverage reached."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    question: str
    pack: EvidencePack
    subquestions: list[str]
    hops: int
    seconds: float
    coverage: CoverageReport


class _VectorCache(LRUCache[str, np.ndarray]):
    """Passage and text vectors kept across questions, least recently used evicted first (cachetools).

    One agent serves concurrent requests (the Engine keeps one per collection), so every access holds a lock.
    """

    def __init__(self, capacity: int) -> None:
        super().__init__(maxsize=capacity)
        self._lock = threading.RLock()

    def __getitem__(self, key: str) -> np.ndarray:
        with self._lock:
            return super().__getitem__(key)

    def __setitem__(self, key: str, value: np.ndarray) -> None:
        with self._lock:
            super().__setitem__(key, value)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return super().__contains__(key)

    def get(self, key: str, default: np.ndarray | None = None) -> np.ndarray | None:  # type: ignore[override]
        with self._lock:
            return super().get(key, default)


class ResearchAgent:
    """Runs the research pipeline (:data:`deepcite.research.pipeline.RESEARCH_PIPELINE`) over one retriever.

    ``use_llm`` turns the LLM steps (aspects, next sub-question, coverage grading, HyDE when enabled)
    on when ``llm_client`` is given; every one falls back to its heuristic on failure. With
    ``adaptive_mode`` off, coverage never stops the rounds early: they run to ``max_hops`` unless
    nothing new is left to ask. ``pipeline`` swaps in another wiring of the nodes. ``hop_chooser`` (see
    :func:`deepcite.research.llm_adapters.hop_chooser_for`) lets an LLM choose each next hop's query when
    ``research.next_hop.enabled``; it is independent of ``use_llm``.
    """

    def __init__(
        self,
        retriever: Retriever,
        llm_client: LLMClient | None = None,
        use_llm: bool = True,
        adaptive_mode: bool = True,
        min_hops: int | None = None,
        max_hops: int | None = None,
        *,
        settings: ResearchSettings | None = None,
        reranker: Reranker | None = None,
        hyde: HydeGenerator | None = None,
        grader: CoverageGrader | None = None,
        web_source: WebSource | None = None,
        hop_chooser: HopChooser | None = None,
        pipeline: Pipeline = RESEARCH_PIPELINE,
    ) -> None:
        base = settings or get_settings().research
        updates: dict[str, Any] = {}
        if min_hops is not None:
            updates["min_hops"] = min_hops
        if max_hops is not None:
            updates["max_hops"] = max_hops
            updates["min_hops"] = min(updates.get("min_hops", base.stopping.min_hops), max_hops)
        if not adaptive_mode:
            updates["min_hops"] = updates.get("max_hops", base.stopping.max_hops)
        self.settings = base.tuned(stopping=updates)
        check_hop_budget(self.settings)
        self.retriever = retriever
        self.pipeline = pipeline
        llm = llm_client if use_llm else None
        self.planner = QueryPlanner(settings=self.settings, llm_client=llm)
        self._reranker_errors: list[str] = []
        if reranker is None:
            reranker = load_reranker(self.settings, self._reranker_errors)
        self.adapters = Adapters(
            settings=self.settings,
            planner=self.planner,
            retriever=retriever,
            reranker=reranker,
            hyde=hyde or (LLMHyde(llm) if llm is not None else None),
            grader=grader or (LLMCoverageGrader(llm) if llm is not None else None),
            web=web_source,
            hop_chooser=hop_chooser,
        )
        self._vectors = _VectorCache(self.settings.vector_cache_size)

    @classmethod
    def for_collection(
        cls,
        name: str,
        settings: Settings | None = None,
        *,
        llm_client: LLMClient | None = None,
        **kwargs: Any,
    ) -> ResearchAgent:
        """An agent over an existing collection; raises CollectionNotFoundError naming the known ones."""
        from deepcite.retrieval.collection import open_collection

        settings = settings or get_settings()
        collection = open_collection(name, settings, create=False)
        kwargs.setdefault("web_source", web_source_for(settings, llm_client))
        kwargs.setdefault("hop_chooser", hop_chooser_for(settings, llm_client))
        return cls(collection, llm_client=llm_client, settings=settings.research, **kwargs)

    def process(
        self,
        question: str,
        *,
        filters: Filters | None = None,
        on_plan: PlanCallback | None = None,
        on_round: RoundCallback | None = None,
    ) -> ResearchResult:
        """Plan ``question`` and run the pipeline until it stops; never raises on zero hits."""
        started = time.perf_counter()
        errors = list(self._reranker_errors)
        plan = self.planner.plan(question, filters=filters, errors=errors)
        log.info(format_plan(plan))
        if on_plan:
            on_plan(plan)
        state = ExecutorState(
            plan=plan, errors=errors, warnings=list(plan.intake.warnings), vectors=self._vectors
        )
        state.coverage.core_importance = self.settings.coverage.core_importance

        def round_done(state: ExecutorState) -> None:
            report = state.reports[-1]
            log.info(format_hop(report, len(state.evidence)))
            for hop, step in enumerate(state.chain, start=1):
                if step.round == report.round:
                    log.info(format_chain_step(step, hop))
            for choice in state.hop_choices:
                if choice.round == report.round:
                    log.info(format_next_hop(choice))
            if on_round:
                on_round(state, report)

        pack = self.pipeline.run(state, self.adapters, round_done)
        return ResearchResult(
            question=plan.question,
            pack=pack,
            subquestions=list(state.asked),
            hops=state.round,
            seconds=time.perf_counter() - started,
            coverage=self.coverage_report(pack),
        )

    def coverage_report(self, pack: EvidencePack) -> CoverageReport:
        """The :class:`CoverageReport` of a pack at this agent's threshold."""
        return CoverageReport.from_coverage(
            pack.coverage,
            threshold=self.settings.coverage.threshold,
            enabled=self.settings.coverage.enabled,
        )
