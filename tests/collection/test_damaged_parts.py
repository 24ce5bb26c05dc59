"""Each part of a collection damaged in turn (issue 46): dense vectors overwritten or zeroed, the entity graph,
the originals' manifest, a stored original overwritten or removed. ``collections check`` names the part, and
the search, the file route and the API answer the documented "collection damaged" 503, never a 500, a NaN
score or a wrong result."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from server.conftest import LiveServer

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.errors import CollectionDamagedError
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.originals import OriginalsStore
from deepcite.server.app import create_app
from deepcite.service import SearchRequest

pytestmark = pytest.mark.slow

WORDS = "heart stroke warfarin anticoagulation bleeding risk atrial fibrillation elderly trial dose aspirin".split()


def _text(seed: int) -> str:
    return ". ".join(
        " ".join(WORDS[(seed * 7 + i * 3 + j) % len(WORDS)] for j in range(12)) for i in range(30)
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Path:
    """A data dir with collection ``c``: three text files ingested (vectors, graph, originals)."""
    folder = tmp_path_factory.mktemp("damage-in")
    for i in range(3):
        (folder / f"doc{i}.txt").write_text(_text(i), encoding="utf-8")
    data = tmp_path_factory.mktemp("damage-template")
    with Engine(Settings(data_dir=data), embedder=minilm) as engine:
        engine.corpus.ingest("c", folder)
    return data


def _dense(data: Path) -> list[Path]:
    return sorted(data.glob("edge/c/shard/segments/*/vector_storage-dense/vectors/chunk_*.mmap"))


def _overwrite(paths: list[Path], fill: Callable[[int], bytes]) -> None:
    assert paths
    for path in paths:
        path.write_bytes(fill(path.stat().st_size))


def _stored(data: Path) -> Path:
    """The stored original of doc0.txt."""
    path = OriginalsStore(data / "files" / "c").path_for("doc0.txt")
    assert path is not None
    return path


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "dense vectors overwritten": (lambda d: _overwrite(_dense(d), os.urandom), "dense vectors are damaged"),
    "dense vectors zeroed": (lambda d: _overwrite(_dense(d), bytes), "dense vectors are damaged"),
    "dense vectors NaN": (  # Qdrant's engine drops NaN-scored points: an empty result, not an error
        lambda d: _overwrite(_dense(d), lambda n: b"\xff" * n),
        "dense vectors are damaged",
    ),
    "entity graph garbled": (
        lambda d: _overwrite([d / "graph" / "c.sqlite"], lambda n: b"\x13" * n),
        "entity graph",
    ),
    "originals manifest garbled": (
        lambda d: _overwrite([d / "files" / "c" / OriginalsStore.MANIFEST], lambda n: b"\x13" * n),
        "originals manifest",
    ),
    "stored original overwritten": (
        lambda d: _overwrite([_stored(d)], os.urandom),
        "does not match its checksum",
    ),
    "stored original removed": (lambda d: _stored(d).unlink(), "is missing"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_part_is_named_by_check_and_never_a_result(
    case: str, template: Path, tmp_path: Path, minilm: Embedder
) -> None:
    damage, named = DAMAGE[case]
    data = tmp_path / "data"
    shutil.copytree(template, data)
    damage(data)
    settings = Settings(data_dir=data)
    with Engine(settings, embedder=minilm) as engine:
        report = engine.corpus.check("c")
        assert not report.ok and any(named in p for p in report.problems), report.problems
        for mode in ("dense", "hybrid", "graph"):  # a result, or the damaged error: never NaN or ~1e37
            try:
                hits = engine.search(
                    SearchRequest(query="warfarin bleeding risk", collection="c", mode=mode)
                ).hits
            except CollectionDamagedError:
                continue
            assert all(0 <= h.score <= 1.0 + 1e-3 for h in hits if mode == "dense"), (mode, hits)
            assert all(h.score == h.score and abs(h.score) < 1e6 for h in hits), (mode, hits)
        with LiveServer(create_app(engine)) as live:
            calls = [
                httpx.post(
                    f"{live.base_url}/api/search",
                    json={"query": "warfarin bleeding risk", "collection": "c", "mode": mode},
                    timeout=300,
                )
                for mode in ("dense", "hybrid", "graph")
            ]
            calls.append(httpx.get(f"{live.base_url}/files/c/doc0.txt", timeout=60))
            calls.append(httpx.get(f"{live.base_url}/api/collections", timeout=60))
        for response in calls:
            assert response.status_code in (200, 404, 503), (response.request.url, response.text)
            if response.status_code == 503:
                assert "--rebuild" in response.json()["message"] and str(data) not in response.text
        if case.startswith("stored original"):  # never served as the document
            assert calls[3].status_code in (404, 503)
        if case in (
            "dense vectors overwritten",
            "dense vectors zeroed",  # vectors sampled when the collection is opened (store.open_check_vectors)
            "dense vectors NaN",
            "entity graph garbled",
            "originals manifest garbled",
        ):
            assert 503 in {r.status_code for r in calls}, [(r.request.url.path, r.status_code) for r in calls]
