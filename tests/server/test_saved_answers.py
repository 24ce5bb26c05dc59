"""Saved answers over HTTP: every answer is saved under its request id, read back, listed per collection,
re-run, downloaded as an evidence table, deleted; another group's saved answer is a 404, like a missing one.
The real app under uvicorn over the real fixture index (tests/server/conftest.py)."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import pytest

from deepcite.answer.evidence import claim_key
from server.conftest import ADMIN, CARDIO, COLLECTION, PUBLIC, LiveServer, headers

pytestmark = pytest.mark.slow

QUESTION = "Does atrial fibrillation increase the risk of stroke?"


def call(live: LiveServer, token: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    with httpx.Client(base_url=live.base_url, headers=headers(token), timeout=300) as c:
        return c.request(method, path, **kwargs)


@pytest.fixture(scope="module")
def cardio_answer(live: LiveServer) -> dict[str, Any]:
    """An answer asked with the cardiology token (retrieved under the group cardiology)."""
    response = call(live, CARDIO, "POST", "/api/unified-search", json={"query": QUESTION, "max_hops": 2})
    assert response.status_code == 200, response.text
    return response.json()


def test_every_answer_is_saved_with_what_made_it(live: LiveServer, cardio_answer: dict[str, Any]) -> None:
    answer_id = cardio_answer["request_id"]
    response = call(live, CARDIO, "GET", f"/api/answers/{answer_id}")
    assert response.status_code == 200, response.text
    saved = response.json()
    assert (saved["id"], saved["collection"], saved["question"]) == (answer_id, COLLECTION, QUESTION)
    assert saved["acl_groups"] == ["cardiology"] and saved["request"]["max_hops"] == 2
    assert saved["response"]["summary"] == cardio_answer["summary"]
    assert saved["response"]["citations"] == cardio_answer["citations"]
    assert saved["response"]["citation_check"] == cardio_answer["citation_check"]
    assert (
        saved["pack"]["final_evidence"]
        and saved["settings"]["answer"]["citations"]["quote_max_sentences"] >= 1
    )
    assert saved["cited"] == len(cardio_answer["citation_check"]["cited_ids"]) > 0
    for citation in saved["response"]["citations"]:  # the quote is where its offsets say
        assert citation["text"][citation["quote_start"] : citation["quote_end"]] == citation["quote"]
    listed = call(live, CARDIO, "GET", "/api/answers", params={"collection": COLLECTION}).json()
    assert listed["collection"] == COLLECTION and answer_id in [a["id"] for a in listed["answers"]]


def test_another_groups_saved_answer_is_a_404(live: LiveServer, cardio_answer: dict[str, Any]) -> None:
    answer_id = cardio_answer["request_id"]
    missing = call(live, PUBLIC, "GET", "/api/answers/no-such-answer")
    for method, path in [
        ("GET", f"/api/answers/{answer_id}"),
        ("GET", f"/api/answers/{answer_id}/report"),
        ("POST", f"/api/answers/{answer_id}/rerun"),
        ("DELETE", f"/api/answers/{answer_id}"),
    ]:
        refused = call(live, PUBLIC, method, path)
        assert refused.status_code == 404, (method, path, refused.text)
        assert refused.json()["message"] == missing.json()["message"]  # existence does not leak
    listed = call(live, PUBLIC, "GET", "/api/answers", params={"collection": COLLECTION}).json()
    assert answer_id not in [a["id"] for a in listed["answers"]]
    assert call(live, ADMIN, "GET", f"/api/answers/{answer_id}").status_code == 200  # unrestricted


def test_the_evidence_table_downloads_as_csv_matching_the_citations(
    live: LiveServer, cardio_answer: dict[str, Any]
) -> None:
    answer_id = cardio_answer["request_id"]
    response = call(live, CARDIO, "GET", f"/api/answers/{answer_id}/report", params={"format": "csv"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"].endswith('-evidence.csv"')
    rows = list(csv.DictReader(io.StringIO(response.text)))
    claims, seen = (
        [],
        set(),
    )  # one row per distinct claim and citation (the summary and the answer may share one)
    for claim in cardio_answer["citation_check"]["claims"]:
        if (key := (claim_key(claim["claim"]), claim["id"])) not in seen:
            seen.add(key)
            claims.append(claim)
    assert len(rows) == len(claims) > 0
    by_id = {c["id"]: c for c in cardio_answer["citations"]}
    for row, claim in zip(rows, claims, strict=True):
        cited = by_id[int(row["citation"])]
        assert (row["claim"], int(row["citation"]), row["verdict"]) == (
            claim["claim"],
            claim["id"],
            claim["verdict"],
        )
        assert row["quote"] == cited["text"][claim["quote_start"] : claim["quote_end"]] and row["quote"]
        assert (row["doc_id"], row["title"]) == (cited["doc_id"], cited["title"])
    supported = {int(r["citation"]) for r in rows if r["verdict"] == "supported"}
    assert supported == set(cardio_answer["citation_check"]["cited_ids"])
    markdown = call(live, CARDIO, "GET", f"/api/answers/{answer_id}/report").text
    assert "## Evidence table" in markdown and rows[0]["quote"][:40] in markdown
    bad = call(live, CARDIO, "GET", f"/api/answers/{answer_id}/report", params={"format": "xlsx"})
    assert bad.status_code == 400 and "csv" in bad.json()["message"]


def test_a_rerun_is_saved_and_says_which_cited_passages_changed(
    live: LiveServer, cardio_answer: dict[str, Any]
) -> None:
    answer_id = cardio_answer["request_id"]
    response = call(live, CARDIO, "POST", f"/api/answers/{answer_id}/rerun")
    assert response.status_code == 200, response.text
    rerun = response.json()
    assert rerun["id"] != answer_id and rerun["rerun_of"] == answer_id
    assert rerun["question"] == QUESTION and rerun["acl_groups"] == ["cardiology"]
    # the collection did not change: the same passages are cited, unchanged
    assert rerun["changes"] and {c["status"] for c in rerun["changes"]} == {"unchanged"}
    assert call(live, CARDIO, "GET", f"/api/answers/{rerun['id']}").json()["rerun_of"] == answer_id


def test_a_saved_answer_is_deleted_once(live: LiveServer) -> None:
    asked = call(
        live, CARDIO, "POST", "/api/unified-search", json={"query": "What treats atrial fibrillation?"}
    )
    answer_id = asked.json()["request_id"]
    deleted = call(live, CARDIO, "DELETE", f"/api/answers/{answer_id}")
    assert deleted.status_code == 200 and deleted.json() == {"deleted": answer_id}
    assert call(live, CARDIO, "GET", f"/api/answers/{answer_id}").status_code == 404
    assert call(live, CARDIO, "DELETE", f"/api/answers/{answer_id}").status_code == 404


def test_bad_ids_and_collections_are_clear_client_errors(live: LiveServer) -> None:
    for bad in ("x" * 300, "a%20b", "a.b"):
        response = call(live, ADMIN, "GET", f"/api/answers/{bad}")
        assert (
            response.status_code == 404
            and "list the collection's saved answers" in response.json()["message"]
        )
    assert call(live, ADMIN, "GET", "/api/answers/..%2F..%2Fetc").status_code == 404
    response = call(live, ADMIN, "GET", "/api/answers", params={"collection": "../secrets"})
    assert response.status_code == 422 and "collection" in response.json()["message"]
    assert call(live, ADMIN, "GET", "/api/answers", params={"limit": 0}).status_code == 422
