"""The scale-out search engine: a Qdrant server or cluster through ``qdrant-client`` (or its local mode).

Usage::

    store = QdrantStore(settings)                 # settings.store.url (+ api_key), else local path mode
    store = QdrantStore(settings, QdrantClient(path=tmp))   # any client

Points, payloads, BM25 sparse vectors and filters are exactly those of
:class:`~deepcite.retrieval.edge_store.EdgeStore`, so both give the same BM25 scores. A collection is created
with the ``shard_number``, ``replication_factor`` and ``write_consistency_factor`` of ``StoreSettings``, and
its quantisation, HNSW, on-disk and payload-index settings (which local mode records but does not apply).

The dense dimension and BM25 statistics live in the **collection's own metadata** (Qdrant collection
``metadata``, key ``deepcite``): it travels with the collection on the cluster, is visible to every
client, is replaced in one request, and is dropped with the collection; a metadata point would instead
show up in counts, scrolls and searches. Local ``path=`` mode searches sparse vectors in pure Python: fine
for tests, never for serving.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from deepcite.config import Settings, StoreSettings
from deepcite.errors import StoreError
from deepcite.models import FusionMethod
from deepcite.retrieval import filters as f
from deepcite.retrieval.bm25 import SPARSE_VECTOR_NAME, SparseWeights
from deepcite.retrieval.points import DENSE_VECTOR_NAME, payload_key
from deepcite.retrieval.qdrant_engine_hooks import (
    CollectionMeta,
    PointData,
    QdrantEngineQuery,
    ScoredPayload,
    scroll_pages,
)
from deepcite.retrieval.qdrant_engine_store import QdrantEngineStore

META_KEY = "deepcite"


def qdrant_filter(conditions: list[f.Condition]) -> models.Filter | None:
    """The qdrant-client filter for backend-neutral conditions (``None`` for no condition)."""
    return models.Filter(must=[_condition(c) for c in conditions]) if conditions else None


def _condition(c: f.Condition) -> Any:
    if isinstance(c, f.Match):
        return models.FieldCondition(key=c.key, match=models.MatchValue(value=c.value))
    if isinstance(c, f.MatchAny):
        return models.FieldCondition(key=c.key, match=models.MatchAny(any=list(c.values)))
    if isinstance(c, f.Range):
        return models.FieldCondition(key=c.key, range=models.Range(gte=c.gte, lte=c.lte))
    if isinstance(c, f.IsEmpty):
        return models.IsEmptyCondition(is_empty=models.PayloadField(key=c.key))
    return models.Filter(should=[_condition(x) for x in c.conditions])


def _sparse(weights: SparseWeights) -> models.SparseVector:
    return models.SparseVector(indices=weights.indices, values=weights.values)


def quantization_config(store: StoreSettings) -> Any:
    """The collection's quantisation config (``None`` for none); the compressed copy in RAM if asked."""
    ram = store.quantization_always_ram
    return {
        "none": None,
        "int8": models.ScalarQuantization(
            scalar=models.ScalarQuantizationConfig(
                type=models.ScalarType.INT8, quantile=store.quantization_quantile, always_ram=ram
            )
        ),
        "binary": models.BinaryQuantization(binary=models.BinaryQuantizationConfig(always_ram=ram)),
    }[store.quantization]


def search_params(store: StoreSettings) -> models.SearchParams | None:
    """Per-search parameters of a dense search: HNSW beam width and the quantised search's rescoring
    (``None`` at the defaults: Qdrant's own search)."""
    if store.quantization == "none" and store.hnsw_ef is None:
        return None
    return models.SearchParams(
        hnsw_ef=store.hnsw_ef,
        quantization=models.QuantizationSearchParams(
            ignore=store.quantization_ignore,
            rescore=store.quantization_rescore,
            oversampling=store.quantization_oversampling,
        ),
    )


def client_from_settings(settings: Settings) -> QdrantClient:
    """A client for ``settings.store.url`` (with ``api_key``), else local mode at ``settings.qdrant_path``."""
    store = settings.store
    if store.url:
        return QdrantClient(url=store.url, api_key=store.api_key)
    settings.qdrant_path.mkdir(parents=True, exist_ok=True)
    return QdrantClient(path=str(settings.qdrant_path))


class QdrantStore(QdrantEngineStore):
    """:class:`~deepcite.retrieval.store.SearchStore` on a Qdrant server, cluster, or local-mode folder."""

    def __init__(self, settings: Settings, client: QdrantClient | None = None) -> None:
        super().__init__(settings)
        try:
            self.client = client if client is not None else client_from_settings(settings)
        except Exception as exc:  # qdrant-client raises RuntimeError/ValueError/IO errors here
            raise StoreError(
                f"cannot open Qdrant ({settings.store.url or settings.qdrant_path}): {exc}"
            ) from exc

    # -- Qdrant primitives ----------------------------------------------------------------------------------
    def qdrant_names(self) -> list[str]:
        return [c.name for c in self.client.get_collections().collections]

    def has_collection(self, name: str) -> bool:
        return self.client.collection_exists(self._valid(name))  # the name checked before any request

    def qdrant_create(self, name: str, dense_dim: int | None, meta: CollectionMeta) -> None:
        store = self.settings.store
        vectors = (
            {
                DENSE_VECTOR_NAME: models.VectorParams(
                    size=dense_dim, distance=models.Distance.COSINE, on_disk=store.vectors_on_disk
                )
            }
            if dense_dim
            else {}
        )
        self.client.create_collection(
            name,
            vectors_config=vectors,
            sparse_vectors_config={
                SPARSE_VECTOR_NAME: models.SparseVectorParams(modifier=models.Modifier.IDF)
            },
            shard_number=store.shard_number,
            replication_factor=store.replication_factor,
            write_consistency_factor=store.write_consistency_factor,
            on_disk_payload=store.payload_on_disk,
            hnsw_config=models.HnswConfigDiff(
                m=store.hnsw_m,
                ef_construct=store.hnsw_ef_construct,
                full_scan_threshold=store.hnsw_full_scan_threshold_kb,
            ),
            quantization_config=quantization_config(store),
            optimizers_config=models.OptimizersConfigDiff(indexing_threshold=store.indexing_threshold_kb),
            metadata={META_KEY: meta.to_dict()},
        )
        for field, kind in store.payload_indexes.items():
            self.client.create_payload_index(name, payload_key(field), models.PayloadSchemaType(kind))

    def qdrant_drop(self, name: str) -> None:
        self.client.delete_collection(name)

    def read_meta(self, name: str) -> CollectionMeta:
        metadata = self.client.get_collection(name).config.metadata or {}
        if META_KEY not in metadata:
            raise StoreError(
                f"Qdrant collection {name!r} was not created by deepcite (no {META_KEY!r} metadata); "
                "use another name or drop it"
            )
        return CollectionMeta.from_dict(metadata[META_KEY])

    def write_meta(self, name: str, meta: CollectionMeta) -> None:
        self.client.update_collection(name, metadata={META_KEY: meta.to_dict()})

    def qdrant_upsert(self, name: str, points: Sequence[PointData]) -> None:
        structs = [models.PointStruct(id=p.id, vector=p.vectors(_sparse), payload=p.payload) for p in points]
        self.client.upsert(name, points=structs, wait=True)

    def qdrant_update_sparse(self, name: str, vectors: Sequence[tuple[str, SparseWeights]]) -> None:
        ops = [models.PointVectors(id=pid, vector={SPARSE_VECTOR_NAME: _sparse(w)}) for pid, w in vectors]
        self.client.update_vectors(name, points=ops, wait=True)

    def qdrant_retrieve(self, name: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        records = self.client.retrieve(name, ids=list(ids), with_payload=True, with_vectors=False)
        return {str(r.id): r.payload or {} for r in records}

    def qdrant_dense(self, name: str, ids: Sequence[str]) -> dict[str, list[float]]:
        records = self.client.retrieve(
            name, ids=list(ids), with_payload=False, with_vectors=[DENSE_VECTOR_NAME]
        )
        return {
            str(r.id): list(r.vector[DENSE_VECTOR_NAME])
            for r in records
            if isinstance(r.vector, dict) and DENSE_VECTOR_NAME in r.vector
        }

    def qdrant_scroll(self, name: str, conditions: list[f.Condition]) -> Iterator[tuple[str, dict[str, Any]]]:
        yield from scroll_pages(
            lambda offset: self.client.scroll(
                name,
                scroll_filter=qdrant_filter(conditions),
                limit=self.settings.store.upsert_batch,
                offset=offset,
                with_payload=True,
                with_vectors=False,
            )
        )

    def qdrant_delete(self, name: str, ids: Sequence[str]) -> None:
        self.client.delete(name, points_selector=models.PointIdsList(points=list(ids)), wait=True)

    def qdrant_count(self, name: str, conditions: list[f.Condition]) -> int:
        return self.client.count(name, count_filter=qdrant_filter(conditions), exact=True).count

    def qdrant_query(self, name: str, query: QdrantEngineQuery) -> list[ScoredPayload]:
        flt = qdrant_filter(query.conditions)
        dense_params = search_params(self.settings.store)
        queries = query.vectors(_sparse)
        try:
            if len(queries) == 1:
                vector, using = queries[0]
                response = self.client.query_points(
                    name,
                    query=vector,
                    using=using,
                    query_filter=flt,
                    search_params=dense_params if using == DENSE_VECTOR_NAME else None,
                    limit=query.k,
                    with_payload=True,
                )
            else:
                # explicit k: qdrant-client's FusionQuery(fusion=Fusion.RRF) would use k=2
                fused: Any = (
                    models.RrfQuery(rrf=models.Rrf(k=query.rrf_k))
                    if query.fusion is FusionMethod.RRF
                    else models.FusionQuery(fusion=models.Fusion.DBSF)
                )
                response = self.client.query_points(
                    name,
                    prefetch=[
                        models.Prefetch(
                            query=q,
                            using=u,
                            filter=flt,
                            params=dense_params if u == DENSE_VECTOR_NAME else None,
                            limit=query.prefetch,
                        )
                        for q, u in queries
                    ],
                    query=fused,
                    query_filter=flt,
                    limit=query.k,
                    with_payload=True,
                )
        except UnexpectedResponse as exc:
            raise StoreError(f"Qdrant search in {name!r} failed: {exc}") from exc
        return [ScoredPayload(p.score, p.payload or {}) for p in response.points]

    def qdrant_close(self) -> None:
        self.client.close()
