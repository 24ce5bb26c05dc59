"""What checking a sample of dense vectors costs when a collection is opened (``store.open_check_vectors``).

    .venv/bin/python benchmarks/open_check.py                       # 20,000 points, samples 0, 64 and 256
    .venv/bin/python benchmarks/open_check.py --points 2000 --repeats 5

A collection of ``--points`` random 384-d unit vectors (with short texts) is built once under a temporary folder
(or ``--data-dir``). Then, round-robin over the sample sizes, a fresh store opens it ``--repeats`` times each: the
clock covers the shard's load, the sample's check and one exact count (what the first search of a collection
pays for its open). Reported per size: the median and the minimum in milliseconds, and the median's difference
from size 0; and ``check_ms``, the sample's check alone (read the vectors, compute their norms) in a store that
has the shard open, the median of ``--repeats`` x 10 calls: the figure the open's noise cannot hide. Results go to
``benchmarks/results/open_check/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from api_common import write_result

from deepcite.config import Settings
from deepcite.models import Chunk
from deepcite.retrieval.edge_store import EdgeStore

COLLECTION = "open-check"
DIM = 384


def build(root: Path, points: int) -> None:
    """The collection of ``points`` random unit vectors under ``root`` (kept when it is there already)."""
    store = EdgeStore(root, Settings(data_dir=root.parent))
    try:
        if store.has_collection(COLLECTION):
            return
        store.create_collection(COLLECTION, dense_dim=DIM)
        rng = np.random.default_rng(0)
        batch = 2_000
        for start in range(0, points, batch):
            count = min(batch, points - start)
            vectors = rng.normal(size=(count, DIM)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            chunks = [
                Chunk(
                    chunk_id=f"p{start + i}",
                    doc_id=f"d{(start + i) // 10}",
                    title="",
                    text=f"passage {start + i}",
                )
                for i in range(count)
            ]
            store.upsert(COLLECTION, chunks, vectors)
        store.optimize(COLLECTION)
    finally:
        store.close()


def open_ms(root: Path, sample: int) -> float:
    """Milliseconds to open the collection in a fresh store (with a sample of ``sample`` vectors) and count it."""
    settings = Settings(data_dir=root.parent, store={"open_check_vectors": sample})
    store = EdgeStore(root, settings)
    try:
        started = time.perf_counter()
        store.count(COLLECTION)
        return (time.perf_counter() - started) * 1000
    finally:
        store.close()


def check_ms(root: Path, sample: int, calls: int) -> list[float]:
    """Milliseconds of each of ``calls`` checks of a sample of ``sample`` vectors in an open store."""
    settings = Settings(data_dir=root.parent, store={"open_check_vectors": sample})
    store = EdgeStore(root, settings)
    try:
        shard = store._shard(COLLECTION)  # opened (and checked) once; then the check alone, timed
        timings = []
        for _ in range(calls):
            started = time.perf_counter()
            store._check_sample(COLLECTION, shard)
            timings.append((time.perf_counter() - started) * 1000)
        return timings
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--samples", type=int, nargs="+", default=[0, 64, 256])
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="open-check-") as tmp:
        root = (args.data_dir or Path(tmp)) / "edge"
        build(root, args.points)
        timings: dict[int, list[float]] = {s: [] for s in args.samples}
        open_ms(root, 0)  # the files in the page cache before the first timed open
        for _ in range(args.repeats):
            for sample in args.samples:
                timings[sample].append(open_ms(root, sample))
        checks = {s: check_ms(root, s, args.repeats * 10) for s in args.samples}
    base = statistics.median(timings[args.samples[0]])
    result = {
        "points": args.points,
        "repeats": args.repeats,
        "open_ms": {
            str(s): {
                "median": round(statistics.median(t), 2),
                "min": round(min(t), 2),
                "median_over_first": round(statistics.median(t) - base, 2),
            }
            for s, t in timings.items()
        },
        "check_ms": {str(s): round(statistics.median(t), 3) for s, t in checks.items()},
    }
    print(result)
    print(write_result("open_check", result))


if __name__ == "__main__":
    main()
