"""The SearchStore protocol: one contract, two Qdrant implementations (in-process Edge, qdrant-client), and
:func:`open_store`, which opens the configured one."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from deepcite.config import Settings
from deepcite.models import Chunk, CollectionInfo, Filters, FusionMethod, SearchHit, SearchMode, VectorSource


@runtime_checkable
class SearchStore(Protocol):
    """Collections of chunks searchable by BM25 (sparse), dense vectors, or both fused inside Qdrant's engine.

    The store computes BM25 sparse vectors itself from ``chunk.title`` + ``chunk.text`` with
    :func:`deepcite.text.tokenize` (see :mod:`deepcite.retrieval.bm25`); callers pass only the dense
    vectors. A collection created with ``dense_dim=None`` is BM25-only: upsert with ``dense=None`` and
    search with ``mode=bm25``.
    """

    def create_collection(self, name: str, *, dense_dim: int | None) -> None:
        """Create ``name`` if it does not exist (a no-op when it does with the same dimension)."""

    def list_collections(self) -> list[str]: ...

    def has_collection(self, name: str) -> bool:
        """Whether ``name`` exists; raises InputError for an invalid name before touching any file."""

    def describe(self, name: str) -> CollectionInfo:
        """The collection's chunk count from its metadata, without opening (or locking) it; an unreadable
        one is ``status="unreadable"`` with the reason."""

    def drop_collection(self, name: str) -> None:
        """Remove a collection and its files; raises CollectionNotFoundError if absent."""

    def upsert(self, name: str, chunks: Sequence[Chunk], dense: Sequence[Sequence[float]] | None) -> None:
        """Insert or replace chunks by ``chunk_id`` (idempotent), with one dense vector per chunk
        (``None`` for a BM25-only collection)."""

    def delete_document(self, name: str, doc_id: str) -> int:
        """Delete every chunk of a document; returns how many were removed."""

    def count(self, name: str, filters: Filters | None = None) -> int: ...

    def metadata_keys(self, name: str) -> list[str] | None:
        """The metadata keys (dotted paths) the collection's chunks have held, recorded at ingest for the filter
        check; None for a collection made before they were recorded (or holding too many)."""

    def terms_current(self, name: str) -> bool:
        """Whether the collection's stored BM25 terms were read by this deepcite's tokenizer (an empty one's
        are); the next write reads older ones again."""

    def refresh_terms(self, name: str) -> bool:
        """Read every stored passage's BM25 terms again, from its stored text, when an older tokenizer read them
        (an ingest calls it, so an ingest that writes nothing new brings them up to date too); whether it did."""

    def vector_source(self, name: str) -> VectorSource | None:
        """The model and precision the collection's dense vectors were made with; None for a BM25-only or an
        empty collection with none recorded. A collection written before sources were recorded holds fp32
        vectors of an unknown model (``VectorSource(model=None, precision="fp32")``)."""

    def claim_vector_source(self, name: str, source: VectorSource) -> VectorSource | None:
        """Record ``source`` as what makes the collection's dense vectors, unless the collection holds
        vectors of another (:meth:`VectorSource.differs_from`): then nothing is recorded and that source is
        returned. The check and the record are one atomic step."""

    def existing_ids(self, name: str, chunk_ids: Sequence[str]) -> set[str]:
        """Which of these chunk ids are already stored (lets an interrupted ingest resume cheaply)."""

    def search(
        self,
        name: str,
        *,
        text: str,
        vector: Sequence[float] | None,
        mode: SearchMode,
        k: int,
        filters: Filters | None = None,
        fusion: FusionMethod | None = None,
    ) -> list[SearchHit]:
        """Top-k chunks for the query; ``vector`` is required for dense and hybrid modes."""

    def dense_vectors(self, name: str, chunk_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored dense vectors of these chunks (chunk id -> vector), so callers never re-embed them."""

    def scroll(self, name: str, filters: Filters | None = None) -> Iterator[Chunk]:
        """Every stored chunk (matching the filters), in no particular order."""

    def optimize(self, name: str) -> None:
        """Merge segments and build indexes after a bulk write (Edge optimises only when asked)."""

    def close(self) -> None: ...


def open_store(settings: Settings) -> SearchStore:
    """The store ``settings.store.backend`` names.

    ``edge`` (default): shards under ``<data_dir>/edge``. ``qdrant``: ``settings.store.url`` (with
    ``api_key``) when set, else qdrant-client's local mode at ``settings.qdrant_path``.
    """
    if settings.store.backend == "qdrant":
        from deepcite.retrieval.qdrant_store import QdrantStore

        return QdrantStore(settings)
    from deepcite.retrieval.edge_store import EdgeStore

    return EdgeStore(settings.edge_path, settings)
