"""Ingest throughput, search latency and peak memory of deepcite vs a plain ``bm25s`` baseline, same data, one run.

    .venv/bin/python benchmarks/retrieval_bench.py --beir ../shared/datasets/beir_scifact --scale 10

Stages (each timed apart):
1. the embedder's own encoding rate on SciFact passages (passages/s) — the ingest bottleneck;
2. deepcite ingest of SciFact into a fresh Edge collection (chunks/s; embedding and indexing apart);
3. search latency p50/p95 per mode over the test queries at SciFact size, excluding query embedding
   (query embedding timed apart);
4. the same at ``--scale`` × SciFact (≥ 50,000 chunks): SciFact's chunks replicated with perturbed ids and
   the already-computed vectors, so only indexing is re-done;
5. bm25s (the baseline): index build and query latency on the same texts with the same tokenizer.
Every deepcite figure is also given as a ratio to the bm25s figure of the same run. Results go to
``benchmarks/results/retrieval_bench/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import bm25s
import numpy as np
from results_path import result_path

from deepcite.config import Settings
from deepcite.evaluation.beir import load_beir
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.loaders import iter_documents
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Chunk, Document, FusionMethod, SearchMode
from deepcite.retrieval.collection import open_collection, passage_text
from deepcite.retrieval.embedders import build_embedder
from deepcite.text import tokenize

DEEP_PREFETCH = 1000


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def latency_ms(fn, items) -> dict[str, float]:
    times = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        times.append(1000 * (time.perf_counter() - t0))
    return {"p50_ms": round(statistics.median(times), 3), "p95_ms": round(percentile(times, 95), 3)}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beir", type=Path, default=Path("../shared/datasets/beir_scifact"))
    parser.add_argument("--scale", type=int, default=10, help="replication factor for the large run")
    parser.add_argument("--encode-sample", type=int, default=512, help="passages for the raw encoding rate")
    parser.add_argument("--docs", type=int, default=0, help="use only the first N documents (smoke runs)")
    parser.add_argument(
        "--out", type=Path, help="default: benchmarks/results/retrieval_bench/<date>_<commit>.json"
    )
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="deepcite-bench-"))
    settings = Settings(data_dir=workdir)
    data = load_beir(args.beir, "test")
    docs = [d for d in iter_documents(args.beir, "beir") if isinstance(d, Document)]
    if args.docs:
        docs = docs[: args.docs]
    chunks: list[Chunk] = [c for d in docs for c in chunk_document(d, settings.chunker)]
    texts = [passage_text(c) for c in chunks]
    queries = list(data.queries.values())
    out: dict[str, object] = {
        "corpus": str(args.beir),
        "documents": len(docs),
        "chunks": len(chunks),
        "queries": len(queries),
    }

    # 1. the embedder's own rate
    embedder = build_embedder(settings)
    embedder.encode(texts[:8])  # warm-up (model load)
    t0 = time.perf_counter()
    embedder.encode(texts[: args.encode_sample])
    encode_rate = args.encode_sample / (time.perf_counter() - t0)
    out["embedder_passages_per_s"] = round(encode_rate, 2)

    # 2. deepcite ingest (embedding + indexing) into a fresh collection; keep the vectors for step 4
    recorder = RecordingEmbedder(embedder)
    col = open_collection("bench", settings, embedder=recorder)
    report = IngestPipeline(col).ingest(docs)
    out["ingest"] = {
        "chunks_per_s": round(report.written / report.seconds, 2),
        "embed_chunks_per_s": round(report.written / report.embed_seconds, 2),
        "index_chunks_per_s": round(report.written / report.index_seconds, 2),
        "share_of_encoding_rate": round((report.written / report.seconds) / encode_rate, 3),
        "seconds": round(report.seconds, 2),
    }

    # 3. latency per mode at SciFact size
    t0 = time.perf_counter()
    qvecs = recorder.encode(queries, kind="query")
    out["query_embedding_ms_per_query"] = round(1000 * (time.perf_counter() - t0) / len(queries), 3)
    vectors = [v.tolist() for v in qvecs]

    def run_modes(store, name: str) -> dict[str, dict[str, float]]:
        rows = {}
        for label, mode, fusion in (
            ("bm25", SearchMode.BM25, None),
            ("dense", SearchMode.DENSE, None),
            ("hybrid-rrf", SearchMode.HYBRID, FusionMethod.RRF),
            ("hybrid-dbsf", SearchMode.HYBRID, FusionMethod.DBSF),
        ):
            rows[label] = latency_ms(
                lambda i, mode=mode, fusion=fusion: store.search(
                    name,
                    text=queries[i],
                    vector=vectors[i] if mode is not SearchMode.BM25 else None,
                    mode=mode,
                    k=10,
                    fusion=fusion,
                ),
                range(len(queries)),
            )
        # the deeper prefetch that scored best on SciFact's train queries (benchmarks/scifact_experiments.py)
        search_settings = store.settings.search
        default_depth, search_settings.prefetch_limit = search_settings.prefetch_limit, DEEP_PREFETCH
        try:
            rows[f"hybrid-dbsf-prefetch{DEEP_PREFETCH}"] = latency_ms(
                lambda i: store.search(
                    name,
                    text=queries[i],
                    vector=vectors[i],
                    mode=SearchMode.HYBRID,
                    k=10,
                    fusion=FusionMethod.DBSF,
                ),
                range(len(queries)),
            )
        finally:
            search_settings.prefetch_limit = default_depth
        return rows

    out["latency_small"] = run_modes(col.store, "bench")

    # 4. scale: replicate chunks with perturbed ids, reuse vectors
    big = "bench-large"
    store = col.store
    store.create_collection(big, dense_dim=embedder.dim)
    base_vecs = recorder.passages()
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for r in range(args.scale):
        replica = [
            c.model_copy(update={"chunk_id": f"{c.chunk_id}~{r}", "doc_id": f"{c.doc_id}~{r}"})
            for c in chunks
        ]
        # perturbed copies of the real vectors, so the dense index is not full of exact duplicates
        noisy = base_vecs + rng.normal(0.0, 0.01, base_vecs.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        for start in range(0, len(replica), 512):
            store.upsert(big, replica[start : start + 512], noisy[start : start + 512])
    store.optimize(big)  # as IngestPipeline.ingest does: build the HNSW index before serving
    index_seconds = time.perf_counter() - t0
    n_big = store.count(big)
    out["large"] = {"chunks": n_big, "index_chunks_per_s": round(n_big / index_seconds, 2)}
    out["latency_large"] = run_modes(store, big)

    # 5. bm25s baseline on the same texts, same tokenizer
    t0 = time.perf_counter()
    corpus_tokens = [tokenize(t) for t in texts]
    retriever = bm25s.BM25(k1=settings.search.bm25_k1, b=settings.search.bm25_b)
    retriever.index(corpus_tokens, show_progress=False)
    bm25s_index_s = time.perf_counter() - t0
    big_tokens = corpus_tokens * args.scale
    t0 = time.perf_counter()
    big_retriever = bm25s.BM25(k1=settings.search.bm25_k1, b=settings.search.bm25_b)
    big_retriever.index(big_tokens, show_progress=False)
    bm25s_big_index_s = time.perf_counter() - t0
    q_tokens = [tokenize(q) for q in queries]

    def bm25s_query(r, i):
        return r.retrieve([q_tokens[i]], k=10, show_progress=False)

    out["bm25s"] = {
        "index_chunks_per_s": round(len(texts) / bm25s_index_s, 2),
        "latency_small": latency_ms(lambda i: bm25s_query(retriever, i), range(len(queries))),
        "large_index_chunks_per_s": round(len(big_tokens) / bm25s_big_index_s, 2),
        "latency_large": latency_ms(lambda i: bm25s_query(big_retriever, i), range(len(queries))),
    }
    base_small = out["bm25s"]["latency_small"]["p50_ms"]
    base_large = out["bm25s"]["latency_large"]["p50_ms"]
    out["ratio_p50_vs_bm25s"] = {
        "small": {m: round(v["p50_ms"] / base_small, 2) for m, v in out["latency_small"].items()},
        "large": {m: round(v["p50_ms"] / base_large, 2) for m, v in out["latency_large"].items()},
    }
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    store.close()
    shutil.rmtree(workdir, ignore_errors=True)
    args.out = args.out or result_path("retrieval_bench")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


class RecordingEmbedder:
    """Passes calls to the real embedder and keeps the passage vectors it returned, in order."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self._passages: list[np.ndarray] = []

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def name(self) -> str:
        return self.inner.name

    def encode(self, texts, *, kind="passage"):
        vectors = self.inner.encode(texts, kind=kind)
        if kind == "passage":
            self._passages.append(vectors)
        return vectors

    def passages(self) -> np.ndarray:
        return np.concatenate(self._passages)


if __name__ == "__main__":
    main()
