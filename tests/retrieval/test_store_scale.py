"""Serving-at-scale settings (quantisation, HNSW, on-disk placement, payload indexes, cluster layout) on
both backends: Qdrant Edge for real, qdrant-client in local mode, and qdrant-client over HTTP against a
real server on 127.0.0.1 standing in for a Qdrant cluster (which cannot run here): it answers the
client's requests and records them, so the test sees exactly what a cluster would be sent."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import models

from deepcite.config import SearchSettings, Settings, StoreSettings
from deepcite.errors import ConfigError
from deepcite.models import Chunk, Filters, SearchMode
from deepcite.retrieval.edge_store import SHARD_DIR, EdgeStore, edge_config, edge_search_params
from deepcite.retrieval.qdrant_store import QdrantStore, search_params

from .conftest import DIM, RECORDS, make_chunks, open_backend, vector_for, vectors_for

SCALE = StoreSettings(
    quantization="int8",
    quantization_oversampling=3.0,
    vectors_on_disk=True,
    payload_on_disk=False,
    hnsw_m=8,
    hnsw_ef_construct=32,
    hnsw_full_scan_threshold_kb=1,  # small enough that this tiny collection gets a graph
    indexing_threshold_kb=1,
    hnsw_ef=64,
    payload_indexes={"doc_id": "keyword", "journal": "keyword", "year": "integer"},
)


def many_chunks() -> list[Chunk]:
    """320 chunks: the fixture corpus twenty times over, with distinct ids."""
    return [c for copy in range(20) for c in make_chunks(RECORDS, prefix=f"r{copy}-")]


def scale_settings(tmp_path: Path, store: StoreSettings = SCALE) -> Settings:
    return Settings(data_dir=tmp_path / "data", store=store, search=SearchSettings())


def exact_top(chunks: list[Chunk], vectors: np.ndarray, query: np.ndarray, k: int) -> list[str]:
    order = np.argsort(-(vectors @ query))[:k]
    return [chunks[i].chunk_id for i in order]


def test_defaults_are_the_engines_own() -> None:
    store = StoreSettings()
    assert store.quantization == "none" and not store.vectors_on_disk and store.payload_on_disk
    assert (store.hnsw_m, store.hnsw_ef_construct, store.hnsw_full_scan_threshold_kb) == (16, 100, 10_000)
    assert edge_config(store, DIM).quantization_config is None
    # no search parameters at all at the defaults: the same requests as before these settings existed
    assert edge_search_params(store) is None and search_params(store) is None
    assert set(store.payload_indexes) == {"chunk_id", "doc_id", "source", "acl", "year"}


def test_bad_scale_settings_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCITE_STORE_QUANTIZATION", "int4")
    with pytest.raises(ConfigError, match="store.quantization"):
        Settings.load()
    monkeypatch.setenv("DEEPCITE_STORE_QUANTIZATION", "int8")
    monkeypatch.setenv("DEEPCITE_STORE_QUANTIZATION_OVERSAMPLING", "0.5")
    with pytest.raises(ConfigError, match="store.quantization_oversampling"):
        Settings.load()
    monkeypatch.delenv("DEEPCITE_STORE_QUANTIZATION_OVERSAMPLING")
    assert Settings.load().store.quantization == "int8"


def test_edge_builds_the_quantised_graph_on_disk_and_searches_it(tmp_path: Path) -> None:
    from qdrant_edge import EdgeShard

    chunks = many_chunks()
    vectors = vectors_for(chunks)
    root = tmp_path / "edge"
    with EdgeStore(root, scale_settings(tmp_path)) as store:
        store.create_collection("papers", dense_dim=DIM)
        store.upsert("papers", chunks, vectors)
        store.optimize("papers")
        recalls = []
        for q in range(10):
            query = vector_for(f"query-{q}")
            hits = store.search("papers", text="", vector=query.tolist(), mode=SearchMode.DENSE, k=10)
            found = [h.chunk.chunk_id for h in hits]
            assert found[0] == exact_top(chunks, vectors, query, 1)[0]
            recalls.append(len(set(found) & set(exact_top(chunks, vectors, query, 10))) / 10)
        assert np.mean(recalls) >= 0.9
        filtered = store.search(
            "papers",
            text="statin muscle",
            vector=vector_for("query-0").tolist(),
            mode=SearchMode.HYBRID,
            k=5,
            filters=Filters(equals={"journal": "BMJ"}),
        )
        assert filtered and all(h.chunk.metadata["journal"] == "BMJ" for h in filtered)
    shard_dir = root / "papers" / SHARD_DIR
    persisted = json.loads((shard_dir / "edge_config.json").read_text())
    assert persisted["vectors"]["dense"]["memory"] == "cold"  # originals on disk
    assert persisted["quantization_config"]["scalar"]["type"] == "int8"
    assert persisted["quantization_config"]["scalar"]["memory"] == "pinned"  # the int8 copy in RAM
    assert (persisted["hnsw_config"]["m"], persisted["hnsw_config"]["ef_construct"]) == (8, 32)
    shard = EdgeShard.load(str(shard_dir))
    try:
        info = shard.info()
        # every point in the dense HNSW graph and in the BM25 index
        assert info.indexed_vectors_count == 2 * len(chunks)
        assert set(info.payload_schema) == {"doc_id", "metadata.journal", "year"}
    finally:
        shard.close()


@pytest.mark.filterwarnings("ignore:.*(local|Local).*:UserWarning")  # local mode's "has no effect" notes
def test_qdrant_local_mode_accepts_the_scale_settings(tmp_path: Path) -> None:
    """Local mode accepts the layout, ignores it and searches exactly: same results as the defaults."""
    chunks = make_chunks()
    results = []
    for i, store_settings in enumerate((StoreSettings(), SCALE)):
        store = open_backend("qdrant", tmp_path / f"q{i}", scale_settings(tmp_path, store_settings))
        with store:
            store.create_collection("papers", dense_dim=DIM)
            store.upsert("papers", chunks, vectors_for(chunks))
            hits = store.search(
                "papers", text="statin", vector=vector_for("q").tolist(), mode=SearchMode.HYBRID, k=5
            )
            results.append([(h.chunk.chunk_id, round(h.score, 5)) for h in hits])
    assert results[0] == results[1]


def _collection_info(created: dict) -> dict:
    """What Qdrant answers to GET /collections/{name}: the stand-in keeps only the metadata it was given."""
    info = models.CollectionInfo(
        status=models.CollectionStatus.GREEN,
        optimizer_status=models.OptimizersStatusOneOf.OK,
        segments_count=0,
        config=models.CollectionConfig(
            params=models.CollectionParams(),
            hnsw_config=models.HnswConfig(m=16, ef_construct=100, full_scan_threshold=10_000),
            optimizer_config=models.OptimizersConfig(
                deleted_threshold=0.2,
                vacuum_min_vector_number=1000,
                default_segment_number=0,
                flush_interval_sec=5,
            ),
            metadata=created.get("metadata"),
        ),
        payload_schema={},
    )
    return json.loads(info.model_dump_json(exclude_none=True))


class _StandinCluster(BaseHTTPRequestHandler):
    """Stand-in for a Qdrant cluster's REST API: records every request, answers as Qdrant does."""

    requests: list[tuple[str, str, dict]] = []
    collections: dict[str, dict] = {}  # name -> the body it was created with

    def _answer(self, result: object) -> None:
        payload = json.dumps({"result": result, "status": "ok", "time": 0.0}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else {}
        path = self.path.split("?")[0]
        type(self).requests.append((self.command, path, body))
        if path == "/":
            self._version()
        elif m := re.fullmatch(r"/collections/([^/]+)/exists", path):
            self._answer({"exists": m.group(1) in self.collections})
        elif (m := re.fullmatch(r"/collections/([^/]+)", path)) and self.command == "PUT":
            self.collections[m.group(1)] = body
            self._answer(True)
        elif m := re.fullmatch(r"/collections/([^/]+)", path):
            self._answer(_collection_info(self.collections[m.group(1)]))
        elif path.endswith("/index"):
            self._answer({"operation_id": 1, "status": "completed"})
        elif path.endswith("/points/query"):
            self._answer({"points": []})
        elif path.endswith("/points/count"):  # no points stored: an empty dense result is no damage
            self._answer({"count": 0})
        else:
            self.send_response(404)
            self.end_headers()

    def _version(self) -> None:
        payload = json.dumps({"title": "qdrant - stand-in", "version": "1.20.0"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_PUT = do_POST = _handle  # noqa: N815 (http.server's naming)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def cluster_url() -> Iterator[str]:
    _StandinCluster.requests, _StandinCluster.collections = [], {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandinCluster)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_qdrant_cluster_gets_the_layout_and_search_parameters(tmp_path: Path, cluster_url: str) -> None:
    store_settings = SCALE.model_copy(
        update={"url": cluster_url, "shard_number": 6, "replication_factor": 2, "write_consistency_factor": 2}
    )
    with QdrantStore(scale_settings(tmp_path, store_settings)) as store:
        store.create_collection("papers", dense_dim=DIM)
        store.search("papers", text="statin", vector=vector_for("q").tolist(), mode=SearchMode.HYBRID, k=5)
        store.search("papers", text="", vector=vector_for("q").tolist(), mode=SearchMode.DENSE, k=5)
    sent = _StandinCluster.requests
    [create] = [body for method, path, body in sent if method == "PUT" and path == "/collections/papers"]
    assert (create["shard_number"], create["replication_factor"], create["write_consistency_factor"]) == (
        6,
        2,
        2,
    )
    assert create["vectors"]["dense"]["on_disk"] is True and create["on_disk_payload"] is False
    assert create["quantization_config"] == {"scalar": {"type": "int8", "quantile": 0.99, "always_ram": True}}
    assert create["hnsw_config"] == {"m": 8, "ef_construct": 32, "full_scan_threshold": 1}
    assert create["optimizers_config"] == {"indexing_threshold": 1}
    indexes = {body["field_name"]: body["field_schema"] for _, path, body in sent if path.endswith("/index")}
    assert indexes == {"doc_id": "keyword", "metadata.journal": "keyword", "year": "integer"}
    hybrid, dense = [body for _, path, body in sent if path.endswith("/points/query")]
    expected = {"hnsw_ef": 64, "quantization": {"ignore": False, "rescore": True, "oversampling": 3.0}}
    bm25_params, dense_params = (p.get("params") for p in hybrid["prefetch"])  # BM25 first, then dense
    assert bm25_params is None
    assert all({key: p[key] for key in expected} == expected for p in (dense_params, dense["params"]))
