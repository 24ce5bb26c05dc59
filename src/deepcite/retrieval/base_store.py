"""The SearchStore logic both Qdrant backends share: BM25 weighting and statistics, validation, locking.

A backend (:class:`~deepcite.retrieval.edge_store.EdgeStore`,
:class:`~deepcite.retrieval.qdrant_store.QdrantStore`) implements the small ``_engine_*`` primitives; this
class turns chunks into points, keeps each collection's :class:`~deepcite.retrieval.bm25.Bm25Stats` exact
across upserts, replacements and deletes, and re-weights every stored BM25 vector when the live ``avgdl``
drifts beyond ``SearchSettings.bm25_avgdl_tolerance`` (or ``k1``/``b`` change), so BM25 scores stay those
of a fresh index of the same corpus as it grows.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from deepcite.config import Settings
from deepcite.errors import CollectionNotFoundError, InputError
from deepcite.models import Chunk, Filters, FusionMethod, SearchHit, SearchMode
from deepcite.retrieval.bm25 import (
    Bm25Stats,
    SparseWeights,
    bm25_text,
    document_terms,
    document_vector,
    query_vector,
)
from deepcite.retrieval.filters import Condition, filter_conditions
from deepcite.retrieval.points import (
    LENGTH_KEY,
    chunk_payload,
    payload_chunk,
    point_id,
    validate_collection_name,
)

log = logging.getLogger(__name__)

META_FORMAT = 1


@dataclass
class CollectionMeta:
    """What a store keeps beside a collection's points: its dense dimension and BM25 statistics."""

    dense_dim: int | None
    bm25: Bm25Stats

    def to_dict(self) -> dict[str, Any]:
        return {"format": META_FORMAT, "dense_dim": self.dense_dim, "bm25": self.bm25.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CollectionMeta:
        return cls(dense_dim=data.get("dense_dim"), bm25=Bm25Stats.from_dict(data.get("bm25") or {}))


@dataclass
class PointData:
    """One point to write: id, optional dense vector, BM25 vector, payload."""

    id: str
    dense: list[float] | None
    sparse: SparseWeights
    payload: dict[str, Any]


@dataclass
class ScoredPayload:
    """One engine search result: score and stored payload."""

    score: float
    payload: dict[str, Any]


class QdrantLikeStore(ABC):
    """Shared implementation of :class:`~deepcite.retrieval.store.SearchStore` over a Qdrant engine."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()
        self._dims: dict[str, int | None] = {}

    # -- engine primitives (names are validated and the collection exists, unless said otherwise) --------
    @abstractmethod
    def _engine_names(self) -> list[str]: ...

    @abstractmethod
    def _engine_create(self, name: str, dense_dim: int | None, meta: CollectionMeta) -> None:
        """Create the collection (it does not exist) and store ``meta`` with it."""

    @abstractmethod
    def _engine_drop(self, name: str) -> None: ...

    @abstractmethod
    def _read_meta(self, name: str) -> CollectionMeta: ...

    @abstractmethod
    def _write_meta(self, name: str, meta: CollectionMeta) -> None:
        """Persist ``meta`` atomically (a reader sees the old or the new, never half)."""

    @abstractmethod
    def _engine_upsert(self, name: str, points: Sequence[PointData]) -> None: ...

    @abstractmethod
    def _engine_update_sparse(self, name: str, vectors: Sequence[tuple[str, SparseWeights]]) -> None: ...

    @abstractmethod
    def _engine_retrieve(self, name: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Payloads of those of ``ids`` that exist."""

    @abstractmethod
    def _engine_dense(self, name: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored dense vectors of those of ``ids`` that exist (point id -> vector)."""

    @abstractmethod
    def _engine_scroll(self, name: str, conditions: list[Condition]) -> Iterator[tuple[str, dict[str, Any]]]:
        """(id, payload) of every point matching ``conditions``."""

    @abstractmethod
    def _engine_delete(self, name: str, ids: Sequence[str]) -> None: ...

    @abstractmethod
    def _engine_count(self, name: str, conditions: list[Condition]) -> int: ...

    @abstractmethod
    def _engine_query(
        self,
        name: str,
        *,
        sparse: SparseWeights | None,
        dense: list[float] | None,
        k: int,
        conditions: list[Condition],
        fusion: FusionMethod,
    ) -> list[ScoredPayload]:
        """Nearest points by ``sparse`` or ``dense``, or both prefetched and fused when both are given."""

    @abstractmethod
    def _engine_close(self) -> None: ...

    # -- helpers ------------------------------------------------------------------------------------------
    def _lock(self, name: str) -> threading.RLock:
        with self._locks_guard:
            return self._locks.setdefault(name, threading.RLock())

    def _require(self, name: str) -> str:
        validate_collection_name(name)
        if not self.has_collection(name):
            raise CollectionNotFoundError(name, self.list_collections())
        return name

    def _dense_dim(self, name: str) -> int | None:
        if name not in self._dims:
            self._dims[name] = self._read_meta(name).dense_dim
        return self._dims[name]

    def _checked_meta(self, name: str) -> CollectionMeta:
        """The collection's meta, its BM25 statistics rebuilt from the stored lengths if they disagree
        with the points (a write interrupted between the points and the meta)."""
        meta = self._read_meta(name)
        live = self._engine_count(name, [])
        if live != meta.bm25.n_docs:
            log.warning(
                "collection %r: BM25 statistics are stale (%d points, %d counted); rebuilding",
                name,
                live,
                meta.bm25.n_docs,
            )
            stats = Bm25Stats(include_title=meta.bm25.include_title)
            stats.add(int(p.get(LENGTH_KEY, 0)) for _, p in self._engine_scroll(name, []))
            meta.bm25 = stats  # weight_avgdl 0: every stored vector is re-weighted on this write
        return meta

    def _bm25_params(self) -> tuple[float, float, bool]:
        s = self.settings.search
        return s.bm25_k1, s.bm25_b, s.include_title

    def _reweight_if_stale(self, name: str, meta: CollectionMeta) -> None:
        k1, b, include_title = self._bm25_params()
        stats = meta.bm25
        if not stats.needs_reweight(k1, b, include_title, self.settings.search.bm25_avgdl_tolerance):
            return
        avgdl = stats.avgdl
        log.info(
            "collection %r: re-weighting %d BM25 vectors (avgdl %.2f -> %.2f)",
            name,
            stats.n_docs,
            stats.weight_avgdl,
            avgdl,
        )
        batch: list[tuple[str, SparseWeights]] = []
        size = self.settings.store.upsert_batch
        for pid, payload in self._engine_scroll(name, []):
            tf = document_terms(
                bm25_text(payload.get("title") or "", payload.get("text") or "", include_title=include_title)
            )
            batch.append((pid, document_vector(tf, avgdl, k1, b)))
            if len(batch) >= size:
                self._engine_update_sparse(name, batch)
                batch = []
        if batch:
            self._engine_update_sparse(name, batch)
        stats.weight_avgdl, stats.k1, stats.b, stats.include_title = avgdl, k1, b, include_title

    # -- SearchStore --------------------------------------------------------------------------------------
    def list_collections(self) -> list[str]:
        return sorted(self._engine_names())

    def has_collection(self, name: str) -> bool:
        return name in self._engine_names()

    def create_collection(self, name: str, *, dense_dim: int | None) -> None:
        """Create ``name`` (``dense_dim=None``: BM25-only); a no-op if it exists with the same dimension."""
        validate_collection_name(name)
        if dense_dim is not None and (not isinstance(dense_dim, int) or dense_dim < 1):
            raise InputError(f"dense_dim must be a positive integer or None (BM25-only), not {dense_dim!r}")
        with self._lock(name):
            if self.has_collection(name):
                existing = self._dense_dim(name)
                if existing != dense_dim:
                    raise InputError(
                        f"collection {name!r} exists with dense dimension {existing}, not {dense_dim}; "
                        "use the embedder it was built with, or drop it and ingest again"
                    )
                return
            k1, b, include_title = self._bm25_params()
            meta = CollectionMeta(dense_dim, Bm25Stats(k1=k1, b=b, include_title=include_title))
            self._engine_create(name, dense_dim, meta)
            self._dims[name] = dense_dim

    def drop_collection(self, name: str) -> None:
        with self._lock(self._require(name)):
            self._engine_drop(name)
            self._dims.pop(name, None)

    def upsert(
        self, name: str, chunks: Sequence[Chunk], dense: Sequence[Sequence[float]] | np.ndarray | None
    ) -> None:
        """Insert or replace chunks by ``chunk_id``; ``dense`` is one vector per chunk (None if BM25-only)."""
        self._require(name)
        dim = self._dense_dim(name)
        vectors = self._validated_vectors(name, dim, chunks, dense)
        k1, b, include_title = self._bm25_params()
        latest: dict[str, int] = {c.chunk_id: i for i, c in enumerate(chunks)}  # last occurrence wins
        order = sorted(latest.values())
        with self._lock(name):
            meta = self._checked_meta(name)
            ids = [point_id(chunks[i].chunk_id) for i in order]
            old = self._engine_retrieve(name, ids)
            tfs = [
                document_terms(bm25_text(chunks[i].title, chunks[i].text, include_title=include_title))
                for i in order
            ]
            lengths = [sum(tf.values()) for tf in tfs]
            meta.bm25.remove(int(p.get(LENGTH_KEY, 0)) for p in old.values())
            meta.bm25.add(lengths)
            stale = meta.bm25.needs_reweight(k1, b, include_title, self.settings.search.bm25_avgdl_tolerance)
            avgdl = meta.bm25.avgdl if stale else meta.bm25.weight_avgdl
            size = self.settings.store.upsert_batch
            points = [
                PointData(
                    id=pid,
                    dense=vectors[i] if vectors is not None else None,
                    sparse=document_vector(tf, avgdl, k1, b),
                    payload=chunk_payload(chunks[i], length),
                )
                for pid, i, tf, length in zip(ids, order, tfs, lengths, strict=True)
            ]
            for start in range(0, len(points), size):
                self._engine_upsert(name, points[start : start + size])
            if stale and meta.bm25.n_docs == len(points):  # only this batch is stored: weighted already
                meta.bm25.weight_avgdl, meta.bm25.k1, meta.bm25.b = avgdl, k1, b
                meta.bm25.include_title = include_title
            self._reweight_if_stale(name, meta)
            self._write_meta(name, meta)

    @staticmethod
    def _validated_vectors(
        name: str,
        dim: int | None,
        chunks: Sequence[Chunk],
        dense: Sequence[Sequence[float]] | np.ndarray | None,
    ) -> list[list[float]] | None:
        if dim is None:
            if dense is not None and len(dense) and len(dense[0]):
                raise InputError(f"collection {name!r} is BM25-only (no dense vectors); pass dense=None")
            return None
        if dense is None:
            raise InputError(f"collection {name!r} needs one {dim}-d dense vector per chunk; got none")
        array = np.asarray(dense, dtype=np.float32)
        if array.ndim != 2 or array.shape[0] != len(chunks) or (len(chunks) and array.shape[1] != dim):
            raise InputError(
                f"collection {name!r} needs {len(chunks)} dense vectors of dimension {dim}; "
                f"got shape {array.shape}"
            )
        if not np.isfinite(array).all():
            raise InputError("dense vectors contain NaN or infinity; check the embedder output")
        return array.tolist()

    def delete_document(self, name: str, doc_id: str) -> int:
        self._require(name)
        with self._lock(name):
            meta = self._checked_meta(name)
            found = list(self._engine_scroll(name, filter_conditions(Filters(doc_ids=[doc_id])) or []))
            if not found:
                return 0
            self._engine_delete(name, [pid for pid, _ in found])
            meta.bm25.remove(int(p.get(LENGTH_KEY, 0)) for _, p in found)
            self._reweight_if_stale(name, meta)
            self._write_meta(name, meta)
            return len(found)

    def count(self, name: str, filters: Filters | None = None) -> int:
        self._require(name)
        conditions = filter_conditions(filters)
        if conditions is None:
            return 0
        with self._lock(name):
            return self._engine_count(name, conditions)

    def existing_ids(self, name: str, chunk_ids: Sequence[str]) -> set[str]:
        self._require(name)
        by_point = {point_id(c): c for c in chunk_ids}
        with self._lock(name):
            found = self._engine_retrieve(name, list(by_point))
        return {by_point[pid] for pid in found}

    def dense_vectors(self, name: str, chunk_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored dense vectors of these chunks (chunk id -> vector); none for a BM25-only collection."""
        self._require(name)
        if not chunk_ids or self._dense_dim(name) is None:
            return {}
        by_point = {point_id(c): c for c in chunk_ids}
        with self._lock(name):
            found = self._engine_dense(name, list(by_point))
        return {by_point[pid]: vector for pid, vector in found.items()}

    def scroll(self, name: str, filters: Filters | None = None) -> Iterator[Chunk]:
        self._require(name)
        conditions = filter_conditions(filters)
        if conditions is None:
            return
        for _, payload in self._engine_scroll(name, conditions):
            yield payload_chunk(payload)

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
        """Top-``k`` chunks; ``vector`` is required for dense and hybrid modes (not for BM25)."""
        self._require(name)
        mode = SearchMode.from_str(mode) if isinstance(mode, str) else mode
        if k < 1:
            raise InputError(f"k must be at least 1, not {k}")
        fusion = fusion or FusionMethod.from_str(self.settings.search.fusion)
        dim = self._dense_dim(name)
        dense: list[float] | None = None
        if mode is not SearchMode.BM25:
            if dim is None:
                raise InputError(
                    f"collection {name!r} is BM25-only (no dense vectors); search it with mode bm25"
                )
            if vector is None:
                raise InputError(f"{mode.value} search needs the query's dense vector; got none")
            dense = [float(x) for x in vector]
            if len(dense) != dim:
                raise InputError(
                    f"query vector has dimension {len(dense)}; collection {name!r} expects {dim}"
                )
        sparse = query_vector(text) if mode is not SearchMode.DENSE else None
        conditions = filter_conditions(filters)
        if conditions is None or (mode is SearchMode.BM25 and sparse is not None and not sparse.indices):
            return []
        if sparse is not None and not sparse.indices:
            sparse = None  # hybrid with a query of stop words only: dense alone
        with self._lock(name):
            results = self._engine_query(
                name, sparse=sparse, dense=dense, k=k, conditions=conditions, fusion=fusion
            )
        return [
            SearchHit(chunk=payload_chunk(r.payload), score=r.score, rank=rank, mode=mode)
            for rank, r in enumerate(results, start=1)
        ]

    def optimize(self, name: str) -> None:
        """Let the engine merge segments and build its indexes (a no-op where the engine does it itself)."""
        self._require(name)

    def close(self) -> None:
        self._engine_close()

    def __enter__(self) -> QdrantLikeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
