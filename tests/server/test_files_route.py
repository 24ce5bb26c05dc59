"""``GET /files/{collection}/{document_id}`` against the real server: the original file of a document, only
for callers whose ACL groups may read it, with every traversal attempt refused and no server path in errors.

One real PDF (two pages cut from PaSa, tests/fixtures/uploads/) is ingested three times under different
document ids: shared with group ``cardiology``, with group ``oncology``, and public.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deepcite.ingest.pipeline import IngestPipeline
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.store import open_store
from deepcite.server.app import create_app
from server.conftest import ADMIN, CARDIO, PUBLIC, Index, LiveServer, headers, server_settings

PDF = Path(__file__).parents[1] / "fixtures" / "uploads" / "pasa-p1-2.pdf"
COLLECTION = "papers"
CARDIO_DOC, ONCO_DOC, PUBLIC_DOC = "cardiology/pasa.pdf", "oncology/pasa.pdf", "public/pasa.pdf"


class FilesServer(LiveServer):
    data_dir: Path


@pytest.fixture(scope="module")
def files_server(index: Index, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FilesServer]:
    """A server over collection ``papers``: the fixture PDF as three documents with different ACLs."""
    data_dir = tmp_path_factory.mktemp("files-data")
    settings = server_settings(data_dir)
    store = open_store(settings)
    col = open_collection(COLLECTION, settings, store=store, embedder=index.embedder)
    for name, acl in ((CARDIO_DOC, ["cardiology"]), (ONCO_DOC, ["oncology"]), (PUBLIC_DOC, [])):
        report = IngestPipeline(col).ingest_files([PDF], names=[name], acl=acl)
        assert [f.status for f in report.files] == ["ingested"], report.files
    app = create_app(settings, store=store, embedder=index.embedder)
    with FilesServer(app) as server:
        server.data_dir = data_dir
        yield server
    store.close()


def _get(server: FilesServer, path: str, token: str | None = ADMIN) -> httpx.Response:
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        return client.get(path, headers=headers(token) if token else {})


def _raw(server: FilesServer, target: str, token: str = ADMIN) -> tuple[int, str]:
    """A GET of ``target`` exactly as written (no client-side normalisation of dots or escapes)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.request("GET", target, headers=headers(token))
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        conn.close()


def _assert_no_server_path(body: str, server: FilesServer) -> None:
    for leak in (str(server.data_dir), "/tmp/", "/work/", "manifest.sqlite", '.pdf"', "site-packages"):
        assert leak not in body, f"{leak!r} leaked into {body!r}"


def test_the_original_is_served_inline_to_a_caller_of_its_group(files_server: FilesServer) -> None:
    response = _get(files_server, f"/files/{COLLECTION}/{CARDIO_DOC}", CARDIO)
    assert response.status_code == 200, response.text
    assert response.content == PDF.read_bytes()
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"] == 'inline; filename="pasa.pdf"'
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "private" in response.headers["cache-control"]


def test_a_public_document_is_served_to_every_token(files_server: FilesServer) -> None:
    for token in (ADMIN, CARDIO, PUBLIC):
        assert _get(files_server, f"/files/{COLLECTION}/{PUBLIC_DOC}", token).status_code == 200


def test_another_groups_document_is_a_404_like_a_missing_one(files_server: FilesServer) -> None:
    hidden = _get(files_server, f"/files/{COLLECTION}/{ONCO_DOC}", CARDIO)
    missing = _get(files_server, f"/files/{COLLECTION}/oncology/nothing-here.pdf", CARDIO)
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()  # the same answer: existence does not leak
    assert _get(files_server, f"/files/{COLLECTION}/{CARDIO_DOC}", PUBLIC).status_code == 404
    assert _get(files_server, f"/files/{COLLECTION}/{ONCO_DOC}", ADMIN).status_code == 200
    assert _get(files_server, f"/files/{COLLECTION}/{ONCO_DOC}", None).status_code == 401


def test_an_unknown_collection_is_a_404(files_server: FilesServer) -> None:
    response = _get(files_server, f"/files/nope/{CARDIO_DOC}")
    assert response.status_code == 404
    assert response.json()["error"] == "NotFoundError"


@pytest.mark.parametrize(
    "target",
    [
        f"/files/{COLLECTION}/..%2F..%2F..%2Fetc%2Fpasswd",
        f"/files/{COLLECTION}/../../etc/passwd",
        f"/files/{COLLECTION}/cardiology%2F..%2F..%2Fmanifest.sqlite",
        f"/files/{COLLECTION}/cardiology/../oncology/pasa.pdf",
        f"/files/{COLLECTION}/%2Fetc%2Fpasswd",
        f"/files/{COLLECTION}//etc/passwd",
        f"/files/{COLLECTION}/pasa.pdf%00.txt",
        f"/files/{COLLECTION}/%00",
        f"/files/{COLLECTION}/..%5C..%5Cwindows%5Cwin.ini",
        f"/files/{COLLECTION}/" + "a" * 5000,
        "/files/..%2F..%2Fetc/passwd",
        "/files/%2E%2E/cardiology/pasa.pdf",
        f"/files/{COLLECTION}/manifest.sqlite",
        f"/files/{COLLECTION}/" + "0" * 64 + ".pdf",  # a stored file's own name is not a document id
    ],
)
def test_traversal_attempts_are_4xx_without_a_path(files_server: FilesServer, target: str) -> None:
    status, body = _raw(files_server, target)
    assert 400 <= status < 500, (status, body)
    _assert_no_server_path(body, files_server)


def test_citations_carry_file_and_page_and_their_link_opens(files_server: FilesServer) -> None:
    with httpx.Client(base_url=files_server.base_url, headers=headers(CARDIO), timeout=300) as client:
        response = client.post(
            "/api/unified-search",
            json={"query": "What does the Crawler add to the paper queue?", "collection": COLLECTION},
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        citations = body["citations"]
        assert citations, body
        for citation in citations:
            assert citation["doc_id"] in (CARDIO_DOC, PUBLIC_DOC)  # never the oncology copy
            assert citation["file"] == citation["doc_id"]
            assert citation["page"] in (1, 2)
            assert "page_end" in citation and "acl" not in citation
        crawler = [c for c in citations if "paper queue" in c["text"]]
        assert crawler and all(c["page"] == 2 or c["page_end"] == 2 for c in crawler)
        opened = client.get(f"/files/{COLLECTION}/{crawler[0]['doc_id']}")
        assert opened.status_code == 200 and opened.content == PDF.read_bytes()


def test_search_hits_carry_file_and_page(files_server: FilesServer) -> None:
    with httpx.Client(base_url=files_server.base_url, headers=headers(CARDIO), timeout=300) as client:
        response = client.post(
            "/api/search", json={"query": "Crawler paper queue", "collection": COLLECTION, "k": 5}
        )
    assert response.status_code == 200, response.text
    hits = response.json()["hits"]
    assert hits and {h["doc_id"] for h in hits} <= {CARDIO_DOC, PUBLIC_DOC}
    for hit in hits:
        assert hit["file"] == hit["doc_id"] and hit["page"] in (1, 2) and "page_end" in hit
        assert "acl" not in hit
    assert any(2 in (h["page"], h["page_end"]) for h in hits if "paper queue" in h["text"])
