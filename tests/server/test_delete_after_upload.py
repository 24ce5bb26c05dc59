"""Delete after a UI-style upload (issue 46): two uploads (one with a 16-byte text file named ``broken.pdf``), a
question and its re-run, another process that tries to open the collection the server holds, then the delete.

Qdrant's engine opens a shard's segments (replaying and truncating their journals) before it takes the WAL
lock, so that other process's failed open broke the server's next flush: the delete answered 500 "Tracker
journal … is shorter than expected" and the collection kept counting the document. The store now takes
``shard.lock`` before Qdrant's engine reads a file of the shard, so the other process is refused first.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from collection.mp_helpers import env_for

from deepcite.retrieval.store import open_store
from deepcite.server.app import create_app
from server.conftest import ADMIN, Index, LiveServer, headers, server_settings
from server.test_upload_route import PDF, _files, _wait

BROKEN = b"this is not pdf\n"  # 16 bytes


@pytest.fixture(scope="module")
def server(index: Index, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Path]]:
    settings = server_settings(tmp_path_factory.mktemp("delete-after-upload"))
    store = open_store(settings)
    with LiveServer(create_app(settings, store=store, embedder=index.embedder)) as live:
        yield live, settings.data_dir
    store.close()


def _chunks(client: httpx.Client, collection: str) -> int:
    listing = client.get("/api/collections").json()["collections"]
    return next(c["chunks"] for c in listing if c["name"] == collection)


def test_delete_after_two_uploads_questions_and_another_process(server: tuple[LiveServer, Path]) -> None:
    live, data_dir = server
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=300) as client:
        first = client.post(
            "/api/collections/uptest/documents",
            files=_files(("pasa.pdf", PDF.read_bytes()), ("broken.pdf", BROKEN)),
        )
        assert _wait(client, first.json()["job_id"])["state"] == "done"
        # the same shapes again: the BM25 statistics do not drift, so the shard is not reloaded after this write
        second = client.post(
            "/api/collections/uptest/documents",
            files=_files(("pasa-dropped.pdf", PDF.read_bytes()), ("broken-2.pdf", BROKEN)),
        )
        assert _wait(client, second.json()["job_id"])["state"] == "done"
        before = _chunks(client, "uptest")

        asked = client.post("/api/unified-search", json={"query": "What is PASA?", "collection": "uptest"})
        assert asked.status_code == 200, asked.text
        rerun = client.post(f"/api/answers/{asked.json()['request_id']}/rerun")
        assert rerun.status_code == 200, rerun.text

        # another process (a CLI check) tries the collection the server holds: refused, and harmless
        other = subprocess.run(
            [sys.executable, "-m", "deepcite.cli", "collections", "check", "uptest"],
            env=env_for(data_dir),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert other.returncode == 2 and "is open in" in other.stderr, other.stderr

        deleted = client.delete("/api/collections/uptest/documents/pasa-dropped.pdf")
        assert deleted.status_code == 200, deleted.text
        gone = deleted.json()["chunks_deleted"]
        assert gone > 0 and _chunks(client, "uptest") == before - gone
        found = client.post(
            "/api/search",
            json={"query": "PASA", "collection": "uptest", "mode": "bm25", "k": 50},
        ).json()
        assert found["hits"] and {h["doc_id"] for h in found["hits"]} == {"pasa.pdf"}
        assert client.delete("/api/collections/uptest/documents/pasa-dropped.pdf").status_code == 404
