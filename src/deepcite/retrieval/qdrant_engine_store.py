"""The SearchStore both Qdrant backends share, built on their :class:`QdrantEngineHooks`.

A backend (:class:`~deepcite.retrieval.edge_store.EdgeStore`, :class:`~deepcite.retrieval.qdrant_store.QdrantStore`)
implements the ``qdrant_*`` primitives; this class turns chunks into points and searches, checks vectors
(:mod:`~deepcite.retrieval.vector_checks`), keeps BM25 exact (:mod:`~deepcite.retrieval.bm25_upkeep`) and
serialises writes per collection (:class:`~deepcite.retrieval.collection_locks.CollectionLocks`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np

from deepcite.config import Settings
from deepcite.errors import CollectionNotFoundError, DeepciteError, InputError
from deepcite.models import Chunk, CollectionInfo, Filters, FusionMethod, SearchHit, SearchMode, VectorSource
from deepcite.retrieval.bm25 import Bm25Stats, bm25_text, document_terms, document_vector, query_vector
from deepcite.retrieval.bm25_upkeep import bm25_params, checked_meta, reweight_if_stale
from deepcite.retrieval.collection_locks import CollectionLocks
from deepcite.retrieval.filters import filter_conditions
from deepcite.retrieval.points import (
    LENGTH_KEY,
    chunk_payload,
    payload_chunk,
    point_id,
    validate_collection_name,
)
from deepcite.retrieval.qdrant_engine_hooks import (
    CollectionMeta,
    PointData,
    QdrantEngineHooks,
    QdrantEngineQuery,
)
from deepcite.retrieval.vector_checks import (
    checked_dense_found,
    checked_query_vector,
    checked_scores,
    checked_vectors,
)


class QdrantEngineStore(QdrantEngineHooks):
    """The shared implementation of :class:`~deepcite.retrieval.store.SearchStore` over a Qdrant engine."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = CollectionLocks()
        self._dims: dict[str, int | None] = {}

    def _valid(self, name: str) -> str:
        return validate_collection_name(name, self.settings.store.max_collection_name_chars)

    def _require(self, name: str) -> str:
        self._valid(name)
        if not self.has_collection(name):
            raise CollectionNotFoundError(name, self.list_collections())
        return name

    def _dense_dim(self, name: str) -> int | None:
        if name not in self._dims:
            self._dims[name] = self.read_meta(name).dense_dim
        return self._dims[name]

    # -- SearchStore --------------------------------------------------------------------------------------
    def list_collections(self) -> list[str]:
        return sorted(self.qdrant_names())

    def has_collection(self, name: str) -> bool:
        return self._valid(name) in self.qdrant_names()

    def describe(self, name: str) -> CollectionInfo:
        """The collection's chunk count from its metadata, without opening it (so listing takes no lock);
        ``status="unreadable"`` with the reason when the metadata cannot be read."""
        try:
            meta = self.read_meta(self._require(name))
        except DeepciteError as exc:
            return CollectionInfo(name=name, chunks=None, status="unreadable", problem=str(exc))
        return CollectionInfo(
            name=name, chunks=meta.bm25.n_docs, dense_dim=meta.dense_dim, vectors=_vector_source(meta)
        )

    def create_collection(self, name: str, *, dense_dim: int | None) -> None:
        """Create ``name`` (``dense_dim=None``: BM25-only); a no-op if it exists with the same dimension."""
        self._valid(name)
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
            k1, b, include_title = bm25_params(self.settings)
            meta = CollectionMeta(
                dense_dim, Bm25Stats(k1=k1, b=b, include_title=include_title), metadata_keys=[]
            )
            self.qdrant_create(name, dense_dim, meta)  # another process may have created it first
            if self._dense_dim(name) != dense_dim:
                existing = self._dims.pop(name)
                raise InputError(
                    f"collection {name!r} was just created by another process with dense dimension "
                    f"{existing}, not {dense_dim}; use the embedder it was built with"
                )

    def drop_collection(self, name: str) -> None:
        with self._lock(self._require(name)):
            self.qdrant_drop(name)
            self._dims.pop(name, None)

    def vector_source(self, name: str) -> VectorSource | None:
        return _vector_source(self.read_meta(self._require(name)))

    def claim_vector_source(self, name: str, source: VectorSource) -> VectorSource | None:
        """Check and record in one step, under the collection's lock and, where Qdrant's engine locks a
        collection for one process (Edge), with that lock taken first: two ingests that start together
        cannot both pass the check."""
        with self._lock(self._require(name)):
            self.qdrant_hold(name)
            meta = self.read_meta(name)
            recorded = _vector_source(meta)
            if recorded is not None and recorded.differs_from(source):
                return recorded
            if recorded != source:
                meta.vectors = source
                self.write_meta(name, meta)
            return None

    def metadata_keys(self, name: str) -> list[str] | None:
        return self.read_meta(self._require(name)).metadata_keys

    def terms_current(self, name: str) -> bool:
        return self.read_meta(self._require(name)).bm25.terms_current

    def refresh_terms(self, name: str) -> bool:
        self._require(name)
        with self._lock(name):
            meta = checked_meta(self, name)
            if meta.bm25.terms_current:
                return False
            reweight_if_stale(self, name, meta, self.settings)
            self.write_meta(name, meta)
            return True

    def upsert(
        self, name: str, chunks: Sequence[Chunk], dense: Sequence[Sequence[float]] | np.ndarray | None
    ) -> None:
        """Insert or replace chunks by ``chunk_id``; ``dense`` is one vector per chunk (None if BM25-only)."""
        self._require(name)
        dim = self._dense_dim(name)
        vectors = checked_vectors(name, dim, chunks, dense)
        k1, b, include_title = bm25_params(self.settings)
        latest: dict[str, int] = {c.chunk_id: i for i, c in enumerate(chunks)}  # last occurrence wins
        order = sorted(latest.values())
        with self._lock(name):
            meta = checked_meta(self, name)
            ids = [point_id(chunks[i].chunk_id) for i in order]
            old = self.qdrant_retrieve(name, ids)
            tfs = [
                document_terms(bm25_text(chunks[i].title, chunks[i].text, include_title=include_title))
                for i in order
            ]
            lengths = [sum(tf.values()) for tf in tfs]
            meta.bm25.remove(int(p.get(LENGTH_KEY, 0)) for p in old.values())
            meta.bm25.add(lengths)
            meta.record_metadata_keys(
                (chunks[i].metadata for i in order), self.settings.search.max_metadata_keys
            )
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
                self.qdrant_upsert(name, points[start : start + size])
            if stale and meta.bm25.n_docs == len(points):  # only this batch is stored: weighted already
                meta.bm25.weighted(avgdl, k1, b, include_title)
            reweight_if_stale(self, name, meta, self.settings)
            self.write_meta(name, meta)

    def delete_document(self, name: str, doc_id: str) -> int:
        self._require(name)
        with self._lock(name):
            meta = checked_meta(self, name)
            found = list(self.qdrant_scroll(name, filter_conditions(Filters(doc_ids=[doc_id])) or []))
            if not found:
                return 0
            meta.bm25.remove(int(p.get(LENGTH_KEY, 0)) for _, p in found)
            # the statistics first: a delete cut short (kill -9) leaves more points than they count, which the
            # next write recounts, never fewer, which `collections check` must call points lost
            self.write_meta(name, meta)
            self.qdrant_delete(name, [pid for pid, _ in found])
            reweight_if_stale(self, name, meta, self.settings)
            self.write_meta(name, meta)
            return len(found)

    def count(self, name: str, filters: Filters | None = None) -> int:
        self._require(name)
        conditions = filter_conditions(filters)
        if conditions is None:
            return 0
        with self._lock(name):
            return self.qdrant_count(name, conditions)

    def existing_ids(self, name: str, chunk_ids: Sequence[str]) -> set[str]:
        self._require(name)
        by_point = {point_id(c): c for c in chunk_ids}
        with self._lock(name):
            found = self.qdrant_retrieve(name, list(by_point))
        return {by_point[pid] for pid in found}

    def dense_vectors(self, name: str, chunk_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored dense vectors of these chunks (chunk id -> vector); none for a BM25-only collection."""
        self._require(name)
        if not chunk_ids or self._dense_dim(name) is None:
            return {}
        by_point = {point_id(c): c for c in chunk_ids}
        with self._lock(name):
            found = self.qdrant_dense(name, list(by_point))
        return {by_point[pid]: vector for pid, vector in found.items()}

    def scroll(self, name: str, filters: Filters | None = None) -> Iterator[Chunk]:
        self._require(name)
        conditions = filter_conditions(filters)
        if conditions is None:
            return
        for _, payload in self.qdrant_scroll(name, conditions):
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
        """Top-``k`` chunks; ``vector`` is required for dense and hybrid modes (not for BM25).

        Equal scores are ordered by chunk id, and the cut at ``k`` keeps the lowest ids of those tied with the
        ``k``-th: Qdrant's engine breaks ties in no fixed order (a hybrid search's fused ties came back in another
        order from one process to the next), so the search fetches more until every chunk tied with the
        ``k``-th is in hand. The same request gets the same hits in the same order.
        """
        self._require(name)
        mode = SearchMode.from_str(mode) if isinstance(mode, str) else mode
        if k < 1:
            raise InputError(f"k must be at least 1, not {k}")
        fusion = fusion or FusionMethod.from_str(self.settings.search.fusion)
        dense = checked_query_vector(name, self._dense_dim(name), mode, vector)
        sparse = query_vector(text) if mode is not SearchMode.DENSE else None
        conditions = filter_conditions(filters)
        if conditions is None or (mode is SearchMode.BM25 and sparse is not None and not sparse.indices):
            return []
        if sparse is not None and not sparse.indices:
            sparse = None  # hybrid with a query of stop words only: dense alone
        query = QdrantEngineQuery(
            sparse=sparse,
            dense=dense,
            k=k + 1,
            conditions=conditions,
            fusion=fusion,
            prefetch=max(self.settings.search.prefetch_limit, k),
            rrf_k=self.settings.search.rrf_k,
        )
        with self._lock(name):
            while True:
                results = self.qdrant_query(name, query)
                if len(results) < query.k or results[-1].score < results[k - 1].score:
                    break
                query = replace(query, k=query.k * 2)
            tolerance = self.settings.store.vector_norm_tolerance
            checked_scores(name, mode, [r.score for r in results], tolerance)
            if query.dense is not None and query.sparse is None and not results:
                checked_dense_found(name, 0, self.qdrant_count(name, conditions))
            if (
                results and query.sparse is not None and query.dense is not None
            ):  # fused: a dense score hidden
                probe = self.qdrant_query(name, replace(query, sparse=None, k=1))
                checked_scores(name, SearchMode.DENSE, [r.score for r in probe], tolerance)
                checked_dense_found(name, len(probe), len(results))
        chunks = sorted(
            ((payload_chunk(r.payload), r.score) for r in results), key=lambda hit: (-hit[1], hit[0].chunk_id)
        )
        return [
            SearchHit(chunk=chunk, score=score, rank=rank, mode=mode)
            for rank, (chunk, score) in enumerate(chunks[:k], start=1)
        ]

    def optimize(self, name: str) -> None:
        """Let Qdrant's engine merge segments and build its indexes (a no-op where it does so itself)."""
        self._require(name)

    def close(self) -> None:
        self.qdrant_close()

    def __enter__(self) -> QdrantEngineStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# every dense vector deepcite wrote before it recorded their source was computed in fp32
_UNRECORDED = VectorSource(model=None, precision="fp32")


def _vector_source(meta: CollectionMeta) -> VectorSource | None:
    if meta.vectors is not None or not meta.dense_dim or not meta.bm25.n_docs:
        return meta.vectors
    return _UNRECORDED
