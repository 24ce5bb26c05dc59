"""Bearer-token auth and ACL isolation: no chunk outside the caller's groups reaches evidence or answers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from server.conftest import (
    ADMIN,
    CARDIO,
    CARDIOLOGY_MARKER,
    COLLECTION,
    ONCOLOGY_MARKER,
    PUBLIC,
    LiveServer,
    assert_citations_resolve,
    headers,
)

pytestmark = pytest.mark.slow

QUESTION = (
    "What happened to atrial fibrillation and stroke in the zelvatinib trial and the quorvane registry?"
)


ONCOLOGY_DOCS, CARDIOLOGY_DOCS = "onco-secret-", "cardio-internal-"


def everything(body: dict[str, Any]) -> str:
    """All evidence a caller receives (the question, which names the markers, left out): answers,
    sub-answers, citations, and the documents each hop of the retrieval report selected."""
    texts = [body["summary"], body["answer"], *(s["answer"] for s in body["subanswers"])]
    # long-answer headings name the question's aspects, which quote the question: leave them out
    parts = [line for text in texts for line in text.splitlines() if not line.startswith("#")]
    parts += [f"{c['doc_id']} {c['title']} {c['text']}" for c in body["citations"]]
    parts += [s["doc_id"] for hop in body["retrieval_report"] for s in hop["selected"]]
    return " ".join(parts).lower()


def ask(live: LiveServer, token: str, **extra: Any) -> dict[str, Any]:
    with httpx.Client(base_url=live.base_url, headers=headers(token), timeout=300) as c:
        response = c.post("/api/unified-search", json={"query": QUESTION, "max_hops": 2, **extra})
    assert response.status_code == 200, response.text
    body = response.json()
    assert_citations_resolve(body)
    return body


@pytest.fixture(scope="module")
def answers(live: LiveServer) -> dict[str, dict[str, Any]]:
    return {token: ask(live, token) for token in (ADMIN, CARDIO, PUBLIC)}


def test_unrestricted_token_sees_both_groups(answers: dict[str, dict[str, Any]]) -> None:
    seen = everything(answers[ADMIN])
    for marker in (ONCOLOGY_MARKER, CARDIOLOGY_MARKER, ONCOLOGY_DOCS, CARDIOLOGY_DOCS):
        assert marker in seen  # the restricted passages are what this question finds, given access


def test_group_token_sees_its_group_only(answers: dict[str, dict[str, Any]]) -> None:
    body = answers[CARDIO]
    assert ONCOLOGY_MARKER not in everything(body) and ONCOLOGY_DOCS not in everything(body)
    assert any(CARDIOLOGY_MARKER in c["text"].lower() for c in body["citations"])


def test_public_token_sees_public_chunks_only(answers: dict[str, dict[str, Any]]) -> None:
    body = answers[PUBLIC]
    seen = everything(body)
    for marker in (ONCOLOGY_MARKER, CARDIOLOGY_MARKER, ONCOLOGY_DOCS, CARDIOLOGY_DOCS):
        assert marker not in seen
    assert body["citations"], "public passages still answer the atrial fibrillation part"


def test_a_request_cannot_widen_its_groups(live: LiveServer) -> None:
    body = ask(live, CARDIO, filters={"acl_groups": ["oncology", "cardiology"]})
    assert ONCOLOGY_MARKER not in everything(body) and ONCOLOGY_DOCS not in everything(body)


def test_regeneration_is_limited_to_contexts_the_caller_may_read(
    live: LiveServer, answers: dict[str, dict[str, Any]]
) -> None:
    admin_request = answers[ADMIN]["request_id"]
    public_request = answers[PUBLIC]["request_id"]
    with httpx.Client(base_url=live.base_url, timeout=120) as c:
        denied = c.post("/api/quick-summary", json={"request_id": admin_request}, headers=headers(PUBLIC))
        assert denied.status_code == 404  # the admin's context holds oncology chunks
        allowed = c.post("/api/quick-summary", json={"request_id": public_request}, headers=headers(CARDIO))
        assert allowed.status_code == 200  # public evidence is readable by every group
        assert all(ONCOLOGY_DOCS not in c["doc_id"] for c in allowed.json()["citations"])


def test_missing_or_unknown_tokens_are_401(live: LiveServer) -> None:
    with httpx.Client(base_url=live.base_url, timeout=60) as c:
        for extra in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"}):
            response = c.post("/api/unified-search", json={"query": "stroke"}, headers=extra)
            assert response.status_code == 401
            assert response.headers["www-authenticate"] == "Bearer"
            assert "token" in response.json()["message"]
        assert c.get("/healthz").status_code == 200  # health stays open


def test_collections_count_only_what_the_caller_may_read(live: LiveServer) -> None:
    def count(token: str) -> int:
        listing = httpx.get(f"{live.base_url}/api/collections", headers=headers(token)).json()
        return next(c["chunks"] for c in listing["collections"] if c["name"] == COLLECTION)

    assert count(ADMIN) == 22 and count(CARDIO) == 20 and count(PUBLIC) == 18


def test_without_api_keys_no_token_is_needed(open_live: LiveServer) -> None:
    with httpx.Client(base_url=open_live.base_url, timeout=300) as c:
        assert c.get("/healthz").json()["auth"] is False
        body = c.post(
            "/api/unified-search", json={"query": QUESTION, "max_hops": 1, "filters": {"acl_groups": []}}
        ).json()
    assert body["success"] is True
    assert ONCOLOGY_DOCS not in everything(body)  # the request's own ACL filter still applies
