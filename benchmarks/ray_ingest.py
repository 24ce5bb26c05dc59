"""Ray ingest against the single-process path, in one run: chunks/s, start-up and overhead per batch.

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/ray_ingest.py \
        --corpus ../shared/datasets/beir_scifact --docs 2000 --rounds 2

Each run ingests the same first ``--docs`` SciFact passages (the BEIR corpus) into a fresh collection
with default settings (``embedder.ingest_batch_docs`` records per batch):

- ``single``: ``IngestPipeline.ingest`` in this process, the model loaded before the clock starts;
- ``ray1``: ``IngestPipeline.ingest(ray="local")`` with one actor holding both CPUs (``ray.cpus_per_worker=2``,
  so its torch gets two threads, as this process has);
- ``ray2``: two actors of one CPU each.

The runs are interleaved for ``--rounds`` rounds, so the load of other processes falls on all alike; the
median is reported. Ray (2 CPUs, no dashboard) is started once first. A Ray run's time includes starting
its actors and loading their models; that start-up is measured apart (entering and leaving the pool) and
taken out for the steady rate. The driver's own write rate (BM25 weights, upserts, the entity graph)
bounds how many workers one driver can feed. Overhead per batch, two ways: end to end, (ray1 steady
time - single time) / batches; and direct, the round trips of one batch's messages (records out, chunks
back; texts out, vectors back) to an actor that does nothing with them. Results:
``benchmarks/results/ray_ingest/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import ray
from results_path import result_path

from deepcite.config import Settings
from deepcite.ingest.chunker import chunk_reads
from deepcite.ingest.distributed import LOCAL, RayIngest
from deepcite.ingest.loaders import iter_documents
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.ingest.readers import ReadDocument
from deepcite.ingest.steps import WritePlan
from deepcite.models import Document
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import build_embedder

RUNS: dict[str, dict[str, Any] | None] = {
    "single": None,
    "ray1": {"workers": 1, "cpus_per_worker": 2},
    "ray2": {"workers": 2, "cpus_per_worker": 1},
}


@ray.remote
class Echo:
    """An actor that sends back what it is given: the cost of moving a batch, without the work."""

    def back(self, payload: Any, answer: Any) -> Any:
        return answer


def subset(corpus: Path, docs: int, into: Path) -> Path:
    """The first ``docs`` records of a BEIR corpus, as a BEIR folder of their own."""
    folder = into / f"scifact{docs}"
    folder.mkdir()
    with (corpus / "corpus.jsonl").open() as src, (folder / "corpus.jsonl").open("w") as dst:
        dst.writelines(islice(src, docs))
    return folder


def one_run(name: str, folder: Path, root: Path, round_: int) -> dict[str, Any]:
    options = RUNS[name]
    settings = Settings(data_dir=root / f"{name}-{round_}", ray={"local_cpus": 2, **(options or {})})
    col = open_collection("bench", settings, embedder=build_embedder(Settings()))
    pipeline = IngestPipeline(col)
    batches: list[int] = []
    report = pipeline.ingest(
        folder, fmt="beir", ray=LOCAL if options else None, progress=lambda d, w: batches.append(d)
    )
    startup = 0.0
    if options:
        t0 = time.perf_counter()
        with RayIngest.start(pipeline.steps, LOCAL, embedder=build_embedder):
            startup = time.perf_counter() - t0
    steady = report.seconds - startup
    return {
        "chunks": report.chunks,
        "batches": len(batches),
        "seconds": round(report.seconds, 2),
        "startup_seconds": round(startup, 2),
        "chunks_per_s": round(report.chunks / report.seconds, 2),
        "steady_chunks_per_s": round(report.chunks / steady, 2),
        "embed_seconds": round(report.embed_seconds, 2),
        "index_seconds": round(report.index_seconds, 2),
        "graph_seconds": round(report.graph_seconds, 2),
        "load_avg_1min": round(os.getloadavg()[0], 1),
    }


def message_overhead(folder: Path, batch_docs: int, repeats: int) -> dict[str, float]:
    """Median seconds of one batch's two round trips to an idle actor, with real payloads."""
    docs = [d for d in islice(iter_documents(folder, "beir"), batch_docs) if isinstance(d, Document)]
    chunks = chunk_reads([ReadDocument(d) for d in docs], Settings().chunker)
    texts = WritePlan([c for cs in chunks.values() for c in cs], set(), {}).texts
    vectors = np.zeros((len(texts), 384), dtype=np.float32)
    echo = Echo.remote()
    ray.get(echo.back.remote(None, None))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ray.get(echo.back.remote(docs, chunks))
        ray.get(echo.back.remote(texts, vectors))
        times.append(time.perf_counter() - t0)
    ray.kill(echo)
    return {"docs": len(docs), "chunks": len(texts), "seconds": round(statistics.median(times), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("../shared/datasets/beir_scifact"))
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--out", type=Path, help="default: benchmarks/results/ray_ingest/<date>_<commit>.json"
    )
    args = parser.parse_args()
    build_embedder(Settings())  # the single-process model, loaded outside the clock
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    with tempfile.TemporaryDirectory(dir="/work/bench") as tmp:
        root = Path(tmp)
        folder = subset(args.corpus, args.docs, root)
        rounds = []
        for round_ in range(args.rounds):
            for name in RUNS:
                result = one_run(name, folder, root, round_)
                print(name, round_, result, flush=True)
                rounds.append({"run": name, "round": round_, **result})
        overhead = message_overhead(folder, Settings().embedder.ingest_batch_docs, repeats=10)
    ray.shutdown()
    median = {
        name: {
            key: statistics.median(r[key] for r in rounds if r["run"] == name)
            for key in ("seconds", "startup_seconds", "chunks_per_s", "steady_chunks_per_s")
        }
        for name in RUNS
    }
    single, batches = median["single"]["seconds"], next(r["batches"] for r in rounds)
    summary = {
        "docs": args.docs,
        "chunks": rounds[0]["chunks"],
        "batches": batches,
        "median": median,
        "ray1_over_single": round(median["ray1"]["chunks_per_s"] / median["single"]["chunks_per_s"], 3),
        "ray1_steady_over_single": round(
            median["ray1"]["steady_chunks_per_s"] / median["single"]["chunks_per_s"], 3
        ),
        "ray2_over_single": round(median["ray2"]["chunks_per_s"] / median["single"]["chunks_per_s"], 3),
        "ray2_steady_over_single": round(
            median["ray2"]["steady_chunks_per_s"] / median["single"]["chunks_per_s"], 3
        ),
        "overhead_per_batch_end_to_end_s": round(
            (median["ray1"]["seconds"] - median["ray1"]["startup_seconds"] - single) / batches, 3
        ),
        "overhead_per_batch_messages": overhead,
        # what the driver alone can write (BM25 weights, store upserts, entity graph): the cap on M workers
        "driver_write_chunks_per_s": round(
            statistics.median(
                r["chunks"] / (r["index_seconds"] + r["graph_seconds"])
                for r in rounds
                if r["run"] == "single"
            ),
            1,
        ),
        "rounds": rounds,
    }
    args.out = args.out or result_path("ray_ingest")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "rounds"}, indent=2))


if __name__ == "__main__":
    main()
