"""Cost of the entity graph: build time and memory per 10k passages, ingest time with and without the graph
(same run, same embedder), and Personalized PageRank latency p50 at 5k and 50k passages.

    nice -n 10 .venv/bin/python benchmarks/graph_build.py --work /work/bench/graph/build

Passages: every paragraph of the HotpotQA-500 (IRCoT) file and the HippoRAG MuSiQue and HotpotQA train files,
pooled (each distinct paragraph once). The 50k graph replicates those real passages with new chunk and
document ids (a copy's entities are the original's, so entity degrees grow with the copies: a harder graph
than 50k distinct passages would give). Walks start from the train questions' entities plus three seed
passages (as a first hop would give); each walk's wall time and the process's CPU time (which other jobs on
a loaded machine do not inflate) are both reported. Results go to ``benchmarks/results/graph_build/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
import tracemalloc
from pathlib import Path

from results_path import result_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from deepcite.config import GraphSettings, Settings  # noqa: E402
from deepcite.evaluation.multihop import load_questions  # noqa: E402
from deepcite.ingest.chunker import chunk_document  # noqa: E402
from deepcite.ingest.loaders import iter_documents  # noqa: E402
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Chunk, Document  # noqa: E402
from deepcite.retrieval.collection import open_collection  # noqa: E402
from deepcite.retrieval.embedders import build_embedder  # noqa: E402
from deepcite.retrieval.graph import EntityGraph, GraphWalker  # noqa: E402

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
SOURCES = [
    (DATASETS / "hotpotqa_ircot500" / "ircot_dev_subsampled_500.jsonl", "hotpotqa"),
    (DATASETS / "hipporag_musique" / "musique_train.json", "musique"),
    (DATASETS / "hipporag_hotpotqa" / "hotpotqa_train.json", "hotpotqa"),
]
QUESTIONS = [
    (DATASETS / "hipporag_musique" / "musique_train.json", "musique"),
    (DATASETS / "hipporag_hotpotqa" / "hotpotqa_train.json", "hotpot"),
]


def pooled_documents() -> list[Document]:
    docs: dict[str, Document] = {}
    for path, fmt in SOURCES:
        for item in iter_documents(path, fmt):
            if isinstance(item, Document):
                docs.setdefault(item.id, item)
    return list(docs.values())


def replicate(chunks: list[Chunk], n: int) -> list[Chunk]:
    """``n`` passages: the real ones, then copies with new chunk and document ids."""
    out: list[Chunk] = []
    copy = 0
    while len(out) < n:
        for c in chunks[: n - len(out)]:
            out.append(
                c
                if copy == 0
                else c.model_copy(update={"chunk_id": f"{c.chunk_id}~{copy}", "doc_id": f"{c.doc_id}~{copy}"})
            )
        copy += 1
    return out


def build(graph: EntityGraph, chunks: list[Chunk], batch: int) -> dict[str, float]:
    """Add ``chunks`` in ingest-sized batches; time, Python peak memory, file size."""
    graph.clear()
    tracemalloc.start()
    started, cpu_started = time.perf_counter(), time.process_time()
    for i in range(0, len(chunks), batch):
        graph.add(chunks[i : i + batch])
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    stats = graph.stats()
    return {
        "passages": stats.passages,
        "entities": stats.entities,
        "mentions": stats.mentions,
        "seconds": round(seconds, 2),
        "seconds_per_10k": round(seconds * 10_000 / len(chunks), 2),
        "cpu_seconds_per_10k": round(cpu * 10_000 / len(chunks), 2),
        "python_peak_mb_per_10k": round(peak / 2**20 * 10_000 / len(chunks), 1),
        "sqlite_mb_per_10k": round(graph.path.stat().st_size / 2**20 * 10_000 / len(chunks), 1),
    }


def walk_latency(graph: EntityGraph, questions: list[str], rng: np.random.Generator) -> dict[str, float]:
    walker = GraphWalker(graph)
    started = time.perf_counter()
    matrix = walker.matrix()
    matrix_seconds = time.perf_counter() - started
    transition = matrix.transition
    chunk_ids = matrix.rows.chunk_ids
    times, cpu = [], []
    for q in questions:
        seeds = {
            chunk_ids[i]: 1.0 / r for r, i in enumerate(rng.choice(len(chunk_ids), 3, replace=False), start=1)
        }
        t0, c0 = time.perf_counter(), time.process_time()
        walker.walk(q, seed_passages=seeds)
        times.append(1000 * (time.perf_counter() - t0))
        cpu.append(1000 * (time.process_time() - c0))
    return {
        "passages": len(chunk_ids),
        "nodes": transition.shape[0],
        "edges": int(transition.nnz),
        "matrix_build_seconds": round(matrix_seconds, 2),
        "matrix_mb": round(
            (transition.data.nbytes + transition.indices.nbytes + transition.indptr.nbytes) / 2**20, 1
        ),
        "walk_p50_ms": round(statistics.median(times), 1),
        "walk_p95_ms": round(float(np.percentile(times, 95)), 1),
        "walk_cpu_p50_ms": round(
            statistics.median(cpu), 1
        ),  # the process's CPU time: what load does not inflate
    }


def ingest_pair(work: Path, docs: list[Document]) -> dict[str, object]:
    """Ingest ``docs`` into fresh collections with the graph off and on (one embedder, same run)."""
    embedder = build_embedder(Settings())
    embedder.encode(["warm up"], kind="passage")
    out: dict[str, object] = {"documents": len(docs)}
    for label, enabled in (("without_graph", False), ("with_graph", True), ("without_graph_again", False)):
        data = work / f"ingest-{label}"
        shutil.rmtree(data, ignore_errors=True)
        settings = Settings(data_dir=data, graph=GraphSettings(enabled=enabled))
        report = IngestPipeline(open_collection("pool", settings, embedder=embedder)).ingest(docs)
        out[label] = {
            k: round(getattr(report, k), 2)
            for k in ("seconds", "embed_seconds", "index_seconds", "graph_seconds")
        }
    base = (out["without_graph"]["seconds"] + out["without_graph_again"]["seconds"]) / 2  # type: ignore[index]
    out["overhead_ratio_vs_mean_without"] = round(out["with_graph"]["seconds"] / base - 1, 3)  # type: ignore[index]
    out["graph_share_of_ingest"] = round(out["with_graph"]["graph_seconds"] / out["with_graph"]["seconds"], 3)  # type: ignore[index]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--work", type=Path, required=True, help="a scratch folder (graphs, ingest data dirs)"
    )
    parser.add_argument(
        "--ingest-docs", type=int, default=2000, help="documents ingested with and without graph"
    )
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--stages", default="build,ppr,ingest", help="which of build,ppr,ingest to run")
    parser.add_argument(
        "--out", type=Path, help="default: benchmarks/results/graph_build/<date>_<commit>.json"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=args.work)
    docs = pooled_documents()
    chunks = [c for d in docs for c in chunk_document(d, settings.chunker)]
    questions = [q.question for path, fmt in QUESTIONS for q in load_questions(path, fmt).questions][
        : args.questions
    ]
    rng = np.random.default_rng(0)
    out: dict[str, object] = {"pooled_passages": len(chunks), "graph_settings": settings.graph.model_dump()}
    stages = set(args.stages.split(","))
    args.out = args.out or result_path("graph_build")
    if args.out.is_file():  # a run of some stages keeps the others' figures
        out = {**json.loads(args.out.read_text()), **out}
    if "build" in stages:
        graph = EntityGraph(args.work / "graph-build.sqlite", settings.graph)
        out["build_real"] = build(graph, chunks, settings.embedder.ingest_batch_docs)
        print("build (real passages):", out["build_real"])
    for n in (5_000, 50_000):
        g = EntityGraph(args.work / f"graph-{n}.sqlite", settings.graph)
        if "build" in stages or not g.exists():
            out[f"build_{n}"] = build(g, replicate(chunks, n), settings.embedder.ingest_batch_docs)
            print(f"{n}: build {out[f'build_{n}']}")
        if "ppr" in stages:
            out[f"ppr_{n}"] = walk_latency(g, questions, rng)
            print(f"{n}: ppr {out[f'ppr_{n}']}")
    if "ingest" in stages:
        out["ingest"] = ingest_pair(args.work, docs[: args.ingest_docs])
        print("ingest:", out["ingest"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
