"""The adapters the research executor talks to: each a small protocol with an offline default elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from deepcite.models import Chunk, Filters, QueryAspect, SearchHit, SearchMode
from deepcite.research.state import HopChoice
from deepcite.retrieval.graph.ppr import GraphWalk
from deepcite.retrieval.graph.store import EntityGraph


@runtime_checkable
class Retriever(Protocol):
    """Searches one collection and embeds passages; :class:`deepcite.retrieval.collection.Collection` fits."""

    def search(
        self, query: str, *, mode: SearchMode, k: int, filters: Filters | None = None, anchors: bool = True
    ) -> list[SearchHit]:
        """Top-``k`` hits for ``query`` in ``mode``; with ``anchors``, reading the pages' anchor text where the
        retriever keeps it (:mod:`deepcite.retrieval.graph.anchors`)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length dense vectors of passages (rows align with ``texts``)."""

    @property
    def rrf_k(self) -> int:
        """The RRF constant the retriever fuses ranked lists with (``search.rrf_k``); a research round fuses
        its lists with the same one."""


@runtime_checkable
class GraphRetriever(Retriever, Protocol):
    """A retriever with an entity graph (search mode ``graph``, Personalized PageRank walks)."""

    @property
    def graph(self) -> EntityGraph:
        """The collection's entity graph (its rows and version)."""

    def graph_walk(self, query: str, *, seed_chunk_ids: Sequence[str] | None = None) -> GraphWalk:
        """Personalized PageRank from the query's entities and the seed passages (best first); raises a
        :class:`deepcite.errors.DeepciteError` when the collection keeps no graph."""


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) pairs; higher is more relevant."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


@runtime_checkable
class HydeGenerator(Protocol):
    """Writes a hypothetical answer passage for a query (HyDE); its text is searched like a query."""

    def generate(self, query: str) -> str: ...


@runtime_checkable
class CoverageGrader(Protocol):
    """Grades how well passages support each aspect: aspect text -> score in [0, 1], plus contradictions."""

    def grade(
        self, aspects: Sequence[QueryAspect], passages: Sequence[str]
    ) -> tuple[dict[str, float], list[str]]: ...


@runtime_checkable
class HopChooser(Protocol):
    """Reads a question and the evidence so far ((title, text) pairs, best first) and says whether it is
    answered, and if not which query to run next (``asked``: queries already run); raises when it cannot."""

    def choose(
        self, question: str, evidence: Sequence[tuple[str, str]], asked: Sequence[str]
    ) -> HopChoice: ...


@runtime_checkable
class QuestionLikelihood(Protocol):
    """How likely each question is after a passage ((title, text)): the mean log-probability of its tokens
    under a language model (higher: the passage answers it better)."""

    def score(self, passage: tuple[str, str], questions: Sequence[str]) -> list[float]: ...


@runtime_checkable
class WebSource(Protocol):
    """Finds web evidence for one sub-question: ``(chunks with source="web", errors)``; never raises."""

    def search(self, subquestion: str) -> tuple[list[Chunk], list[str]]: ...

    def close(self) -> None:
        """Release what the source holds (a no-op when it holds nothing)."""
