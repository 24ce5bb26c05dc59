"""A collection as described: its listing, its statistics, what made its dense vectors, and what an ingest's
LLM triple extraction did."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class VectorSource(BaseModel):
    """What made a collection's dense vectors: the embedding model and its precision (``fp32``, ``bf16``;
    None for an endpoint's vectors, whose precision is its server's). None as ``model`` (collections written
    before sources were recorded): the model is unknown."""

    model: str | None = Field(description="Embedding model name or path; null when not recorded.")
    precision: str | None = Field(default=None, description="fp32 or bf16; null for an embedding endpoint.")

    def differs_from(self, other: VectorSource) -> bool:
        """Whether ``other`` makes other vectors: another model or precision (a field that either side does
        not know is not compared)."""
        pairs = ((self.model, other.model), (self.precision, other.precision))
        return any(a is not None and b is not None and a != b for a, b in pairs)

    def __str__(self) -> str:
        return f"{self.model or 'an unrecorded model'} in {self.precision or 'its endpoint precision'}"


class CollectionInfo(BaseModel):
    """A collection as listed: its chunk count read from its metadata (no lock taken), or why it is unreadable."""

    name: str
    chunks: int | None = Field(
        description="Chunks the caller may read; null when the collection is unreadable."
    )
    status: Literal["ok", "unreadable"] = "ok"
    problem: str | None = Field(
        default=None, description="Why the collection cannot be read, and what to do."
    )
    dense_dim: int | None = Field(
        default=None, description="Dense vector size; null for a BM25-only collection."
    )
    vectors: VectorSource | None = Field(
        default=None, description="What made the dense vectors; null when not recorded (older collections)."
    )


class EmbedderPrecision(BaseModel):
    """The embedder's precision setting and what it resolves to on this machine (null for an endpoint)."""

    setting: str
    resolved: str | None


class CollectionStats(BaseModel):
    """``deepcite collections stats``: a collection's chunks, documents and chunks per source, read in full."""

    name: str
    chunks: int
    documents: int
    sources: dict[str, int] = Field(description="Chunks per source; ``(none)`` for chunks without one.")
    backend: str
    vectors: VectorSource | None = Field(
        description="What made the dense vectors; null when none are recorded."
    )
    embedder_precision: EmbedderPrecision


class TripleCounts(BaseModel):
    """What LLM triple extraction did during an ingest (``graph.llm_triples``): passages answered from the
    cache, passages asked, the requests sent, passages given triples, and why the others kept their offline
    entities only (reason -> passages)."""

    cached: int = 0
    asked: int = 0
    requests: int = 0
    extracted: int = 0
    triples: int = 0
    failed: dict[str, int] = Field(default_factory=dict)

    def add(self, other: TripleCounts) -> None:
        """Add ``other``'s counts to these."""
        for name in ("cached", "asked", "requests", "extracted", "triples"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, n in other.failed.items():
            self.failed[reason] = self.failed.get(reason, 0) + n
