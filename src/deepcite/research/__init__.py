"""The research engine: planner, executor nodes, coverage, stopping, and the ResearchAgent."""

from deepcite.research.agent import ResearchAgent, ResearchResult
from deepcite.research.planner import QueryPlanner
from deepcite.research.protocols import CoverageGrader, HydeGenerator, Reranker, Retriever

__all__ = [
    "CoverageGrader",
    "HydeGenerator",
    "QueryPlanner",
    "Reranker",
    "ResearchAgent",
    "ResearchResult",
    "Retriever",
]
