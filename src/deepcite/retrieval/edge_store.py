"""The default search engine: Qdrant's engine in-process (``qdrant-edge-py``), one shard per collection.

Usage::

    from deepcite.config import Settings
    from deepcite.retrieval.edge_store import EdgeStore

    store = EdgeStore(Path("/tmp/index"), Settings())
    store.create_collection("papers", dense_dim=384)        # dense_dim=None: BM25-only
    store.upsert("papers", chunks, vectors)
    hits = store.search("papers", text="statin myopathy", vector=None, mode=SearchMode.BM25, k=10)

On disk, collection ``name`` is the folder ``root/name`` holding ``shard/`` (the Edge shard: a named dense
vector ``dense`` with cosine distance, a sparse vector ``bm25`` with the IDF modifier, the payload indexes of
``store.payload_indexes``, and the quantisation, HNSW and on-disk settings of ``StoreSettings``, applied by
:meth:`EdgeStore.optimize`) and ``deepcite.json`` (the
dense dimension and BM25 statistics, replaced atomically via a temp file and ``os.replace``). A collection
is built in a temporary folder beside its place and renamed there whole, so a creation interrupted
half-way is invisible, and two processes creating it at once make one collection.

Qdrant's engine locks a shard for the process that opened it, but only after it has read (and repaired) the
shard's segments, which breaks the holder's writes; so a store takes ``shard.lock`` before it opens a shard
and keeps it until it closes the shard. A process that finds it held gets
:class:`~deepcite.errors.CollectionBusyError` naming the holder, without having read a file of the shard
(see :mod:`~deepcite.retrieval.shared_dir`);
files Qdrant's engine cannot read give :class:`~deepcite.errors.CollectionDamagedError`. Within a process
every shard has its own lock.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from qdrant_edge import (
    BinaryQuantizationConfig,
    CountRequest,
    Distance,
    EdgeConfig,
    EdgeOptimizersConfig,
    EdgeShard,
    EdgeSparseVectorParams,
    EdgeVectorParams,
    FieldCondition,
    Filter,
    Fusion,
    HnswIndexConfig,
    IsEmptyCondition,
    MatchAny,
    MatchValue,
    Memory,
    Modifier,
    PayloadSchemaType,
    Point,
    PointVectors,
    Prefetch,
    QuantizationSearchParams,
    Query,
    QueryRequest,
    RangeFloat,
    ScalarQuantizationConfig,
    ScalarType,
    ScrollRequest,
    SearchParams,
    SparseVector,
    UpdateOperation,
)

from deepcite.config import Settings, StoreSettings
from deepcite.errors import CollectionDamagedError, StoreError
from deepcite.models import FusionMethod
from deepcite.retrieval import filters as f
from deepcite.retrieval.bm25 import SPARSE_VECTOR_NAME, SparseWeights
from deepcite.retrieval.integrity import require_space
from deepcite.retrieval.points import DENSE_VECTOR_NAME, payload_key, validate_collection_name
from deepcite.retrieval.qdrant_engine_hooks import (
    CollectionMeta,
    PointData,
    QdrantEngineQuery,
    ScoredPayload,
    scroll_pages,
)
from deepcite.retrieval.qdrant_engine_store import QdrantEngineStore
from deepcite.retrieval.shared_dir import (
    HOLDER_FILE,
    LOCK_FILE,
    busy_error,
    claim,
    create_atomically,
    lock_shard,
    qdrant_failure,
    release,
    remove_folder,
    unlock_shard,
    write_json_atomically,
)
from deepcite.retrieval.vector_checks import damaged_vectors

META_FILE = "deepcite.json"
SHARD_DIR = "shard"
# what a new shard's files take (Qdrant's engine preallocates its WAL, trackers and pages): about 40 MB
_NEW_SHARD_BYTES = 40 * 1024 * 1024


def _point_bytes(point: PointData) -> int:
    """A generous estimate of what a point takes on disk: its vectors and payload, twice (WAL and segment)."""
    dense = len(point.dense or ()) * 4
    sparse = len(point.sparse.indices) * 8 if point.sparse is not None else 0
    return 2 * (dense + sparse + len(json.dumps(point.payload, default=str)))


def edge_filter(conditions: list[f.Condition]) -> Filter | None:
    """The Edge filter for backend-neutral conditions (``None`` for no condition)."""
    return Filter(must=[_edge_condition(c) for c in conditions]) if conditions else None


def _edge_condition(c: f.Condition) -> Any:
    if isinstance(c, f.Match):
        return FieldCondition(c.key, match=MatchValue(c.value))
    if isinstance(c, f.MatchAny):
        return FieldCondition(c.key, match=MatchAny(list(c.values)))
    if isinstance(c, f.Range):
        return FieldCondition(c.key, range=RangeFloat(gte=c.gte, lte=c.lte))
    if isinstance(c, f.IsEmpty):
        return IsEmptyCondition(c.key)
    return Filter(should=[_edge_condition(x) for x in c.conditions])


def _sparse(weights: SparseWeights) -> SparseVector:
    return SparseVector(weights.indices, weights.values)


_INDEX_TYPES = {
    "keyword": PayloadSchemaType.Keyword,
    "integer": PayloadSchemaType.Integer,
    "float": PayloadSchemaType.Float,
    "bool": PayloadSchemaType.Bool,
}


def edge_config(store: StoreSettings, dense_dim: int | None) -> EdgeConfig:
    """The shard configuration for a new collection: vectors, quantisation, HNSW graph, on-disk placement."""
    quantized_memory = Memory.Pinned if store.quantization_always_ram else None
    quantization: Any = {
        "none": None,
        "int8": ScalarQuantizationConfig(
            ScalarType.Int8, quantile=store.quantization_quantile, memory=quantized_memory
        ),
        "binary": BinaryQuantizationConfig(memory=quantized_memory),
    }[store.quantization]
    vectors = (
        {
            DENSE_VECTOR_NAME: EdgeVectorParams(
                size=dense_dim,
                distance=Distance.Cosine,
                memory=Memory.Cold if store.vectors_on_disk else None,
            )
        }
        if dense_dim
        else None
    )
    return EdgeConfig(
        vectors=vectors,
        sparse_vectors={SPARSE_VECTOR_NAME: EdgeSparseVectorParams(modifier=Modifier.Idf)},
        payload_memory=Memory.Cold if store.payload_on_disk else Memory.Cached,
        hnsw_config=HnswIndexConfig(
            m=store.hnsw_m,
            ef_construct=store.hnsw_ef_construct,
            full_scan_threshold=store.hnsw_full_scan_threshold_kb,
        ),
        quantization_config=quantization,
        optimizers=EdgeOptimizersConfig(indexing_threshold=store.indexing_threshold_kb),
    )


def edge_search_params(store: StoreSettings) -> SearchParams | None:
    """Per-search parameters of a dense search: HNSW beam width and the quantised search's rescoring
    (``None`` at the defaults: Qdrant's own search)."""
    if store.quantization == "none" and store.hnsw_ef is None:
        return None
    return SearchParams(
        hnsw_ef=store.hnsw_ef,
        quantization=QuantizationSearchParams(
            ignore=store.quantization_ignore,
            rescore=store.quantization_rescore,
            oversampling=store.quantization_oversampling,
        ),
    )


class _GuardedShard:
    """A shard whose calls raise deepcite's errors (busy, damaged, refused) instead of the binding's."""

    def __init__(self, shard: EdgeShard, fail: Callable[[Exception], Exception | None]) -> None:
        self._shard = shard
        self._fail = fail

    def __getattr__(self, attr: str) -> Any:
        method = getattr(self._shard, attr)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except Exception as exc:
                named = self._fail(exc)
                if named is None or named is exc:
                    raise
                raise named from None

        return call


class EdgeStore(QdrantEngineStore):
    """:class:`~deepcite.retrieval.store.SearchStore` on Qdrant Edge shards under ``root``."""

    def __init__(self, root: Path | str, settings: Settings) -> None:
        super().__init__(settings)
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the index folder {self.root}: {exc}; check DEEPCITE_DATA_DIR"
            ) from exc
        self._shards: dict[str, EdgeShard] = {}
        self._held: dict[str, int | None] = {}  # shard locks taken: kept while a shard is reloaded
        # Edge's IDF counts a deleted or moved point until its segment is rebuilt; reloading the shard
        # rebuilds the sparse index from live points, so a write that removed points ends with a reload.
        self._stale_idf: set[str] = set()

    # -- files ----------------------------------------------------------------------------------------------
    def _meta_path(self, name: str) -> Path:
        return self.root / name / META_FILE

    def _failure(self, name: str, exc: Exception) -> Exception | None:
        return qdrant_failure(name, exc, self.root, self.settings.data_dir)

    def _open(self, name: str) -> EdgeShard:
        """Take the shard's lock (refused as busy, before any file of the shard is read, when another process
        or store holds it), load the shard and record this process as its holder."""
        if name not in self._held:
            try:
                self._held[name] = lock_shard(self.root / name / LOCK_FILE)
            except BlockingIOError:
                raise busy_error(name, self.root / name, self.settings.data_dir) from None
        try:
            shard = EdgeShard.load(str(self.root / name / SHARD_DIR))
        except Exception as exc:  # the binding raises plain exceptions
            self._unlock(name)
            raise (self._failure(name, exc) or exc) from None
        try:
            self._check_sample(name, _GuardedShard(shard, lambda exc: self._failure(name, exc)))
        except BaseException:  # damaged (or unreadable): closed and unlocked, as a shard that failed to load
            shard.close()
            self._unlock(name)
            raise
        claim(self.root / name / HOLDER_FILE)
        return shard

    def _check_sample(self, name: str, shard: _GuardedShard) -> None:
        """CollectionDamagedError when one of the first ``store.open_check_vectors`` dense vectors (by point
        id, which is a hash: a sample spread over the vector files) is not a finite unit vector."""
        size, dim = self.settings.store.open_check_vectors, self._dense_dim(name)
        if not size or not dim:
            return
        records, _ = shard.scroll(
            ScrollRequest(limit=size, with_payload=False, with_vector=[DENSE_VECTOR_NAME])
        )
        vectors = [r.vector[DENSE_VECTOR_NAME] for r in records if r.vector and DENSE_VECTOR_NAME in r.vector]
        wrong = (
            damaged_vectors(vectors, dim, self.settings.store.vector_norm_tolerance)
            + len(records)
            - len(vectors)
        )
        if wrong:
            raise CollectionDamagedError(
                name,
                f"dense vectors are damaged: {wrong} of {len(records)} read when it was opened are not {dim}-d unit "
                "vectors (zeroed, overwritten or not finite)",
            )

    def _unlock(self, name: str) -> None:
        if name in self._held:
            unlock_shard(self._held.pop(name))

    def _shard(self, name: str) -> _GuardedShard:
        with self._lock(name):
            shard = self._shards.get(name)
            if shard is None:
                shard = self._shards[name] = self._open(name)
            return _GuardedShard(shard, lambda exc: self._failure(name, exc))

    # -- Qdrant primitives ----------------------------------------------------------------------------------
    def qdrant_names(self) -> list[str]:
        # a folder being built or removed starts with "." (a collection name never does)
        return [p.parent.name for p in self.root.glob(f"*/{META_FILE}") if not p.parent.name.startswith(".")]

    def has_collection(self, name: str) -> bool:
        validate_collection_name(name, self.settings.store.max_collection_name_chars)
        return self._meta_path(name).is_file()

    def _room(self, needed_bytes: int) -> None:
        """NoSpaceError unless the index folder has ``needed_bytes`` free beyond ``store.min_free_mb``: Qdrant's
        engine grows its files by mmap, and a full disk under an mmap kills the process (SIGBUS), so a write
        that may not fit is refused first, with a sentence."""
        require_space(self.root, needed_bytes, self.settings.store.min_free_mb)

    def qdrant_create(self, name: str, dense_dim: int | None, meta: CollectionMeta) -> None:
        self._room(_NEW_SHARD_BYTES)
        folder = self.root / name
        if folder.exists() and not self._meta_path(name).exists():
            remove_folder(folder)  # left by an interrupted creation of an older version (no meta file)

        def build(tmp: Path) -> None:
            shard = EdgeShard.create(str(tmp / SHARD_DIR), edge_config(self.settings.store, dense_dim))
            for field, kind in self.settings.store.payload_indexes.items():
                shard.update(UpdateOperation.create_field_index(payload_key(field), _INDEX_TYPES[kind]))
            shard.close()
            write_json_atomically(tmp / META_FILE, meta.to_dict())

        create_atomically(self.root, name, build)  # another process's collection, if it won, is kept

    def qdrant_drop(self, name: str) -> None:
        shard = self._shards.pop(name, None)
        if shard is None:
            with contextlib.suppress(CollectionDamagedError):  # a damaged collection can be dropped
                self._open(name).close()  # never remove a collection another process holds
        else:
            shard.close()
        self._unlock(name)
        release(self.root / name / HOLDER_FILE)
        self._meta_path(name).unlink()  # invisible first, then removed
        remove_folder(self.root / name)

    def read_meta(self, name: str) -> CollectionMeta:
        path = self._meta_path(name)
        try:
            return CollectionMeta.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            raise CollectionDamagedError(name, f"{META_FILE} unreadable: {type(exc).__name__}") from None

    def write_meta(self, name: str, meta: CollectionMeta) -> None:
        if name in self._shards:
            self._shard(name).flush()  # points durable before the statistics that count them
        if name in self._stale_idf:
            self._stale_idf.discard(name)
            self._shard(name).close()  # reloaded on next use; this store keeps the shard's lock meanwhile
            self._shards.pop(name)
        write_json_atomically(self._meta_path(name), meta.to_dict())

    def qdrant_hold(self, name: str) -> None:
        self._shard(name)  # opening the shard takes its lock; another process's ingest is refused as busy

    def qdrant_upsert(self, name: str, points: Sequence[PointData]) -> None:
        self._room(sum(_point_bytes(p) for p in points))
        edge_points = [Point(p.id, p.vectors(_sparse), p.payload) for p in points]
        self._shard(name).update(UpdateOperation.upsert_points(edge_points))

    def qdrant_update_sparse(self, name: str, vectors: Sequence[tuple[str, SparseWeights]]) -> None:
        ops = [PointVectors(pid, {SPARSE_VECTOR_NAME: _sparse(w)}) for pid, w in vectors]
        self._shard(name).update(UpdateOperation.update_vectors(ops))
        self._stale_idf.add(name)

    def qdrant_retrieve(self, name: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        records = self._shard(name).retrieve(list(ids), with_payload=True, with_vector=False)
        return {str(r.id): r.payload or {} for r in records}

    def qdrant_dense(self, name: str, ids: Sequence[str]) -> dict[str, list[float]]:
        records = self._shard(name).retrieve(list(ids), with_payload=False, with_vector=[DENSE_VECTOR_NAME])
        return {
            str(r.id): r.vector[DENSE_VECTOR_NAME]
            for r in records
            if r.vector and DENSE_VECTOR_NAME in r.vector
        }

    def qdrant_scroll(self, name: str, conditions: list[f.Condition]) -> Iterator[tuple[str, dict[str, Any]]]:
        def page(offset: Any) -> tuple[Sequence[Any], Any]:
            with self._lock(name):  # the shard of now: a write between two pages may have reloaded it
                return self._shard(name).scroll(
                    ScrollRequest(
                        offset=offset,
                        limit=self.settings.store.upsert_batch,
                        filter=edge_filter(conditions),
                        with_payload=True,
                        with_vector=False,
                    )
                )

        yield from scroll_pages(page)

    def qdrant_delete(self, name: str, ids: Sequence[str]) -> None:
        self._shard(name).update(UpdateOperation.delete_points(list(ids)))
        self._stale_idf.add(name)

    def qdrant_count(self, name: str, conditions: list[f.Condition]) -> int:
        return self._shard(name).count(CountRequest(exact=True, filter=edge_filter(conditions)))

    def qdrant_query(self, name: str, query: QdrantEngineQuery) -> list[ScoredPayload]:
        flt = edge_filter(query.conditions)
        dense_params = edge_search_params(self.settings.store)
        queries = [
            (Query.Nearest(v, using=using), dense_params if using == DENSE_VECTOR_NAME else None)
            for v, using in query.vectors(_sparse)
        ]
        if len(queries) == 1:
            nearest, params = queries[0]
            request = QueryRequest(
                limit=query.k, query=nearest, filter=flt, params=params, with_payload=True, with_vector=False
            )
        else:
            fused = Fusion.Rrf(k=query.rrf_k) if query.fusion is FusionMethod.RRF else Fusion.Dbsf()
            request = QueryRequest(
                limit=query.k,
                prefetches=[
                    Prefetch(limit=query.prefetch, query=q, filter=flt, params=p) for q, p in queries
                ],
                query=fused,
                filter=flt,
                with_payload=True,
                with_vector=False,
            )
        return [ScoredPayload(p.score, p.payload or {}) for p in self._shard(name).query(request)]

    def optimize(self, name: str) -> None:
        """Merge segments and build the HNSW index (Edge optimises only when asked): call after an ingest."""
        with self._lock(self._require(name)):
            self._shard(name).optimize()

    def qdrant_close(self) -> None:
        for name, shard in list(self._shards.items()):
            with self._lock(name):
                shard.close()
                release(self.root / name / HOLDER_FILE)
        self._shards.clear()
        for name in list(self._held):
            self._unlock(name)
