"""ResearchAgent: plan a question, run executor rounds until its aspects are covered, return the evidence pack.

from deepcite.research import ResearchAgent
agent = ResearchAgent.for_collection("papers")
result = agent.process("compare statins and PCSK9 inhibitors for lowering LDL")
result.pack.final_evidence[0].chunk.title
result.metadata["aspect_coverage"]["weighted_coverage"]
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from deepcite.config import ResearchSettings, Settings, get_settings
from deepcite.llm.client import LLMClient
from deepcite.models import EvidencePack, Filters, RoundReport
from deepcite.research.coverage import grade_coverage
from deepcite.research.executor import (
    executor_gate,
    finalize_evidence_pack,
    merge_candidates,
    prepare_round_queries,
    run_retrieval,
)
from deepcite.research.hoplog import format_hop, format_plan
from deepcite.research.llm_adapters import LLMCoverageGrader, LLMHyde
from deepcite.research.planner import QueryPlanner
from deepcite.research.protocols import CoverageGrader, HydeGenerator, Reranker, Retriever, WebSource
from deepcite.research.rerank import load_reranker, rerank_candidates
from deepcite.research.selection import select_evidence
from deepcite.research.state import ExecutorState, ResearchPlan
from deepcite.research.stopping import should_continue
from deepcite.research.web_search import add_web_evidence, web_source_for

log = logging.getLogger(__name__)

RoundCallback = Callable[[ExecutorState, RoundReport], None]
PlanCallback = Callable[[ResearchPlan], None]


class ResearchResult(BaseModel):
    """The evidence pack, the plan's aspects and sub-questions, and summary metadata."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    question: str
    pack: EvidencePack
    subquestions: list[str]
    hops: int
    seconds: float
    metadata: dict[str, Any]


class _VectorCache(OrderedDict[str, np.ndarray]):
    """Passage and text vectors shared across questions, least recently used evicted first."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def __getitem__(self, key: str) -> np.ndarray:
        value = super().__getitem__(key)
        self.move_to_end(key)
        return value

    def __setitem__(self, key: str, value: np.ndarray) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.capacity:
            self.popitem(last=False)


class ResearchAgent:
    """Runs the research executor over one retriever (a collection).

    ``use_llm`` turns the LLM steps (aspects, next sub-question, coverage grading, HyDE when enabled)
    on when ``llm_client`` is given; every one falls back to its heuristic on failure. With
    ``adaptive_mode`` off, coverage never stops the rounds early: they run to ``max_hops`` unless
    nothing new is left to ask.
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
    ) -> None:
        base = settings or get_settings().research
        updates: dict[str, Any] = {}
        if min_hops is not None:
            updates["min_hops"] = min_hops
        if max_hops is not None:
            updates["max_hops"] = max_hops
            updates["min_hops"] = min(updates.get("min_hops", base.min_hops), max_hops)
        if not adaptive_mode:
            updates["min_hops"] = updates.get("max_hops", base.max_hops)
        self.settings = base.model_copy(update=updates)
        self.retriever = retriever
        llm = llm_client if use_llm else None
        self.planner = QueryPlanner(settings=self.settings, llm_client=llm)
        self.grader = grader or (LLMCoverageGrader(llm) if llm is not None else None)
        self.hyde = hyde or (LLMHyde(llm) if llm is not None else None)
        self._reranker = reranker
        self._reranker_errors: list[str] = []
        if reranker is None:
            self._reranker = load_reranker(self.settings, self._reranker_errors)
        self._vectors = _VectorCache(self.settings.vector_cache_size)
        self.web_source = web_source  # web evidence per sub-question (see research/web_search.py)

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
        return cls(collection, llm_client=llm_client, settings=settings.research, **kwargs)

    def process(
        self,
        question: str,
        *,
        filters: Filters | None = None,
        on_plan: PlanCallback | None = None,
        on_round: RoundCallback | None = None,
    ) -> ResearchResult:
        """Plan ``question`` and run rounds until the planner stops; never raises on zero hits."""
        started = time.perf_counter()
        errors = list(self._reranker_errors)
        plan = self.planner.plan(question, filters=filters, errors=errors)
        log.info(format_plan(plan))
        if on_plan:
            on_plan(plan)
        state = ExecutorState(
            plan=plan, errors=errors, warnings=list(plan.intake.warnings), vectors=self._vectors
        )
        state.coverage.core_importance = self.settings.core_aspect_importance
        executor_gate(state, self.settings)
        while not state.done:
            prepare_round_queries(state, self.planner, self.settings, self.hyde)
            if state.done:
                break
            run_retrieval(state, self.retriever, self.settings)
            merge_candidates(state, self.settings)
            rerank_candidates(state, self._reranker, self.settings)
            select_evidence(state, self.retriever, self.settings)
            if self.web_source is not None:
                add_web_evidence(state, self.web_source, self.retriever, self.settings)
            grade_coverage(state, self.retriever, self.settings, self.grader)
            should_continue(state, self.planner, self.settings)
            report = state.reports[-1]
            log.info(format_hop(report, len(state.evidence)))
            if on_round:
                on_round(state, report)
        pack = finalize_evidence_pack(state, self.settings)
        return ResearchResult(
            question=plan.question,
            pack=pack,
            subquestions=list(state.asked),
            hops=state.round,
            seconds=time.perf_counter() - started,
            metadata={"aspect_coverage": self.coverage_metadata(pack), "stop_reason": pack.stop_reason},
        )

    def coverage_metadata(self, pack: EvidencePack) -> dict[str, Any]:
        """The ``aspect_coverage`` summary of a pack."""
        cov = pack.coverage
        threshold = self.settings.aspect_coverage_threshold
        return {
            "enabled": self.settings.enable_aspect_coverage,
            "total_aspects": len(cov.aspects),
            "coverage_percentage": cov.get_coverage_percentage(threshold),
            "weighted_coverage": cov.get_weighted_coverage(),
            "uncovered_count": len(cov.get_uncovered_aspects(threshold)),
            "aspects": [
                {
                    "aspect": a.aspect,
                    "type": str(a.aspect_type),
                    "importance": a.importance,
                    "coverage_score": cov.coverage_scores.get(a.aspect, 0.0),
                    "covered_at_hop": cov.covered_by_hop.get(a.aspect),
                }
                for a in cov.aspects
            ],
        }
