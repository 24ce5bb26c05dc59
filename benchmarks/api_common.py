"""Shared set-up of the API benchmarks: a SciFact collection, the real app under uvicorn on 127.0.0.1.

The collection is reused when the data dir already holds it, else ingested from the BEIR folder (about
5,000 abstracts: several minutes on 2 cores, once). The server is the real app in a uvicorn thread of this
process, reached over loopback HTTP, sharing the process's store and embedder (an Edge collection is
opened by one store per process).
"""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import uvicorn
from results_path import result_path

from deepcite.config import Settings
from deepcite.evaluation.beir import load_beir
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import build_embedder
from deepcite.retrieval.store import open_store
from deepcite.server.app import create_app

DEFAULT_BEIR = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "beir_scifact"
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1] / ".data" / "bench"


def summary(values: list[float]) -> dict[str, float]:
    """Median, p95, mean and count of a list of milliseconds."""
    if not values:
        return {"n": 0}
    array = np.asarray(values)
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p95_ms": round(float(np.percentile(array, 95)), 1),
        "mean_ms": round(float(array.mean()), 1),
    }


def queries(beir: Path, split: str = "test") -> list[str]:
    """The split's query texts, in file order."""
    data = load_beir(beir, split)
    return list(data.queries.values())


def ensure_collection(settings: Settings, name: str, beir: Path) -> tuple[Collection, dict[str, Any]]:
    """Open ``name`` in ``settings.data_dir``, ingesting SciFact first when it is missing or empty."""
    store = open_store(settings)
    col = open_collection(name, settings, store=store, embedder=build_embedder(settings))
    info: dict[str, Any] = {"collection": name, "data_dir": str(settings.data_dir), "ingested": False}
    if not store.has_collection(name) or col.count() == 0:
        print(f"ingesting {beir} into {name!r} (once) …", flush=True)
        report = IngestPipeline(col).ingest(beir, fmt="beir", on_error="skip")
        info.update(ingested=True, ingest=report.to_dict())
    info["chunks"] = col.count()
    return col, info


class LiveServer:
    """The real app under uvicorn in a thread, on a free loopback port."""

    def __init__(self, settings: Settings, col: Collection) -> None:
        app = create_app(settings, store=col.store, embedder=col.embedder)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_keep_alive=30)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the benchmark server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=60)
        self._sock.close()


def write_result(benchmark: str, result: dict[str, Any], variant: str = "") -> Path:
    """Write ``benchmarks/results/<benchmark>/<date>_<commit>[_<variant>].json`` atomically and return its path."""
    path = result_path(benchmark, variant)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
