"""One request model checks the limits for every surface: the same RequestError (HTTP 422) from the
checks alone, over HTTP (``POST /api/search``), and no ACL groups in a passage."""

from __future__ import annotations

import httpx
import pytest

from deepcite.config import Settings
from deepcite.errors import RequestError
from deepcite.models import Filters
from deepcite.service import QuestionRequest, SearchRequest
from server.conftest import MAX_QUERY_CHARS

SETTINGS = Settings()


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (SearchRequest(query="  "), "query is empty"),
        (
            SearchRequest(query="x" * (SETTINGS.research.planning.max_question_chars + 1)),
            "setting research.planning.max_question_chars",
        ),
        (SearchRequest(query="stroke", k=0), "k must be between 1 and"),
        (SearchRequest(query="stroke", k=SETTINGS.search.max_k + 1), "setting search.max_k"),
        (SearchRequest(query="stroke", collection=" "), "collection name is empty"),
        (QuestionRequest(query="stroke", max_hops=0), "max_hops must be between 1 and"),
        (QuestionRequest(query="stroke", filters=Filters(year_from=2020, year_to=2000)), "filters:"),
        (QuestionRequest(query="stroke", filters=Filters(sources=["x"] * 1001)), "search.max_filter_values"),
        (SearchRequest(query="\u200b \ufeff"), "query is empty"),
        (SearchRequest(query="stroke", collection="../edge/demo"), "collection: invalid collection name"),
    ],
)
def test_limits_are_checked_once_with_one_error(
    request_: SearchRequest | QuestionRequest, message: str
) -> None:
    with pytest.raises(RequestError, match=message) as err:
        request_.checked(SETTINGS)
    assert err.value.http_status == 422


def test_checked_requests_are_normalised() -> None:
    search = SearchRequest(query="  stroke ", collection=" demo ").checked(SETTINGS)
    assert (search.query, search.collection, search.k) == ("stroke", "demo", SETTINGS.search.default_k)
    assert QuestionRequest(query=" why? ").checked(SETTINGS).query == "why?"


def test_http_search_uses_the_same_checks_and_hides_acl(client: httpx.Client) -> None:
    found = client.post("/api/search", json={"query": "statins muscle pain", "k": 3, "mode": "bm25"})
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["mode"] == "bm25" and [h["rank"] for h in body["hits"]] == [1, 2, 3]
    assert all("acl" not in hit for hit in body["hits"])
    for payload, field in (
        ({"query": "stroke", "k": 0}, "k must be"),
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, "research.planning.max_question_chars"),
        ({"query": "stroke", "mode": "fuzzy"}, "mode"),
    ):
        refused = client.post("/api/search", json=payload)
        assert refused.status_code == 422 and field in refused.text, refused.text
