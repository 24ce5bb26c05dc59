"""``kill -9`` at chosen moments of an ingest, a re-ingest, an upload (through the server's route) and a delete (issue
46), then the same command again. The killed process is real (the CLI, or ``deepcite serve``) and stops where a
stand-in hook makes it wait (:data:`~collection.mp_helpers.PAUSE`): after the points of a batch are written but
before the statistics that count them, before a batch's originals are kept, after a changed document's old
version is deleted, after a document's points or original are deleted.

After the kill the collection reads (``collections check`` finds no damage, a search answers, no 5xx), and after
the re-run it holds exactly the chunks of a clean run, its check ok.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from server.conftest import LiveServer
from server.test_upload_route import _files, _wait

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.models import Filters
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app
from deepcite.server.routes_upload import UPLOADS_DIR
from deepcite.service import SearchRequest

from .mp_helpers import kill_9_when_paused, paused_at, serve

pytestmark = pytest.mark.slow

WORDS = "heart stroke warfarin anticoagulation bleeding risk atrial fibrillation elderly trial dose".split()
NOTES = 3
COLLECTION = "c"
STORE = "deepcite.retrieval.qdrant_engine_store:QdrantEngineStore"
EDGE = "deepcite.retrieval.edge_store:EdgeStore"
ORIGINALS = "deepcite.retrieval.originals:OriginalsStore"


def _notes(folder: Path, changed: bool = False) -> Path:
    """Three notes of a few passages each; ``changed``: note1 longer (a re-ingest replaces it whole)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(NOTES):
        sentences = 120 if changed and i == 1 else 60
        body = ". ".join(
            " ".join(WORDS[(i + j * 5 + k) % len(WORDS)] for k in range(10)) for j in range(sentences)
        )
        (folder / f"note{i}.txt").write_text(body, encoding="utf-8")
    return folder


@dataclass
class Corpus:
    """The notes, their changed version, a data dir holding the first ingest, and the clean counts."""

    notes: Path
    changed: Path
    template: Path
    chunks: int  # a clean ingest of ``notes``
    changed_chunks: int  # a clean ingest of ``changed``
    note0_chunks: int


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Corpus:
    root = tmp_path_factory.mktemp("kill-points")
    notes, changed = _notes(root / "notes"), _notes(root / "changed", changed=True)
    counts = []
    for name, folder in (("template", notes), ("clean-changed", changed)):
        with Engine(Settings(data_dir=root / name), embedder=minilm) as engine:
            engine.corpus.ingest(COLLECTION, folder)
            counts.append(engine.corpus.count(COLLECTION))
            note0 = engine.resources.store.count(COLLECTION, Filters(doc_ids=["note0.txt"]))
    assert counts[0] != counts[1] and note0
    return Corpus(notes, changed, root / "template", counts[0], counts[1], note0)


def _readable(data: Path, minilm: Embedder) -> int:
    """The collection's chunk count, after its check finds no damage and a hybrid search answers."""
    with Engine(Settings(data_dir=data), embedder=minilm) as engine:
        report = engine.corpus.check(COLLECTION)
        assert report.ok, report.problems
        found = engine.search(
            SearchRequest(query="warfarin bleeding risk", collection=COLLECTION, mode="hybrid")
        )
        assert found.hits
        return engine.corpus.count(COLLECTION)


def _ingest(data: Path, folder: Path, minilm: Embedder) -> None:
    with Engine(Settings(data_dir=data), embedder=minilm) as engine:
        engine.corpus.ingest(COLLECTION, folder)


INGESTS: dict[str, tuple[str, bool]] = {  # the pause point and whether the changed notes are ingested
    # one file done, the next one's points written, its original not yet kept
    "ingest: a batch written, its original not yet kept": (f"{ORIGINALS}.put:before:2", False),
    "re-ingest: a changed document's old version deleted": (f"{STORE}.delete_document:after:1", True),
}


@pytest.mark.parametrize("case", list(INGESTS))
def test_an_ingest_killed_then_run_again_holds_the_clean_count(
    case: str, corpus: Corpus, tmp_path: Path, minilm: Embedder
) -> None:
    point, changed = INGESTS[case]
    data = tmp_path / "data"
    if changed:
        shutil.copytree(corpus.template, data)
    folder = corpus.changed if changed else corpus.notes
    ingest = paused_at(
        data,
        point,
        "ingest",
        str(folder),
        "--collection",
        COLLECTION,
        DEEPCITE_EMBEDDER_INGEST_BATCH_DOCS="1",
    )
    kill_9_when_paused(ingest, data)
    _readable(data, minilm)
    _ingest(data, folder, minilm)  # the same command again
    assert _readable(data, minilm) == (corpus.changed_chunks if changed else corpus.chunks)


@contextmanager
def _restarted(data: Path, minilm: Embedder) -> Iterator[httpx.Client]:
    """The server started again on ``data`` (in this process), and a client of it."""
    settings = Settings(data_dir=data, server={"warm_start": False})
    with (
        Engine(settings, embedder=minilm) as engine,
        LiveServer(create_app(engine)) as live,
        httpx.Client(base_url=live.base_url, timeout=300) as client,
    ):
        yield client


def _answered(client: httpx.Client) -> None:
    """The collection lists and searches over HTTP without a 5xx."""
    for response in (
        client.get("/api/collections"),
        client.post("/api/search", json={"query": "warfarin", "collection": COLLECTION, "mode": "hybrid"}),
    ):
        assert response.status_code < 500, (response.request.url, response.text)


def _in_background(call: Callable[[], object]) -> None:
    """``call`` in a thread: a request the server never answers (it is killed under it)."""

    def run() -> None:
        with contextlib.suppress(httpx.TransportError):
            call()

    threading.Thread(target=run, daemon=True).start()


SERVER_ENV = {"DEEPCITE_SERVER_WARM_START": "false", "DEEPCITE_EMBEDDER_INGEST_BATCH_DOCS": "1"}


def test_an_upload_killed_then_sent_again_holds_the_clean_count(
    corpus: Corpus, tmp_path: Path, minilm: Embedder
) -> None:
    data = tmp_path / "data"
    files = _files(*((f.name, f.read_bytes()) for f in sorted(corpus.notes.iterdir())))
    with serve(data, pause=f"{EDGE}.qdrant_upsert:after:2", **SERVER_ENV) as (url, proc):
        accepted = httpx.post(f"{url}/api/collections/{COLLECTION}/documents", files=files, timeout=60)
        assert accepted.status_code == 202, accepted.text
        kill_9_when_paused(proc, data)
    _readable(data, minilm)
    with _restarted(data, minilm) as client:
        _answered(client)
        again = client.post(f"/api/collections/{COLLECTION}/documents", files=files)
        assert again.status_code == 202 and _wait(client, again.json()["job_id"])["state"] == "done", (
            again.text
        )
        _answered(client)
    assert not list((data / UPLOADS_DIR).iterdir())  # the killed server's upload folder went at the restart
    assert _readable(data, minilm) == corpus.chunks


DELETES = {
    "delete: the points deleted": f"{EDGE}.qdrant_delete:after:1",
    "delete: the points deleted, the original not yet": f"{ORIGINALS}.remove:before:1",
}


@pytest.mark.parametrize("case", list(DELETES))
def test_a_delete_killed_then_sent_again_leaves_the_other_documents(
    case: str, corpus: Corpus, tmp_path: Path, minilm: Embedder
) -> None:
    data = tmp_path / "data"
    shutil.copytree(corpus.template, data)
    document = f"/api/collections/{COLLECTION}/documents/note0.txt"
    with serve(data, pause=DELETES[case], **SERVER_ENV) as (url, proc):
        _in_background(lambda: httpx.delete(url + document, timeout=300))
        kill_9_when_paused(proc, data)
    _readable(data, minilm)
    with _restarted(data, minilm) as client:
        _answered(client)
        again = client.delete(document)
        assert again.status_code in (200, 404), again.text
        assert client.get(f"/files/{COLLECTION}/note0.txt").status_code == 404
        _answered(client)
    assert _readable(data, minilm) == corpus.chunks - corpus.note0_chunks
