"""The JSON API against the real server: response shape, regeneration, limits and client mistakes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from deepcite.answer.prompts import INSUFFICIENT
from server.conftest import (
    ADMIN,
    COLLECTION,
    MAX_QUERY_CHARS,
    MAX_REQUEST_BYTES,
    LiveServer,
    assert_citations_resolve,
    headers,
)

pytestmark = pytest.mark.slow

RESPONSE_KEYS = {
    "success", "request_id", "query", "summary", "answer", "subanswers", "citations", "coverage",
    "retrieval_report", "citation_check", "retrieval_latency_ms", "summary_latency_ms", "answer_latency_ms",
    "total_chunks", "chunks_used_summary", "chunks_used_answer",
}  # fmt: skip
CITATION_KEYS = {"id", "title", "pmid", "doi", "section", "text", "score"}


def test_unified_search_returns_a_cited_answer(af_answer: dict[str, Any]) -> None:
    body = af_answer
    assert set(body) >= RESPONSE_KEYS
    assert body["success"] is True
    assert body["citations"], "the fixture corpus answers this question"
    assert all(set(c) >= CITATION_KEYS for c in body["citations"])
    assert [c["id"] for c in body["citations"]] == list(range(1, len(body["citations"]) + 1))
    assert body["total_chunks"] == len(body["citations"])
    assert "[" in body["summary"] and "stroke" in body["summary"].lower()
    assert body["subanswers"] and body["retrieval_report"]
    assert body["coverage"]["total_aspects"] >= 1
    check = body["citation_check"]
    assert check["sentences"] >= check["cited"] > 0
    assert body["retrieval_latency_ms"] > 0
    assert 0 < body["chunks_used_summary"] <= body["total_chunks"]
    assert_citations_resolve(body)


def test_regenerate_summary_and_answer_from_the_stored_context(
    client: httpx.Client, af_answer: dict[str, Any]
) -> None:
    ids = {c["id"] for c in af_answer["citations"]}
    for route, part in (("/api/quick-summary", "summary"), ("/api/detailed-answer", "answer")):
        response = client.post(route, json={"request_id": af_answer["request_id"]})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["part"] == part and body["request_id"] == af_answer["request_id"]
        assert body["text"] == af_answer[part]  # the extractive generator is deterministic
        assert {c["id"] for c in body["citations"]} <= ids
        assert_citations_resolve({"summary": body["text"], "answer": "", "subanswers": [], **body})


def test_unknown_request_id_is_404(client: httpx.Client) -> None:
    for route in ("/api/quick-summary", "/api/detailed-answer"):
        response = client.post(route, json={"request_id": "no-such-request"})
        assert response.status_code == 404
        assert "no-such-request" in response.json()["message"]


def test_empty_context_answers_with_the_insufficient_evidence_template(client: httpx.Client) -> None:
    response = client.post(
        "/api/unified-search",
        json={"query": "stroke risk in atrial fibrillation", "filters": {"doc_ids": ["no-such-document"]}},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["success"] is True
    assert body["citations"] == [] and body["total_chunks"] == 0
    assert body["summary"] == INSUFFICIENT and body["answer"] == INSUFFICIENT and body["insufficient"] is True
    # the stored context has no chunks: regeneration is refused with 422
    for route in ("/api/quick-summary", "/api/detailed-answer"):
        again = client.post(route, json={"request_id": body["request_id"]})
        assert again.status_code == 422
        assert again.json()["error"] == "InsufficientEvidenceError"


@pytest.mark.parametrize(
    ("content", "field"),
    [
        (b'{"query": "stroke"', "body"),  # truncated JSON
        (b"not json at all", "body"),
        (b"{}", "query"),  # missing field
        (b'{"query": 42}', "query"),  # wrong type
        (b'{"query": "stroke", "max_hops": "many"}', "max_hops"),
        (b'{"query": "stroke", "qeury": "typo"}', "qeury"),  # unknown field
        (b'{"query": "stroke", "filters": {"year_from": "soon"}}', "filters.year_from"),
    ],
)
def test_bad_bodies_are_422_naming_the_problem(client: httpx.Client, content: bytes, field: str) -> None:
    response = client.post(
        "/api/unified-search", content=content, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    body = response.json()
    assert body["success"] is False and body["error"] == "ValidationError"
    assert field in {p["field"] for p in body["detail"]}, body


def test_regeneration_needs_a_request_id(client: httpx.Client) -> None:
    for content in (b"{}", b'{"request_id": ""}', b"[1, 2]"):
        response = client.post(
            "/api/quick-summary", content=content, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 422, content
        assert response.json()["detail"][0]["field"] in ("request_id", "body")


def test_query_limits_are_422_with_a_clear_message(client: httpx.Client) -> None:
    long = client.post("/api/unified-search", json={"query": "stroke " * MAX_QUERY_CHARS})
    assert long.status_code == 422
    assert "max_question_chars" in long.json()["message"] and str(MAX_QUERY_CHARS) in long.json()["message"]
    blank = client.post("/api/unified-search", json={"query": "   "})
    assert blank.status_code == 422 and "empty" in blank.json()["message"]
    hops = client.post("/api/unified-search", json={"query": "stroke", "max_hops": 99})
    assert hops.status_code == 422 and "max_hops" in hops.json()["message"]


def test_oversized_body_is_413(client: httpx.Client) -> None:
    response = client.post("/api/unified-search", json={"query": "x", "padding": "y" * MAX_REQUEST_BYTES})
    assert response.status_code == 413
    assert "max_request_bytes" in response.json()["message"]

    def chunks():  # no Content-Length: the limit counts the bytes received
        for _ in range(8):
            yield b"y" * (MAX_REQUEST_BYTES // 4)

    streamed = client.post(
        "/api/unified-search", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413


def test_unknown_collection_is_404_naming_the_known_ones(client: httpx.Client) -> None:
    response = client.post("/api/unified-search", json={"query": "stroke", "collection": "nope"})
    assert response.status_code == 404
    body = response.json()
    assert body["error"] == "CollectionNotFoundError"
    assert "'nope'" in body["message"] and COLLECTION in body["message"]


def test_bad_filter_values_are_client_errors(client: httpx.Client) -> None:
    response = client.post(
        "/api/unified-search", json={"query": "stroke", "filters": {"equals": {"journal": [1.5, "x"]}}}
    )
    assert 400 <= response.status_code < 500
    assert "journal" in response.json()["message"]


def test_no_client_mistake_is_answered_500(live: LiveServer) -> None:
    mistakes: list[tuple[str, str, dict[str, Any]]] = [
        ("POST", "/api/unified-search", {"content": b"\xff\xfe\x00"}),
        ("POST", "/api/unified-search", {"json": []}),
        ("POST", "/api/unified-search", {"json": {"query": None}}),
        ("POST", "/api/unified-search", {"json": {"query": "a", "filters": []}}),
        (
            "POST",
            "/api/unified-search",
            {"json": {"query": "a", "filters": {"year_from": 2020, "year_to": 2000}}},
        ),
        ("POST", "/api/unified-search", {"json": {"query": "a", "max_hops": 0}}),
        ("POST", "/api/unified-search", {"json": {"query": "a", "collection": ""}}),
        ("GET", "/api/unified-search", {}),
        ("GET", "/api/unified-search/stream", {}),
        ("GET", "/api/unified-search/stream", {"params": {"query": "a", "filters": "{not json"}}),
        ("GET", "/api/unified-search/stream", {"params": {"query": "a", "max_hops": "x"}}),
        ("POST", "/api/quick-summary", {"json": {"request_id": 5}}),
        ("POST", "/api/detailed-answer", {"content": b"request_id=5"}),
        ("GET", "/api/no-such-route", {}),
    ]
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=120) as c:
        for method, path, kwargs in mistakes:
            response = c.request(method, path, **kwargs)
            assert 400 <= response.status_code < 500, (method, path, kwargs, response.text)
            assert response.json()["success"] is False


def test_health_docs_and_collections(client: httpx.Client) -> None:
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["auth"] is True
    assert 0 <= health["contexts"] <= health["context_cap"]
    assert health["ready"] is True and health["warm_s"] > 0  # models loaded before the first request
    assert client.get("/docs").status_code == 200
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    # the stream's events are published: one schema per event, chosen by its SSE event name
    events = spec["components"]["schemas"]["StreamEvent"]["discriminator"]["mapping"]
    assert set(events) == {"hop", "summary", "answer", "done", "error"}
    for path, method in (("/api/unified-search/stream", "get"), ("/api/unified-search", "post")):
        stream = paths[path][method]["responses"]["200"]["content"]["text/event-stream"]
        assert stream["schema"]["$ref"] == "#/components/schemas/StreamEvent"
    for path in (
        "/api/unified-search",
        "/api/unified-search/stream",
        "/api/quick-summary",
        "/api/detailed-answer",
    ):
        assert path in paths
    listing = client.get("/api/collections").json()
    assert listing["default"] == COLLECTION
    listed = {c["name"]: (c["chunks"], c["status"]) for c in listing["collections"]}
    assert listed[COLLECTION] == (22, "ok")
