"""Serving at scale on one machine: build 100k- and 1M-chunk Edge collections and measure them.

    nice -n 10 .venv/bin/python benchmarks/scale.py base  --work /work/bench/scale --from DIR/edge/scifact ...
    nice -n 10 .venv/bin/python benchmarks/scale.py build --work /work/bench/scale --chunks 100000
    nice -n 10 .venv/bin/python benchmarks/scale.py query --work /work/bench/scale --chunks 100000
    .venv/bin/python benchmarks/scale.py project --work /work/bench/scale   # → benchmarks/results/scale/<date>_<commit>_project.json

Data (``base``, run once): the chunks and **stored MiniLM embeddings** of existing deepcite collections
(``--from``, each ``<data_dir>/edge/<collection>``, e.g. the SciFact collection ``deepcite eval retrieval``
leaves behind and a HotpotQA one): real passages embedded once by a real ingest, plus the SciFact test
queries embedded with the configured embedder. A collection of N chunks cycles through those passages in a
fixed shuffled order (copy r of a chunk gets ids ``<id>~r``, so BM25 statistics stay those of real text)
and gives each copy its passage's stored vector plus Gaussian noise of norm ``--noise``, re-normalised:
real embeddings repeated with small noise, so a build embeds nothing.

``build`` writes the collection through :class:`EdgeStore` (BM25 vectors, payloads, payload indexes, the
settings' quantisation and HNSW graph, built by ``optimize``) and records time per stage, peak RSS and
disk size. ``query`` opens it in a fresh process and records hybrid/dense/BM25 p50/p95 with int8
quantisation (rescored) and with the quantised copy ignored (original float vectors, same graph), dense
recall@10 of both against exact search (numpy over the regenerated vectors), filtered-search latency and
peak RSS. ``project`` gathers the results into ``benchmarks/results/scale/<date>_<commit>_project.json``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from results_path import result_path
from retrieval_bench import peak_rss_mb, percentile  # benchmarks/ is on the path when run as a script

from deepcite import text
from deepcite.config import Settings, StoreSettings
from deepcite.evaluation.beir import load_beir
from deepcite.models import Chunk, Filters, SearchHit, SearchMode
from deepcite.retrieval import bm25
from deepcite.retrieval.edge_store import SHARD_DIR, EdgeStore
from deepcite.retrieval.embedders import build_embedder

DATASETS = Path("/work/shared/datasets")
COLLECTION = "scale"
BLOCK = 10_000  # chunks per write, and the unit the noise is seeded by
QUERIES = 200


def rss_now_mb() -> dict[str, float]:
    """The process's resident memory now, split into its own (anonymous) pages and mapped file pages (the
    page cache the kernel can drop): peak RSS counts both."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {key: round(int(status[key].split()[0]) / 1024, 1) for key in ("RssAnon", "RssFile")}


def disk_mb(folder: Path) -> float:
    blocks = sum(p.stat().st_blocks for p in folder.rglob("*") if p.is_file())
    return round(blocks * 512 / 2**20, 1)


# -- data -------------------------------------------------------------------------------------------------
def stored_passages(folders: list[Path], settings: Settings) -> tuple[list[Chunk], np.ndarray]:
    """Chunks and stored dense vectors of existing deepcite collections, in a fixed shuffled order."""
    chunks: list[Chunk] = []
    vectors: list[list[float]] = []
    for folder in folders:
        with EdgeStore(folder.parent, settings) as store:
            found = list(store.scroll(folder.name))
            stored = store.dense_vectors(folder.name, [c.chunk_id for c in found])
        for chunk in found:
            if chunk.chunk_id in stored:
                chunks.append(chunk)
                vectors.append(stored[chunk.chunk_id])
    order = np.random.default_rng(0).permutation(len(chunks))
    return [chunks[i] for i in order], np.asarray(vectors, dtype=np.float32)[order]


class Corpus:
    """The chunks and vectors of an N-chunk collection, generated block by block from the cached base."""

    def __init__(self, work: Path) -> None:
        lines = (work / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
        self.chunks = [Chunk.model_validate_json(line) for line in lines]
        base = np.load(work / "base.npz")
        self.embedded, self.queries, self.query_vectors = (
            base["vectors"],
            list(base["queries"]),
            base["qvecs"],
        )
        self.noise = float(base["noise"])
        self.position = {c.chunk_id: i for i, c in enumerate(self.chunks)}

    def chunk(self, i: int) -> Chunk:
        passages = len(self.chunks)
        base, copy = self.chunks[i % passages], i // passages
        return base.model_copy(
            update={"chunk_id": f"{base.chunk_id}~{copy}", "doc_id": f"{base.doc_id}~{copy}"}
        )

    def index_of(self, chunk_id: str) -> int:
        base, copy = chunk_id.rsplit("~", 1)
        return int(copy) * len(self.chunks) + self.position[base]

    def vectors(self, block: int, n: int) -> np.ndarray:
        """Unit vectors of chunks ``block*BLOCK`` … (at most ``n`` chunks in all): base vector plus noise."""
        start, stop = block * BLOCK, min((block + 1) * BLOCK, n)
        idx = np.arange(start, stop) % len(self.chunks)
        rng = np.random.default_rng(1_000 + block)
        dim = self.embedded.shape[1]
        noise = rng.standard_normal((BLOCK, dim), dtype=np.float32)[: stop - start]
        v = self.embedded[idx] + noise * (self.noise / np.sqrt(dim))
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    def blocks(self, n: int) -> Iterator[tuple[list[Chunk], np.ndarray]]:
        for block in range((n + BLOCK - 1) // BLOCK):
            start, stop = block * BLOCK, min((block + 1) * BLOCK, n)
            yield [self.chunk(i) for i in range(start, stop)], self.vectors(block, n)

    def exact_top(self, n: int, k: int) -> np.ndarray:
        """Exact top-``k`` chunk indexes of every query by cosine over all ``n`` vectors (ground truth)."""
        q = self.query_vectors
        best_scores = np.full((len(q), k), -np.inf, dtype=np.float32)
        best_ids = np.zeros((len(q), k), dtype=np.int64)
        for block in range((n + BLOCK - 1) // BLOCK):
            scores = q @ self.vectors(block, n).T
            ids = np.arange(block * BLOCK, block * BLOCK + scores.shape[1])
            all_scores = np.concatenate([best_scores, scores], axis=1)
            all_ids = np.concatenate([best_ids, np.broadcast_to(ids, scores.shape)], axis=1)
            top = np.argsort(-all_scores, axis=1)[:, :k]
            best_scores = np.take_along_axis(all_scores, top, axis=1)
            best_ids = np.take_along_axis(all_ids, top, axis=1)
        return best_ids


def run_name(args: argparse.Namespace) -> str:
    """``<chunks>``, with ``-disk`` for a collection whose original vectors are on disk."""
    return f"{args.chunks}-disk" if args.vectors_on_disk else str(args.chunks)


def index_dir(args: argparse.Namespace) -> Path:
    return args.work / f"index-{run_name(args)}"


def scale_settings(work: Path, **store: object) -> Settings:
    return Settings(data_dir=work / "data", store=StoreSettings(**store))


# -- stages -----------------------------------------------------------------------------------------------
def cmd_base(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings(data_dir=args.work / "data")
    chunks, vectors = stored_passages(args.sources, settings)
    queries = list(load_beir(args.datasets / "beir_scifact", "test").queries.values())[:QUERIES]
    qvecs = build_embedder(settings).encode(queries, kind="query")
    (args.work / "chunks.jsonl").write_text(
        "".join(c.model_dump_json() + "\n" for c in chunks), encoding="utf-8"
    )
    np.savez(
        args.work / "base.npz",
        vectors=vectors,
        queries=np.asarray(queries),
        qvecs=np.asarray(qvecs, dtype=np.float32),
        noise=args.noise,
    )
    return {
        "passages": len(chunks),
        "from": [str(f) for f in args.sources],
        "sources": sorted({c.source or "" for c in chunks}),
        "queries": len(queries),
        "noise_norm": args.noise,
    }


def cmd_build(args: argparse.Namespace) -> dict[str, object]:
    settings = scale_settings(args.work, quantization=args.quantization, vectors_on_disk=args.vectors_on_disk)
    if args.cache_tokens:  # copies repeat a passage's text: tokenize each distinct text once (see --help)
        bm25.tokenize = functools.lru_cache(maxsize=None)(text.tokenize)
    corpus = Corpus(args.work)
    folder = index_dir(args)
    if folder.exists():
        sys.exit(f"{folder} exists; remove it to build again")
    store = EdgeStore(folder, settings)
    store.create_collection(COLLECTION, dense_dim=int(corpus.embedded.shape[1]))
    t0, cpu0 = time.perf_counter(), time.process_time()
    done = 0
    for chunks, vectors in corpus.blocks(args.chunks):
        store.upsert(COLLECTION, chunks, vectors)
        done += len(chunks)
        if done % (10 * BLOCK) == 0:
            print(f"  {done:,} chunks written, {time.perf_counter() - t0:.0f} s", flush=True)
    write_s, write_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    t1, cpu1 = time.perf_counter(), time.process_time()
    store.optimize(COLLECTION)
    optimize_s, optimize_cpu = time.perf_counter() - t1, time.process_time() - cpu1
    rss_end = rss_now_mb()
    store.close()
    return {
        "chunks": args.chunks,
        "real_passages": len(corpus.chunks),
        "quantization": args.quantization,
        "tokens_cached": args.cache_tokens,
        "vectors_on_disk": args.vectors_on_disk,
        "write_s": round(write_s, 1),
        "write_chunks_per_s": round(args.chunks / write_s, 1),
        "write_cpu_s": round(write_cpu, 1),  # CPU seconds of all the process's threads: load-independent
        "optimize_s": round(optimize_s, 1),
        "optimize_cpu_s": round(optimize_cpu, 1),
        "load_average_end": os.getloadavg(),
        "build_s": round(write_s + optimize_s, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "rss_after_optimize_mb": rss_end,
        "disk_mb": disk_mb(folder),
        "shard_disk_mb": disk_mb(folder / COLLECTION / SHARD_DIR),
    }


def cmd_query(args: argparse.Namespace) -> dict[str, object]:
    corpus = Corpus(args.work)
    queries, qvecs = corpus.queries, [v.tolist() for v in corpus.query_vectors]
    n = len(queries)
    t0 = time.perf_counter()
    exact = corpus.exact_top(args.chunks, 10).tolist()
    out: dict[str, object] = {
        "chunks": args.chunks,
        "hnsw_ef": args.hnsw_ef,
        "queries": n,
        "exact_search_s": round(time.perf_counter() - t0, 1),
    }
    # search-time settings only, so one open store serves both; they alternate query by query (and which
    # goes first), so both variants see the same load from the rest of the machine and the same caches
    variants = {
        "int8": scale_settings(args.work, quantization=args.quantization, hnsw_ef=args.hnsw_ef),
        "float (int8 ignored)": scale_settings(
            args.work, quantization=args.quantization, quantization_ignore=True, hnsw_ef=args.hnsw_ef
        ),
    }
    cases: dict[str, tuple[SearchMode, Filters | None]] = {
        "hybrid": (SearchMode.HYBRID, None),
        "dense": (SearchMode.DENSE, None),
        "bm25": (SearchMode.BM25, None),
        "hybrid, source = beir_scifact": (SearchMode.HYBRID, Filters(sources=["beir_scifact"])),
        "hybrid, one document": (SearchMode.HYBRID, Filters(doc_ids=[corpus.chunk(args.chunks // 2).doc_id])),
    }
    times: dict[tuple[str, str], list[float]] = {(v, c): [] for v in variants for c in cases}
    with EdgeStore(index_dir(args), variants["int8"]) as store:

        def search(i: int, case: str) -> list[SearchHit]:
            mode, flt = cases[case]
            vector = None if mode is SearchMode.BM25 else qvecs[i]
            return store.search(COLLECTION, text=queries[i], vector=vector, mode=mode, k=10, filters=flt)

        t_open = time.perf_counter()
        search(0, "hybrid")  # opens the shard
        out["open_s"] = round(time.perf_counter() - t_open, 2)
        for i in range(n):  # warm-up: the pages every variant reads into the page cache
            for settings in variants.values():
                store.settings = settings
                search(i, "hybrid")
        order = list(variants.items())
        for _ in range(args.repeat):
            for i in range(n):
                # the second variant finds the query's pages hot: which one goes first alternates
                for label, settings in order if i % 2 else order[::-1]:
                    store.settings = settings
                    for case in cases:
                        t = time.perf_counter()
                        search(i, case)
                        times[label, case].append(1000 * (time.perf_counter() - t))
        tops: dict[str, dict[str, list[list[str]]]] = {}
        for label, settings in variants.items():
            store.settings = settings
            tops[label] = {
                case: [[h.chunk.chunk_id for h in search(i, case)] for i in range(n)]
                for case in ("dense", "hybrid")
            }
        matching = {case: store.count(COLLECTION, flt) for case, (_, flt) in cases.items() if flt is not None}

    def overlap(found: list[list[str]], truth: list[list[int]] | list[list[str]]) -> float:
        return round(
            float(np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth, strict=True)])), 4
        )

    for label in variants:
        out[label] = {
            case: {"p50_ms": round(statistics.median(t), 3), "p95_ms": round(percentile(t, 95), 3)}
            for (v, case), t in times.items()
            if v == label
        }
        dense_idx = [[corpus.index_of(c) for c in hits] for hits in tops[label]["dense"]]
        out[label]["dense_recall@10_vs_exact"] = overlap(dense_idx, exact)
    out["matching_chunks"] = matching
    out["hybrid_top10_overlap_int8_vs_float"] = overlap(
        tops["int8"]["hybrid"], tops["float (int8 ignored)"]["hybrid"]
    )
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    out["rss_at_end_mb"] = rss_now_mb()
    out["load_average_end"] = os.getloadavg()  # other work on the machine inflates every latency
    return out


def projection(
    runs: dict[str, dict], embed_rate: float, targets: list[int], nodes: list[int], workers: list[int]
) -> list[dict]:
    """10M/60M-chunk figures from the measured ones, each row with its inputs so the README can show the
    arithmetic. Rates are per CPU-second (load-independent): writing from the build without cached tokens,
    optimizing by a power law through the two builds; serving memory per extra chunk between the two query
    runs, latency by a power law through them; disk per chunk from the largest build."""

    def sized(prefix: str, need: str) -> list[tuple[int, dict]]:
        found = [
            (int(k.split("-")[1]), v)
            for k, v in runs.items()
            if k.startswith(prefix) and need in v and not k.endswith("-disk")
        ]
        return sorted(found, key=lambda item: item[0])

    builds = sized("build-", "optimize_cpu_s")
    (n_b0, b0), (n_b1, b1) = builds[0], builds[-1]
    (n_q0, q0), (n_q1, q1) = sized("query-", "int8")[0], sized("query-", "int8")[-1]
    uncached = next(b for _, b in builds if not b.get("tokens_cached"))
    write_rate = uncached["chunks"] / uncached["write_cpu_s"]  # chunks per CPU-second, tokenizing included
    opt_exp = np.log(b1["optimize_cpu_s"] / b0["optimize_cpu_s"]) / np.log(n_b1 / n_b0)
    lat_exp = np.log(q1["int8"]["hybrid"]["p50_ms"] / q0["int8"]["hybrid"]["p50_ms"]) / np.log(n_q1 / n_q0)
    rss_per_chunk = (q1["peak_rss_mb"] - q0["peak_rss_mb"]) / (n_q1 - n_q0)
    disk_per_chunk = b1["shard_disk_mb"] / n_b1
    rows: list[dict] = [
        {
            "embed_chunks_per_s_per_worker": embed_rate,
            "write_chunks_per_cpu_s": round(write_rate, 1),
            "optimize_cpu_s": {n_b0: b0["optimize_cpu_s"], n_b1: b1["optimize_cpu_s"]},
            "optimize_exponent": round(float(opt_exp), 3),
            "serving_rss_mb": {n_q0: q0["peak_rss_mb"], n_q1: q1["peak_rss_mb"]},
            "serving_rss_kb_per_extra_chunk": round(rss_per_chunk * 1024, 2),
            "disk_kb_per_chunk": round(disk_per_chunk * 1024, 2),
            "hybrid_p50_ms": {n_q0: q0["int8"]["hybrid"]["p50_ms"], n_q1: q1["int8"]["hybrid"]["p50_ms"]},
            "latency_exponent": round(float(lat_exp), 3),
        }
    ]
    for total in targets:
        for n in nodes:
            shard = total / n
            rows.append(
                {
                    "chunks": total,
                    "qdrant_nodes": n,
                    "chunks_per_node": shard,
                    "serving_ram_gb_per_node": round(
                        (q1["peak_rss_mb"] + rss_per_chunk * (shard - n_q1)) / 1024, 1
                    ),
                    "disk_gb_per_node_with_2_replicas": round(2 * disk_per_chunk * shard / 1024, 1),
                    "hybrid_p50_ms_per_shard_search": round(
                        q1["int8"]["hybrid"]["p50_ms"] * (shard / n_q1) ** lat_exp, 1
                    ),
                    "optimize_cpu_h_per_node": round(
                        b1["optimize_cpu_s"] * (shard / n_b1) ** opt_exp / 3600, 1
                    ),
                }
            )
        for m in workers:
            rows.append(
                {
                    "chunks": total,
                    "ray_workers": m,
                    "embed_h": round(total / (m * embed_rate) / 3600, 1),
                    "write_h_one_writer_core": round(total / write_rate / 3600, 1),
                }
            )
    return rows


def cmd_project(args: argparse.Namespace) -> dict[str, object]:
    found = [*args.work.glob("base.json"), *args.work.glob("build-*.json"), *args.work.glob("query-*.json")]
    runs = {p.stem: json.loads(p.read_text()) for p in found}
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "runs": runs,
        "projection": projection(runs, args.embed_rate, [10_000_000, 60_000_000], [3, 8, 16], [8, 32, 128]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["base", "build", "query", "project"])
    parser.add_argument("--work", type=Path, default=Path("/work/bench/scale"))
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--quantization", default="int8", choices=["none", "int8", "binary"])
    parser.add_argument("--from", dest="sources", type=Path, nargs="*", default=[], help="collections (base)")
    parser.add_argument(
        "--noise", type=float, default=0.5, help="norm of the noise added to each copy (base)"
    )
    parser.add_argument(
        "--cache-tokens",
        action="store_true",
        help="build: tokenize each distinct passage once (the copies repeat texts); the write rate then "
        "leaves out tokenizing, which a build without this flag measures",
    )
    parser.add_argument("--vectors-on-disk", action="store_true", help="build/query: originals on disk")
    parser.add_argument("--embed-rate", type=float, default=38.0, help="project: chunks/s per Ray worker")
    parser.add_argument(
        "--hnsw-ef", type=int, default=None, help="query: the HNSW search ef (engine default if unset)"
    )
    parser.add_argument("--repeat", type=int, default=2, help="timed passes over the queries (query)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    stage: dict[str, Callable[[argparse.Namespace], dict[str, object]]] = {
        "base": cmd_base,
        "build": cmd_build,
        "query": cmd_query,
        "project": cmd_project,
    }
    result = stage[args.stage](args)
    name = args.stage if args.stage in ("base", "project") else f"{args.stage}-{run_name(args)}"
    if args.stage == "query" and args.hnsw_ef is not None:
        name += f"-ef{args.hnsw_ef}"
    target = result_path("scale", "project") if args.stage == "project" else args.work / f"{name}.json"
    target.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
