"""Keeping a collection's BM25 exact as it changes: statistics that match the stored points, and stored
BM25 vectors re-weighted when the live ``avgdl`` drifts beyond ``search.bm25_avgdl_tolerance`` (or ``k1``,
``b``, the title rule or the tokenizer's format change), so scores stay those of a fresh index of the same corpus."""

from __future__ import annotations

import logging

from deepcite.config import Settings
from deepcite.retrieval.bm25 import Bm25Stats, SparseWeights, bm25_text, document_terms, document_vector
from deepcite.retrieval.points import LENGTH_KEY
from deepcite.retrieval.qdrant_engine_hooks import CollectionMeta, QdrantEngineHooks

log = logging.getLogger(__name__)


def bm25_params(settings: Settings) -> tuple[float, float, bool]:
    """``(k1, b, include_title)`` from the search settings."""
    s = settings.search
    return s.bm25_k1, s.bm25_b, s.include_title


def checked_meta(qdrant: QdrantEngineHooks, name: str) -> CollectionMeta:
    """The collection's meta, its BM25 statistics rebuilt from the stored lengths if they disagree with
    the points (a write interrupted between the points and the meta)."""
    meta = qdrant.read_meta(name)
    live = qdrant.qdrant_count(name, [])
    if live != meta.bm25.n_docs:
        log.warning(
            "collection %r: BM25 statistics are stale (%d points, %d counted); rebuilding",
            name,
            live,
            meta.bm25.n_docs,
        )
        stats = Bm25Stats(include_title=meta.bm25.include_title)
        stats.add(int(p.get(LENGTH_KEY, 0)) for _, p in qdrant.qdrant_scroll(name, []))
        meta.bm25 = stats  # weight_avgdl 0: every stored vector is re-weighted on this write
    return meta


def reweight_if_stale(qdrant: QdrantEngineHooks, name: str, meta: CollectionMeta, settings: Settings) -> None:
    """Re-weight every stored BM25 vector when the statistics say the weights are stale; ``meta`` then
    records the weights' ``avgdl``, ``k1``, ``b`` and title rule."""
    k1, b, include_title = bm25_params(settings)
    stats = meta.bm25
    if not stats.needs_reweight(k1, b, include_title, settings.search.bm25_avgdl_tolerance):
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
    size = settings.store.upsert_batch
    for pid, payload in qdrant.qdrant_scroll(name, []):
        tf = document_terms(
            bm25_text(payload.get("title") or "", payload.get("text") or "", include_title=include_title)
        )
        batch.append((pid, document_vector(tf, avgdl, k1, b)))
        if len(batch) >= size:
            qdrant.qdrant_update_sparse(name, batch)
            batch = []
    if batch:
        qdrant.qdrant_update_sparse(name, batch)
    stats.weighted(avgdl, k1, b, include_title)
