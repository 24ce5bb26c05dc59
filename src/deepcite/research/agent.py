"""ResearchAgent: plan a question, run the executor pipeline until its aspects are covered, return the evidence pack.

Usage::

    agent = ResearchAgent(collection, settings.research)
    result = agent.process("compare statins and PCSK9 inhibitors for lowering LDL", max_hops=3)
    result.pack.final_evidence[0].chunk.title
    result.coverage.weighted_coverage
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from cachetools import LRUCache
from pydantic import BaseModel, ConfigDict

from deepcite.config import ResearchSettings
from deepcite.llm.client import LLMClient
from deepcite.models import AspectCoverage, CoverageReport, EvidencePack, Filters, RoundReport
from deepcite.research.hoplog import (
    format_bridge_hop,
    format_chain_step,
    format_hop,
    format_next_hop,
    format_plan,
)
from deepcite.research.nodes import Adapters
from deepcite.research.nodes.should_continue import check_hop_budget
from deepcite.research.pipeline import RESEARCH_PIPELINE, Pipeline
from deepcite.research.planner import QueryPlanner
from deepcite.research.protocols import (
    CoverageGrader,
    HopChooser,
    HydeGenerator,
    QuestionLikelihood,
    Reranker,
    Retriever,
    WebSource,
)
from deepcite.research.state import ExecutorState, ResearchPlan

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

    Usage::

        agent = ResearchAgent(collection, settings.research)   # offline heuristics; deepcite.app.assembly wires the served one
        result = agent.process("compare statins and PCSK9 inhibitors for lowering LDL", max_hops=3)

    Everything the agent calls is handed in (the :class:`~deepcite.engine.Engine` builds each once): with
    ``llm_client`` the planner asks the LLM for the aspects and the next sub-question; ``reranker``,
    ``hyde``, ``grader``, ``web_source``, ``hop_chooser`` (see
    :func:`deepcite.research.llm_adapters.hop_chooser_for`) and ``likelihood`` (the hop questions' likelihood in the
    pack's order, :mod:`deepcite.research.likelihood`) are used when given, and every LLM step falls
    back to its heuristic on failure. ``notes`` are problems met while building them (a reranker that did
    not load), reported with every result. ``pipeline`` swaps in another wiring of the nodes. One agent
    serves any number of concurrent questions, each with its own hop cap.
    """

    def __init__(
        self,
        retriever: Retriever,
        settings: ResearchSettings,
        *,
        llm_client: LLMClient | None = None,
        reranker: Reranker | None = None,
        hyde: HydeGenerator | None = None,
        grader: CoverageGrader | None = None,
        web_source: WebSource | None = None,
        hop_chooser: HopChooser | None = None,
        likelihood: QuestionLikelihood | None = None,
        notes: Sequence[str] = (),
        pipeline: Pipeline = RESEARCH_PIPELINE,
    ) -> None:
        check_hop_budget(settings)
        self.settings = settings
        self.retriever = retriever
        self.pipeline = pipeline
        self.planner = QueryPlanner(settings=settings, llm_client=llm_client)
        self._notes = notes
        self.adapters = Adapters(
            settings=settings,
            planner=self.planner,
            retriever=retriever,
            reranker=reranker,
            hyde=hyde,
            grader=grader,
            web=web_source,
            hop_chooser=hop_chooser,
            likelihood=likelihood,
        )
        self._vectors = _VectorCache(settings.vector_cache_size)

    def capped(self, max_hops: int | None) -> ResearchSettings:
        """The settings of a question researched in at most ``max_hops`` hops (the setting when None); the
        minimum is lowered to the cap when above it."""
        if max_hops is None:
            return self.settings
        stopping = self.settings.stopping
        settings = self.settings.tuned(
            stopping={"max_hops": max_hops, "min_hops": min(stopping.min_hops, max_hops)}
        )
        check_hop_budget(settings)
        return settings

    def process(
        self,
        question: str,
        *,
        max_hops: int | None = None,
        filters: Filters | None = None,
        on_plan: PlanCallback | None = None,
        on_round: RoundCallback | None = None,
    ) -> ResearchResult:
        """Plan ``question`` and run the pipeline until it stops, in at most ``max_hops`` hops (default: the
        setting); never raises on zero hits."""
        started = time.perf_counter()
        settings = self.capped(max_hops)
        adapters = self.adapters if settings is self.settings else replace(self.adapters, settings=settings)
        errors = list(self._notes)
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
            for bridge in state.bridge_hops:
                if bridge.round == report.round:
                    log.info(format_bridge_hop(bridge))
            for choice in state.hop_choices:
                if choice.round == report.round:
                    log.info(format_next_hop(choice))
            if on_round:
                on_round(state, report)

        pack = self.pipeline.run(state, adapters, round_done)
        return ResearchResult(
            question=plan.question,
            pack=pack,
            subquestions=list(state.asked),
            hops=state.round,
            seconds=time.perf_counter() - started,
            coverage=self.coverage_report(pack.coverage),
        )

    def coverage_report(self, coverage: AspectCoverage) -> CoverageReport:
        """The :class:`CoverageReport` of a coverage (a pack's, or a round's) at this agent's threshold."""
        return CoverageReport.from_coverage(
            coverage,
            threshold=self.settings.coverage.threshold,
            enabled=self.settings.coverage.enabled,
        )
