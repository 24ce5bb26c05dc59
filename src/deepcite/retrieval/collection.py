"""A named collection: open, search and describe it, delete documents, drop it; over one store and embedder.

Usage::

    import deepcite

    col = deepcite.open_collection("papers", deepcite.Settings.load())  # a script's one collection
    for hit in col.search("statins and muscle pain", mode="hybrid", k=5):
        print(hit.rank, hit.score, hit.chunk.title)

Writing into a collection is the ingest pipeline's job (:class:`deepcite.ingest.pipeline.IngestPipeline`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from deepcite.config import Settings
from deepcite.errors import CollectionNotFoundError, InputError
from deepcite.models import Chunk, Filters, FusionMethod, GraphLink, SearchHit, SearchMode
from deepcite.retrieval.embedders import Embedder, build_embedder
from deepcite.retrieval.fusion import distribution_based_score_fusion, reciprocal_rank_fusion
from deepcite.retrieval.graph import EntityGraph, GraphWalk, GraphWalker
from deepcite.retrieval.graph.aliases import AliasTable, alias_entries
from deepcite.retrieval.graph.anchors import AnchorIndex, anchor_texts
from deepcite.retrieval.graph.triples import TripleCache
from deepcite.retrieval.originals import OriginalsStore
from deepcite.retrieval.store import SearchStore, open_store


def passage_text(chunk: Chunk) -> str:
    """The text a chunk is embedded with: its title, then its text."""
    return f"{chunk.title}. {chunk.text}" if chunk.title else chunk.text


class Collection:
    """One collection of chunks in a :class:`SearchStore`, embedded with one :class:`Embedder`.

    ``embedder`` is the embedder, or a function that returns it, called when a vector is first needed: an
    operation that never embeds (counts, stats, removing a document, reading one back) never loads a model.
    The function is called once, even when two threads ask at the same time (an ingest loads the model in
    the background while it reads files).
    """

    def __init__(
        self, name: str, store: SearchStore, settings: Settings, embedder: Embedder | Callable[[], Embedder]
    ) -> None:
        self.name = name
        self.store = store
        self.settings = settings
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._graph_walker: GraphWalker | None = None
        self._anchors: tuple[int, AnchorIndex | None] | None = None  # the graph version it was built at
        self._anchors_lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        """The collection's embedder (built on first use when a function was given)."""
        if not hasattr(self._embedder, "encode"):
            with self._embedder_lock:
                if not hasattr(self._embedder, "encode"):
                    self._embedder = self._embedder()  # type: ignore[operator]
        return self._embedder  # type: ignore[return-value]

    @property
    def originals(self) -> OriginalsStore:
        """The original files of this collection's documents (served at their pages; apply ACL first)."""
        return OriginalsStore.for_collection(self.settings, self.name)

    # -- search --------------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        mode: SearchMode | str | None = None,
        k: int | None = None,
        filters: Filters | None = None,
        fusion: FusionMethod | str | None = None,
        anchors: bool = True,
        vector: Sequence[float] | None = None,
    ) -> list[SearchHit]:
        """Top-``k`` chunks for ``query`` by BM25, dense vectors, or both fused inside Qdrant's engine; with
        ``anchors``, BM25 and hybrid search also read the pages' anchor text (:meth:`anchors`). ``vector`` is the
        query's dense vector when the caller already has it."""
        if not query or not query.strip():
            raise InputError("the query is empty; give some words to search for")
        search = self.settings.search
        mode = SearchMode.from_str(mode or search.default_mode) if not isinstance(mode, SearchMode) else mode
        if not isinstance(fusion, FusionMethod):
            fusion = FusionMethod.from_str(fusion or search.fusion)
        k = search.default_k if k is None else k
        if k < 1:
            raise InputError(f"k must be at least 1, not {k}")
        if mode is SearchMode.GRAPH:
            return self.graph_hits(self.graph_walk(query, filters=filters), k, filters)
        if mode is SearchMode.HYBRID and self.settings.graph.enabled and self.settings.graph.in_hybrid:
            return self._hybrid_with_graph(query, k, filters, fusion)
        if anchors and mode in (SearchMode.BM25, SearchMode.HYBRID):
            index = self.anchors()
            groups = filters.acl_groups if filters is not None else None
            depth = max(k, search.prefetch_limit)
            named = dict(index.scores(query, depth, groups)) if index is not None else {}
            if named:  # a page's anchor text matches the query: else the store's own search is the same
                return self._search_with_anchors(index, named, query, mode, k, depth, filters, fusion, vector)
        if mode is SearchMode.BM25:
            vector = None
        elif vector is None:
            vector = self.embed_query(query)
        return self.store.search(
            self.name, text=query, vector=vector, mode=mode, k=k, filters=filters, fusion=fusion
        )

    # -- anchor text -----------------------------------------------------------------------------------
    def anchors(self) -> AnchorIndex | None:
        """The collection's anchor-text index (:mod:`deepcite.retrieval.graph.anchors`), built again when the
        graph changed; ``None`` when it is off (``graph.anchor_weight`` 0), without a graph, or when no page
        of the collection is named by another document."""
        cfg = self.settings.graph
        if not (cfg.enabled and cfg.aliases and cfg.anchor_weight > 0):
            return None
        graph = self.graph
        if not graph.exists():
            return None
        version = graph.version()
        with self._anchors_lock:
            if self._anchors is None or self._anchors[0] != version:
                rows = graph.rows()
                table = AliasTable(
                    alias_entries(rows),
                    prefix_min_words=cfg.alias_prefix_min_words,
                    max_pages=cfg.alias_max_pages,
                )
                texts = anchor_texts(
                    rows,
                    lambda docs: self.store.scroll(self.name, Filters(doc_ids=docs)),
                    table,
                    max_page_chunks=cfg.anchor_max_page_chunks,
                    max_sentences=cfg.anchor_max_sentences,
                    max_title_words=cfg.anchor_title_max_words,
                )
                search = self.settings.search
                index = AnchorIndex(texts, search.bm25_k1, search.bm25_b) if texts else None
                self._anchors = (version, index)
            return self._anchors[1]

    def _search_with_anchors(
        self,
        anchors: AnchorIndex,
        named: dict[str, float],
        query: str,
        mode: SearchMode,
        k: int,
        depth: int,
        filters: Filters | None,
        fusion: FusionMethod,
        vector: Sequence[float] | None,
    ) -> list[SearchHit]:
        """BM25 (or hybrid) search in which a page's score adds ``graph.anchor_weight`` x its anchor text's
        BM25 score (``named``: chunk id -> that score, for the best ``depth`` pages) to its own; hybrid fuses
        that list with the dense one (``fusion``, as the store would, over ``depth`` hits of each)."""
        own = self.store.search(
            self.name, text=query, vector=None, mode=SearchMode.BM25, k=depth, filters=filters
        )
        scores = {h.chunk.chunk_id: h.score for h in own}
        chunks = {h.chunk.chunk_id: h.chunk for h in own}
        unseen = [c for c in named if c not in chunks]
        within = _narrowed(filters, sorted({anchors.doc_ids[c] for c in unseen})) if unseen else None
        if within is not None:  # the pages the filters allow, with their own BM25 scores
            chunks |= {c.chunk_id: c for c in self.store.scroll(self.name, within) if c.chunk_id in named}
            page_chunks = self.settings.graph.anchor_max_page_chunks
            found = self.store.search(
                self.name,
                text=query,
                vector=None,
                mode=SearchMode.BM25,
                k=page_chunks * len(within.doc_ids),
                filters=within,
            )
            scores |= {h.chunk.chunk_id: h.score for h in found}
        weight = self.settings.graph.anchor_weight
        combined = sorted(
            ((c, scores.get(c, 0.0) + weight * named.get(c, 0.0)) for c in chunks),
            key=lambda item: (-item[1], item[0]),
        )[:depth]
        if mode is SearchMode.HYBRID:
            dense = self.store.search(
                self.name,
                text=query,
                vector=self.embed_query(query) if vector is None else vector,
                mode=SearchMode.DENSE,
                k=depth,
                filters=filters,
            )
            chunks |= {h.chunk.chunk_id: h.chunk for h in dense}
            lists = [combined, [(h.chunk.chunk_id, h.score) for h in dense]]
            if fusion is FusionMethod.RRF:  # Qdrant's RRF counts ranks from 0: the formula with k - 1
                combined = reciprocal_rank_fusion(
                    [[c for c, _ in scored] for scored in lists], self.rrf_k - 1
                )
            else:
                combined = distribution_based_score_fusion(lists)
            combined.sort(key=lambda item: (-item[1], item[0]))
        groups = filters.acl_groups if filters is not None else None
        return [
            SearchHit(
                chunk=chunks[c],
                score=score,
                rank=rank,
                mode=mode,
                graph=self._anchor_link(anchors, named, c, query, groups),
            )
            for rank, (c, score) in enumerate(combined[:k], start=1)
        ]

    @staticmethod
    def _anchor_link(
        anchors: AnchorIndex, named: dict[str, float], chunk_id: str, query: str, groups: list[str] | None
    ) -> GraphLink | None:
        """How anchor text lifted a hit: the passage whose sentence about the page matched most (``None`` when
        no anchor text of the page matched)."""
        if chunk_id not in named:
            return None
        return GraphLink(entity=anchors.lender(chunk_id, query, groups), edge="anchor", score=named[chunk_id])

    # -- the entity graph ----------------------------------------------------------------------------
    @property
    def graph(self) -> EntityGraph:
        """The collection's entity graph (SQLite beside the index)."""
        return EntityGraph.for_collection(self.settings, self.name)

    @property
    def triple_cache(self) -> TripleCache:
        """The LLM triples' cache of this collection (beside its graph)."""
        return TripleCache(self.graph.path.with_suffix(".triples.sqlite"))

    def graph_walk(
        self,
        query: str,
        *,
        seed_chunk_ids: Sequence[str] | None = None,
        filters: Filters | None = None,
        first_hop: Sequence[SearchHit] | None = None,
    ) -> GraphWalk:
        """Personalized PageRank from the query's entities and seed passages: ``seed_chunk_ids`` (best
        first) when given, else ``first_hop`` hits, else the top ``graph.first_hop_k`` of a
        ``graph.first_hop_mode`` search. The walk covers every passage; filters apply to the hits it becomes.
        """
        cfg = self.settings.graph
        if not cfg.enabled:
            raise InputError("the entity graph is off (graph.enabled = false); turn it on and re-ingest")
        if self._graph_walker is None:
            if not self.graph.exists() and self.store.has_collection(self.name):
                # a collection ingested before graphs existed: its graph built from its chunks (offline
                # entities; an ingest's IngestPipeline.rebuild_graph adds LLM triples when they are on)
                self.graph.rebuild(
                    self.store.scroll(self.name),
                    batch=self.settings.embedder.ingest_batch_docs,
                    embed=self.embed,
                )
            self._graph_walker = GraphWalker(self.graph)
        self._graph_walker.settings = cfg
        if seed_chunk_ids is None:
            if first_hop is None:
                first_hop = self.search(query, mode=cfg.first_hop_mode, k=cfg.first_hop_k, filters=filters)
            seed_chunk_ids = [h.chunk.chunk_id for h in first_hop[: cfg.first_hop_k]]
        seeds = {c: 1.0 / rank for rank, c in enumerate(seed_chunk_ids, start=1)}
        return self._graph_walker.walk(query, seed_passages=seeds)

    def graph_hits(self, walk: GraphWalk, k: int, filters: Filters | None) -> list[SearchHit]:
        """The walk's passages as graph-mode hits, keeping only chunks the filters (and ACL) allow."""
        ranked = walk.passages
        allowed = _narrowed(filters, list(dict.fromkeys(p.doc_id for p in ranked)))
        if allowed is None:
            return []
        chunks = {c.chunk_id: c for c in self.store.scroll(self.name, allowed)}
        kept = [p for p in ranked if p.chunk_id in chunks][:k]
        return [
            SearchHit(chunk=chunks[p.chunk_id], score=p.score, rank=rank, mode=SearchMode.GRAPH, graph=p.link)
            for rank, p in enumerate(kept, start=1)
        ]

    def _hybrid_with_graph(
        self, query: str, k: int, filters: Filters | None, fusion: FusionMethod
    ) -> list[SearchHit]:
        """Hybrid hits fused (RRF, ``search.rrf_k``) with the graph's, weighted ``graph.hybrid_weight``; the
        hybrid list's head seeds the walk."""
        cfg = self.settings.graph
        depth = max(k, cfg.first_hop_k, self.settings.search.default_k)
        hybrid = self.store.search(
            self.name,
            text=query,
            vector=self.embed_query(query),
            mode=SearchMode.HYBRID,
            k=depth,
            filters=filters,
            fusion=fusion,
        )
        graph = self.graph_hits(self.graph_walk(query, filters=filters, first_hop=hybrid), depth, filters)
        return self.fuse_with_graph(hybrid, graph, k)

    def fuse_with_graph(
        self, hybrid: Sequence[SearchHit], graph: Sequence[SearchHit], k: int
    ) -> list[SearchHit]:
        """RRF (``search.rrf_k``) of a hybrid list and a graph list, the graph's weighted ``graph.hybrid_weight``."""
        by_id = {h.chunk.chunk_id: h for h in hybrid} | {h.chunk.chunk_id: h for h in graph}
        fused = reciprocal_rank_fusion(
            [[h.chunk.chunk_id for h in hybrid], [h.chunk.chunk_id for h in graph]],
            self.settings.search.rrf_k,
            weights=[1.0, self.settings.graph.hybrid_weight],
        )
        return [
            SearchHit(
                chunk=by_id[c].chunk, score=score, rank=rank, mode=SearchMode.HYBRID, graph=by_id[c].graph
            )
            for rank, (c, score) in enumerate(fused[:k], start=1)
        ]

    @property
    def rrf_k(self) -> int:
        """The RRF constant of every fusion over this collection's lists (``search.rrf_k``)."""
        return self.settings.search.rrf_k

    def embed_query(self, query: str) -> list[float]:
        """The query's dense vector."""
        return self.embedder.encode([query], kind="query")[0].tolist()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Dense vectors of passages (for MMR and coverage similarity)."""
        return self.embedder.encode(list(texts), kind="passage")

    def vectors(self, chunks: Sequence[Chunk]) -> np.ndarray:
        """Dense vectors of these chunks: read back from the store, embedding only chunks it does not hold."""
        stored = self.store.dense_vectors(self.name, [c.chunk_id for c in chunks])
        missing = [c for c in chunks if c.chunk_id not in stored]
        if missing:
            for chunk, vector in zip(missing, self.embed([passage_text(c) for c in missing]), strict=True):
                stored[chunk.chunk_id] = vector.tolist()
        if not chunks:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.asarray([stored[c.chunk_id] for c in chunks], dtype=np.float32)

    def count(self, filters: Filters | None = None) -> int:
        return self.store.count(self.name, filters)

    def delete_document(self, doc_id: str) -> int:
        """Delete a document's chunks and its stored original; returns the number of chunks deleted. The
        original goes last: a delete cut short leaves a document whole, or unsearchable with its original kept
        (which the same delete again removes), never searchable passages whose original is gone."""
        self.graph.delete_documents([doc_id])
        deleted = self.store.delete_document(self.name, doc_id)
        self.originals.remove(doc_id)
        return deleted

    def drop(self) -> None:
        self.store.drop_collection(self.name)
        self.originals.clear()
        self.graph.clear()
        self.triple_cache.clear()

    def close(self) -> None:
        """Close the store (for a collection opened with its own store by :func:`open_collection`): its
        shards are unlocked for other processes."""
        self.store.close()


def open_collection(
    name: str,
    settings: Settings,
    *,
    create: bool = True,
    store: SearchStore | None = None,
    embedder: Embedder | None = None,
) -> Collection:
    """Open collection ``name`` (created on first ingest when ``create``; else it must exist) on ``store`` with
    ``embedder``, or on a store and an embedder of its own (loaded when first needed): a script's one
    collection. A process that serves requests holds an :class:`~deepcite.engine.Engine` instead, which
    shares one of each."""
    store = store or open_store(settings)
    if not create and not store.has_collection(name):
        raise CollectionNotFoundError(name, store.list_collections())
    return Collection(name, store, settings, embedder or (lambda: build_embedder(settings)))


def _narrowed(filters: Filters | None, doc_ids: list[str]) -> Filters | None:
    """``filters`` narrowed to ``doc_ids`` (those the filters' own document list allows), or ``None`` when no
    document is left."""
    if filters is not None and filters.doc_ids is not None:
        allowed = set(filters.doc_ids)
        doc_ids = [d for d in doc_ids if d in allowed]
    return (filters or Filters()).model_copy(update={"doc_ids": doc_ids}) if doc_ids else None
