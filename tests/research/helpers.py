"""Helpers for the research-engine tests: typed state builders, a stand-in for a remote LLM, and fixture
collections."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deepcite.config import ResearchSettings, SearchSettings, Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.llm.client import Message
from deepcite.models import Candidate, Chunk, SearchHit, SearchMode
from deepcite.research.nodes import Adapters
from deepcite.research.planner import QueryPlanner
from deepcite.research.protocols import Retriever
from deepcite.research.state import ExecutorState
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder


class StandInLLM:
    """A stand-in for a remote LLM endpoint: answers each call with the next scripted reply.

    A reply that is an exception is raised instead (the endpoint being down).
    """

    def __init__(self, replies: Sequence[str | Exception]) -> None:
        self.replies = list(replies)
        self.calls: list[list[Message]] = []

    @property
    def model(self) -> str:
        return "stand-in"

    def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        self.calls.append(list(messages))
        if not self.replies:
            raise ConnectionError("the stand-in LLM has no more replies")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    async def achat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        return self.chat(messages, schema=schema, max_tokens=max_tokens)


def chunk(cid: str, text: str, *, doc: str | None = None, title: str = "") -> Chunk:
    return Chunk(chunk_id=cid, doc_id=doc or cid, text=text, title=title)


def titled_pack(*items: tuple[str, str, str]) -> list[Candidate]:
    """Candidates from ``(chunk id, title, text)`` triples, each its own document."""
    return [Candidate(chunk=chunk(cid, text, title=title)) for cid, title, text in items]


def unit_rows(*rows: list[float]) -> np.ndarray:
    """The rows as unit-length vectors (a stand-in for passage embeddings)."""
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def hit(c: Chunk, rank: int, score: float = 1.0, mode: SearchMode = SearchMode.HYBRID) -> SearchHit:
    return SearchHit(chunk=c, score=score, rank=rank, mode=mode)


def new_state(question: str, settings: ResearchSettings | None = None) -> tuple[ExecutorState, QueryPlanner]:
    planner = QueryPlanner(settings=settings or ResearchSettings())
    plan = planner.plan(question)
    state = ExecutorState(plan=plan)
    return state, planner


class NoSearch:
    """A stand-in retriever for nodes that never search or embed: it only knows the RRF constant."""

    rrf_k = SearchSettings().rrf_k

    def search(self, *args: object, **kwargs: object) -> list[SearchHit]:
        raise AssertionError("this node must not search")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise AssertionError("this node must not embed")


def adapters(
    planner: QueryPlanner,
    retriever: Retriever | None = None,
    settings: ResearchSettings | None = None,
    **kw: Any,
) -> Adapters:
    """The adapters a node runs with; without ``retriever``, a stand-in that must not be searched."""
    return Adapters(
        settings=settings or planner.settings, planner=planner, retriever=retriever or NoSearch(), **kw
    )  # type: ignore[arg-type]


def ingested_collection(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, name: str, corpus: Path
) -> Collection:
    """A real Edge collection ``name`` in a data dir of its own, with ``corpus`` (JSON Lines) ingested: its
    chunks, vectors and entity graph."""
    settings = Settings(data_dir=tmp_path_factory.mktemp(f"{name}-data"))
    collection = open_collection(name, settings, embedder=embedder)
    IngestPipeline(collection).ingest(corpus, fmt="jsonl")
    return collection


def fixture_page(pages: Path, doc: str) -> Candidate:
    """The page ``doc`` of a JSON Lines fixture corpus (``id``, ``title``, ``text``) as a candidate passage."""
    for line in pages.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["id"] == doc:
            return Candidate(chunk=Chunk(chunk_id=doc, doc_id=doc, title=row["title"], text=row["text"]))
    raise KeyError(doc)
