"""What each backend of Qdrant's engine provides to
:class:`~deepcite.retrieval.qdrant_engine_store.QdrantEngineStore`: the records it reads and writes, and the
small ``qdrant_*`` primitives it implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from deepcite.models import FusionMethod, VectorSource
from deepcite.retrieval.bm25 import SPARSE_VECTOR_NAME, Bm25Stats, SparseWeights
from deepcite.retrieval.filters import Condition
from deepcite.retrieval.points import DENSE_VECTOR_NAME

META_FORMAT = 1


@dataclass
class CollectionMeta:
    """What a store keeps beside a collection's points: its dense dimension, BM25 statistics and the metadata
    keys its chunks have held (dotted paths, for the filter check; None: not recorded, any key is accepted)."""

    dense_dim: int | None
    bm25: Bm25Stats
    metadata_keys: list[str] | None = None
    vectors: VectorSource | None = None  # the model and precision of the dense vectors, once recorded

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": META_FORMAT,
            "dense_dim": self.dense_dim,
            "bm25": self.bm25.to_dict(),
            "metadata_keys": self.metadata_keys,
            "vectors": self.vectors.model_dump() if self.vectors else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CollectionMeta:
        vectors = data.get("vectors")
        return cls(
            dense_dim=data.get("dense_dim"),
            bm25=Bm25Stats.from_dict(data.get("bm25") or {}),
            metadata_keys=data.get("metadata_keys"),
            vectors=VectorSource.model_validate(vectors) if vectors else None,
        )

    def record_metadata_keys(self, records: Iterable[dict[str, Any]], cap: int) -> None:
        """Add the keys of ``records`` (nested objects as dotted paths) to :attr:`metadata_keys`; past
        ``cap`` keys the record is dropped (None), and any key is accepted from then on."""
        if self.metadata_keys is None:
            return
        keys = set(self.metadata_keys)
        stack: list[tuple[dict[str, Any], str]] = [(r, "") for r in records]
        while stack and len(keys) <= cap:
            record, prefix = stack.pop()
            for key, value in record.items():
                keys.add(f"{prefix}{key}")
                if isinstance(value, dict):
                    stack.append((value, f"{prefix}{key}."))
        self.metadata_keys = sorted(keys) if len(keys) <= cap else None


@dataclass
class PointData:
    """One point to write: id, optional dense vector, BM25 vector, payload."""

    id: str
    dense: list[float] | None
    sparse: SparseWeights
    payload: dict[str, Any]

    def vectors(self, sparse: Callable[[SparseWeights], Any]) -> dict[str, Any]:
        """The point's named vectors: BM25 (as Qdrant's sparse vector built by ``sparse``), and dense
        when it has one."""
        vector: dict[str, Any] = {SPARSE_VECTOR_NAME: sparse(self.sparse)}
        if self.dense is not None:
            vector[DENSE_VECTOR_NAME] = self.dense
        return vector


@dataclass
class ScoredPayload:
    """One Qdrant search result: score and stored payload."""

    score: float
    payload: dict[str, Any]


@dataclass(frozen=True)
class QdrantEngineQuery:
    """One search as Qdrant's engine runs it: the BM25 and dense query vectors (at least one), the filter, how
    many points to return, and, when both vectors are given, how deep each is searched (``prefetch``) before
    the two lists are fused (``fusion``, RRF with constant ``rrf_k``)."""

    sparse: SparseWeights | None
    dense: list[float] | None
    k: int
    conditions: list[Condition]
    fusion: FusionMethod
    prefetch: int
    rrf_k: int

    def vectors(self, to_sparse: Callable[[SparseWeights], Any]) -> list[tuple[Any, str]]:
        """(vector, vector name) of each query vector given, BM25 first (as Qdrant's sparse vector built
        by ``to_sparse``), then dense."""
        queries: list[tuple[Any, str]] = []
        if self.sparse is not None:
            queries.append((to_sparse(self.sparse), SPARSE_VECTOR_NAME))
        if self.dense is not None:
            queries.append((self.dense, DENSE_VECTOR_NAME))
        return queries


def scroll_pages(fetch: Callable[[Any], tuple[Sequence[Any], Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(id, payload) of every record of every page: ``fetch(offset)`` returns a page of records (with ``id``
    and ``payload``) and the next offset, ``None`` after the last page; the first call gets ``None``."""
    offset = None
    while True:
        records, offset = fetch(offset)
        for r in records:
            yield str(r.id), r.payload or {}
        if offset is None:
            return


class QdrantEngineHooks(ABC):
    """The primitives a backend implements (names are validated and the collection exists, unless said
    otherwise); :class:`~deepcite.retrieval.qdrant_engine_store.QdrantEngineStore` builds the SearchStore on
    them."""

    @abstractmethod
    def qdrant_names(self) -> list[str]: ...

    @abstractmethod
    def qdrant_create(self, name: str, dense_dim: int | None, meta: CollectionMeta) -> None:
        """Create the collection (it does not exist) and store ``meta`` with it."""

    @abstractmethod
    def qdrant_drop(self, name: str) -> None: ...

    @abstractmethod
    def read_meta(self, name: str) -> CollectionMeta: ...

    @abstractmethod
    def write_meta(self, name: str, meta: CollectionMeta) -> None:
        """Persist ``meta`` atomically (a reader sees the old or the new, never half)."""

    @abstractmethod
    def qdrant_upsert(self, name: str, points: Sequence[PointData]) -> None: ...

    @abstractmethod
    def qdrant_update_sparse(self, name: str, vectors: Sequence[tuple[str, SparseWeights]]) -> None: ...

    @abstractmethod
    def qdrant_retrieve(self, name: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Payloads of those of ``ids`` that exist."""

    @abstractmethod
    def qdrant_dense(self, name: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored dense vectors of those of ``ids`` that exist (point id -> vector)."""

    @abstractmethod
    def qdrant_scroll(self, name: str, conditions: list[Condition]) -> Iterator[tuple[str, dict[str, Any]]]:
        """(id, payload) of every point matching ``conditions``."""

    @abstractmethod
    def qdrant_delete(self, name: str, ids: Sequence[str]) -> None: ...

    @abstractmethod
    def qdrant_count(self, name: str, conditions: list[Condition]) -> int: ...

    @abstractmethod
    def qdrant_query(self, name: str, query: QdrantEngineQuery) -> list[ScoredPayload]:
        """Nearest points by the query's one vector, or by both prefetched and fused."""

    @abstractmethod
    def qdrant_close(self) -> None: ...

    def qdrant_hold(self, name: str) -> None:  # noqa: B027 (a no-op unless Qdrant's engine locks collections)
        """Take Qdrant's lock that makes this process the collection's only writer, where Qdrant's engine
        has one (Edge: the shard's lock, held while the shard is open); a no-op elsewhere."""
