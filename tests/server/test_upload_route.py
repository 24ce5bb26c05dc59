"""Uploads against the real server: multipart files in, a background ingest job with per-file outcomes and
SSE progress, the documents' ACL taken from the token, size limits (413), client mistakes (4xx), delete."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deepcite.retrieval.store import open_store
from deepcite.server.app import create_app
from server.conftest import ADMIN, CARDIO, PUBLIC, Index, LiveServer, headers, server_settings

UPLOADS = Path(__file__).parents[1] / "fixtures" / "uploads"
PDF = UPLOADS / "pasa-p1-2.pdf"
TRUNCATED = UPLOADS / "truncated.pdf"
MAX_FILE = 300_000  # the PDF (276 kB) fits
MAX_REQUEST = 700_000
MAX_FILES = 3


@pytest.fixture(scope="module")
def upload_server(index: Index, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    settings = server_settings(tmp_path_factory.mktemp("upload-data"))
    settings = settings.model_copy(
        update={
            "server": settings.server.model_copy(
                update={
                    "max_upload_file_bytes": MAX_FILE,
                    "max_upload_request_bytes": MAX_REQUEST,
                    "max_upload_files": MAX_FILES,
                }
            )
        }
    )
    store = open_store(settings)
    app = create_app(settings, store=store, embedder=index.embedder)
    with LiveServer(app) as server:
        yield server
    store.close()


def _client(server: LiveServer, token: str | None) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, headers=headers(token) if token else {}, timeout=300)


def _files(*items: tuple[str, bytes]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("files", (name, data, "application/octet-stream")) for name, data in items]


def _wait(client: httpx.Client, job_id: str) -> dict[str, Any]:
    """Poll the job until it has finished (no time limit asserted: the client timeout bounds each call)."""
    while True:
        job = client.get(f"/api/jobs/{job_id}").json()
        if job["state"] in ("done", "failed"):
            return job
        time.sleep(0.2)


def _events(client: httpx.Client, job_id: str) -> list[tuple[str, Any]]:
    """Every SSE event of a job, read until the stream ends."""
    events: list[tuple[str, Any]] = []
    with client.stream("GET", f"/api/jobs/{job_id}/events") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        name = "message"
        for line in response.iter_lines():
            if line.startswith("event:"):
                name = line.partition(":")[2].strip()
            elif line.startswith("data:"):
                events.append((name, json.loads(line.partition(":")[2].strip())))
                name = "message"
    return events


def test_upload_ingests_each_file_and_reports_the_bad_one(upload_server: LiveServer) -> None:
    with _client(upload_server, CARDIO) as client:
        response = client.post(
            "/api/collections/uploads/documents",
            files=_files(("pasa.pdf", PDF.read_bytes()), ("truncated.pdf", TRUNCATED.read_bytes())),
        )
        assert response.status_code == 202, response.text
        job = response.json()
        assert job["uploaded"] == ["pasa.pdf", "truncated.pdf"] and job["total"] == 2
        assert response.headers["location"] == f"/api/jobs/{job['job_id']}"
        done = _wait(client, job["job_id"])
        assert done["state"] == "done", done
        by_file = {f["file"]: f for f in done["files"]}
        assert by_file["pasa.pdf"]["status"] == "ingested" and by_file["pasa.pdf"]["pages"] == 2
        bad = by_file["truncated.pdf"]
        assert bad["status"] == "skipped" and bad["reason"] == "corrupt" and bad["message"]
        assert done["report"]["files"] == done["files"]

        events = _events(client, job["job_id"])  # replayed from the first event
        names = [name for name, _ in events]
        assert names[0] == "state" and names[-1] == "done"
        done_files = [e for n, e in events if n == "file" and e["stage"] == "done"]
        assert sorted(e["file"]["file"] for e in done_files) == ["pasa.pdf", "truncated.pdf"]
        assert [e["done"] for e in done_files] == [1, 2]
        for name in ("pasa.pdf", "truncated.pdf"):  # each file is told as it is read, then read, then done
            stages = [e["stage"] for n, e in events if n == "file" and e["name"] == name]
            assert stages == ["reading", "read", "done"], (name, stages)
        read = next(e for n, e in events if n == "file" and e["stage"] == "read" and e["name"] == "pasa.pdf")
        assert read["passages"] > 0 and read["file"]["pages"] == 2
        assert events[-1][1]["state"] == "done"

        # the documents carry the token's groups: cardiology reads the file, a public token does not
        assert client.get("/files/uploads/pasa.pdf").content == PDF.read_bytes()
    with _client(upload_server, PUBLIC) as public:
        assert public.get("/files/uploads/pasa.pdf").status_code == 404
        assert public.get(f"/api/jobs/{job['job_id']}").status_code == 404  # another caller's job
    with _client(upload_server, ADMIN) as admin:
        listing = admin.get("/api/collections").json()["collections"]
        assert any(c["name"] == "uploads" and c["chunks"] > 0 for c in listing)


def test_the_same_upload_again_is_unchanged(upload_server: LiveServer) -> None:
    with _client(upload_server, ADMIN) as client:
        first = client.post("/api/collections/again/documents", files=_files(("pasa.pdf", PDF.read_bytes())))
        assert _wait(client, first.json()["job_id"])["files"][0]["status"] == "ingested"
        second = client.post("/api/collections/again/documents", files=_files(("pasa.pdf", PDF.read_bytes())))
        assert _wait(client, second.json()["job_id"])["files"][0]["status"] == "unchanged"


def test_on_error_fail_writes_nothing_and_fails_the_job(upload_server: LiveServer) -> None:
    with _client(upload_server, ADMIN) as client:
        response = client.post(
            "/api/collections/strict/documents",
            files=_files(("pasa.pdf", PDF.read_bytes()), ("truncated.pdf", TRUNCATED.read_bytes())),
            data={"on_error": "fail"},
        )
        job = _wait(client, response.json()["job_id"])
        assert job["state"] == "failed" and "truncated.pdf" in job["error"]
        assert "strict" not in {c["name"] for c in client.get("/api/collections").json()["collections"]}


def test_size_limits_are_413(upload_server: LiveServer) -> None:
    with _client(upload_server, ADMIN) as client:
        big_file = client.post(
            "/api/collections/limits/documents", files=_files(("big.txt", b"word " * (MAX_FILE // 4)))
        )
        assert big_file.status_code == 413 and "max_upload_file_bytes" in big_file.json()["message"]
        big_body = client.post(
            "/api/collections/limits/documents",
            files=_files(*((f"part{i}.txt", b"word " * (MAX_FILE // 6)) for i in range(3))),
        )
        assert big_body.status_code == 413 and "max_upload_request_bytes" in big_body.json()["message"]
        many = client.post(
            "/api/collections/limits/documents",
            files=_files(*((f"n{i}.txt", b"a few words") for i in range(MAX_FILES + 1))),
        )
        assert many.status_code == 413 and "max_upload_files" in many.json()["message"]


def test_client_mistakes_are_4xx_with_a_message(upload_server: LiveServer) -> None:
    with _client(upload_server, ADMIN) as client:
        cases = {
            "not multipart": client.post("/api/collections/x/documents", json={"files": []}),
            "no file": client.post("/api/collections/x/documents", data={"on_error": "skip"}, files={}),
            "two of a name": client.post(
                "/api/collections/x/documents", files=_files(("a.txt", b"one"), ("a.txt", b"two"))
            ),
            "bad collection": client.post(
                "/api/collections/bad%20name!/documents", files=_files(("a.txt", b"words"))
            ),
            "practitioner index": client.post(
                "/api/collections/practitioners/documents", files=_files(("a.txt", b"words"))
            ),
            "bad on_error": client.post(
                "/api/collections/x/documents", files=_files(("a.txt", b"words")), data={"on_error": "maybe"}
            ),
            "unknown job": client.get("/api/jobs/0123456789abcdef"),
            "unknown job events": client.get("/api/jobs/0123456789abcdef/events"),
        }
        for case, response in cases.items():
            assert 400 <= response.status_code < 500, (case, response.status_code, response.text)
            assert response.json()["message"], case
    with _client(upload_server, None) as anonymous:
        assert (
            anonymous.post("/api/collections/x/documents", files=_files(("a.txt", b"w"))).status_code == 401
        )


def test_delete_a_document_follows_the_acl(upload_server: LiveServer) -> None:
    with _client(upload_server, CARDIO) as cardio:
        response = cardio.post(
            "/api/collections/gone/documents", files=_files(("pasa.pdf", PDF.read_bytes()))
        )
        assert _wait(cardio, response.json()["job_id"])["state"] == "done"
        with _client(upload_server, PUBLIC) as public:  # cannot see it: the same 404 as a missing document
            assert public.delete("/api/collections/gone/documents/pasa.pdf").status_code == 404
        deleted = cardio.delete("/api/collections/gone/documents/pasa.pdf")
        assert deleted.status_code == 200 and deleted.json()["chunks_deleted"] > 0
        assert cardio.get("/files/gone/pasa.pdf").status_code == 404
        assert cardio.delete("/api/collections/gone/documents/pasa.pdf").status_code == 404
