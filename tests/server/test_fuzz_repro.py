"""The inputs that once answered 500 (issue 13), each replayed through the real server: every one is now a
4xx that names the problem, on every route that takes it, and a stream route refuses before its first byte."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Document
from deepcite.retrieval.collection import open_collection
from server.conftest import ADMIN, COLLECTION, Index, LiveServer, headers

pytestmark = pytest.mark.slow

SURROGATE = "\ud800"
# the routes that take a query and filters: (method, path, how the request is sent)
QUERY_ROUTES = ["search", "unified-search", "unified-search-stream", "stream-get"]


@pytest.fixture(scope="module")
def api(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=60) as c:
        yield c


def send(api: httpx.Client, route: str, query: Any = "stroke risk", **fields: Any) -> httpx.Response:
    """One request to ``route``; JSON is sent ASCII-escaped so a lone surrogate travels as ``\\ud800``."""
    body = {"query": query, **fields}
    if route == "stream-get":
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()}
        return api.get("/api/unified-search/stream", params=params)
    if route == "unified-search-stream":
        route, body = "unified-search", {**body, "stream": True}
    return api.post(f"/api/{route}", content=json.dumps(body), headers={"Content-Type": "application/json"})


def assert_refused(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    """``response`` is the JSON error ``status`` (not a stream) whose message holds every one of ``words``."""
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    for word in words:
        assert word in body["message"], body
    return body


@pytest.mark.parametrize("route", QUERY_ROUTES)
@pytest.mark.parametrize(
    ("filters", "words"),
    [
        ({"equals": {"year": 2**63 + 1}}, ["filters.equals", "64 bits"]),
        ({"equals": {"year": -(2**63) - 1}}, ["filters.equals", "64 bits"]),
        ({"year_from": 2**64}, ["filters.year_from"]),
        ({"equals": {"a b": "x"}}, ["'a b'", "field name"]),
        ({"equals": {".": "x"}}, ["'.'", "field name"]),
        ({"equals": {"metadata.": "x"}}, ["'metadata.'", "field name"]),
        ({"equals": {"section": SURROGATE}}, ["filters.equals", "surrogate"]),
        ({"equals": {SURROGATE: "x"}}, ["filters.equals", "surrogate"]),
        ({"sources": [SURROGATE]}, ["filters.sources", "surrogate"]),
        ({"year_form": 2010}, ["year_form", "year_from"]),
        ({"equals": {"journal": "BMJ"}}, ["'journal'", "section"]),
        ({"equals": {"year": "recent"}}, ["'year'", "integers"]),
        ({"equals": {"section": 5.5}}, ["'section'", "strings"]),
    ],
)
def test_bad_filters_are_422_naming_the_problem(
    api: httpx.Client, route: str, filters: dict[str, Any], words: list[str]
) -> None:
    assert_refused(send(api, route, filters=filters), 422, *words)


@pytest.mark.parametrize("route", QUERY_ROUTES)
def test_a_lone_surrogate_in_the_query_is_422(api: httpx.Client, route: str) -> None:
    if route == "stream-get":
        pytest.skip("a URL carries UTF-8 bytes, which cannot encode a lone surrogate")
    assert_refused(send(api, route, query=f"stroke {SURROGATE} risk"), 422, "query", "surrogate")


@pytest.mark.parametrize("route", QUERY_ROUTES)
@pytest.mark.parametrize("query", ["", "   ", "\u200b", " \u200b\u2060\ufeff\n", ".", "?!"])
def test_an_empty_query_is_the_same_422_everywhere(api: httpx.Client, route: str, query: str) -> None:
    assert_refused(send(api, route, query=query), 422, "query", "empty")


def test_deeply_nested_filters_on_the_stream_route_are_422(api: httpx.Client) -> None:
    nested = "[" * 5000 + "]" * 5000
    response = api.get("/api/unified-search/stream", params={"query": "stroke", "filters": nested})
    assert_refused(response, 422, "filters")
    deep_value = {"equals": {"section": json.loads("[" * 50 + "]" * 50)}}
    for route in QUERY_ROUTES:
        assert_refused(send(api, route, filters=deep_value), 422, "filters.equals")


@pytest.mark.parametrize("route", QUERY_ROUTES)
@pytest.mark.parametrize("name", ["x" * 300, "é" * 200, "../edge/demo", "../edge/nope", "a/b", "\x00"])
def test_a_malformed_collection_name_is_422_before_any_file_is_touched(
    api: httpx.Client, route: str, name: str
) -> None:
    body = assert_refused(send(api, route, collection=name), 422, "collection")
    assert "known collections" not in body["message"]


def test_existing_and_missing_paths_get_the_same_answer(api: httpx.Client) -> None:
    """No existence oracle: a name that walks out of the data dir is refused the same way whatever exists."""
    for route in QUERY_ROUTES:
        first = send(api, route, collection="../edge/demo")
        second = send(api, route, collection="../edge/nope")
        assert (first.status_code, first.json()["message"].replace("demo", "nope")) == (
            second.status_code,
            second.json()["message"],
        )
    for prefix in ("/files", "/api/collections"):
        a = api.get(f"{prefix}/..%2Fedge%2Fdemo/doc")
        b = api.get(f"{prefix}/..%2Fedge%2Fnope/doc")
        assert a.status_code == b.status_code and a.status_code < 500


@pytest.mark.parametrize("route", ["search", "unified-search", "stream-get"])
def test_the_internal_practitioner_index_is_not_reachable_by_name(
    api: httpx.Client, live: LiveServer, route: str
) -> None:
    internal = "practitioners"
    body = assert_refused(send(api, route, collection=internal), 404, "does not exist")
    assert internal not in body["message"].split("known collections")[-1]
    assert_refused(api.get(f"/files/{internal}/some-doc"), 404)


def test_unknown_collection_lists_only_public_collections(api: httpx.Client) -> None:
    body = assert_refused(send(api, "search", collection="nope"), 404, "'nope' does not exist", COLLECTION)
    assert "practitioners" not in body["message"]


@pytest.mark.parametrize("name", ["x" * 300, "common.js%00", "%00", "..%2F..%2Fpyproject.toml", "x" * 5000])
def test_static_paths_that_cannot_exist_are_404(api: httpx.Client, name: str) -> None:
    response = api.get(f"/static/{name}")
    assert response.status_code == 404, response.text[:300]
    assert "/work" not in response.text and "Traceback" not in response.text


def test_practitioner_text_with_a_lone_surrogate_is_422(api: httpx.Client) -> None:
    for body, field in [
        ({"userQuery": "knee pain", "location": f"Portland{SURROGATE}"}, "location"),
        ({"userQuery": "knee pain", "location": {"city": SURROGATE}}, "location.city"),
        ({"userQuery": f"knee {SURROGATE} pain"}, "userQuery"),
        ({"userQuery": "knee", "messages": [{"role": "user", "content": SURROGATE}]}, "messages.0.content"),
    ]:
        response = api.post(
            "/api/practitioners/search",
            content=json.dumps(body),
            headers={"Content-Type": "application/json"},
        )
        assert_refused(response, 422, field, "surrogate")


@pytest.mark.parametrize("query", ["", "  ", "\u200b\u200b", "..."])
def test_an_empty_practitioner_request_is_the_same_422(api: httpx.Client, query: str) -> None:
    response = api.post("/api/practitioners/search", json={"userQuery": query})
    assert_refused(response, 422, "userQuery", "empty")


def test_a_report_of_hostile_text_is_a_4xx_or_a_safe_download(api: httpx.Client) -> None:
    """A NUL in the question once broke the Content-Disposition header, a lone surrogate the body: 500s."""
    answer = {"request_id": 'r\x00"; x=1', "query": "\x00", "summary": "s", "answer": "a"}
    response = api.post("/api/report", json=answer)
    assert response.status_code == 200, response.text
    assert response.headers["content-disposition"] == 'attachment; filename="deepcite-r_ x=1.md"'
    answer = {"request_id": "r", "query": "q", "summary": SURROGATE, "answer": "a"}
    refused = api.post(
        "/api/report", content=json.dumps(answer), headers={"Content-Type": "application/json"}
    )
    assert_refused(refused, 422, "summary", "surrogate")


@pytest.fixture(scope="module")
def with_metadata(index: Index) -> str:
    """A second collection whose records carry metadata (a key and a nested one), in the served store."""
    name = "fuzz-metadata"
    docs = [
        Document(
            id=f"m{i}",
            text=f"Statins lower cholesterol, trial {i}.",
            metadata={"journal": j, "mesh": {"major": m}},
        )
        for i, (j, m) in enumerate([("BMJ", "Statins"), ("Lancet", "Stroke")])
    ]
    IngestPipeline(open_collection(name, index.settings, store=index.store, embedder=index.embedder)).ingest(
        docs
    )
    return name


def test_recorded_metadata_keys_can_be_filtered_and_others_are_named(
    api: httpx.Client, with_metadata: str
) -> None:
    for equals in ({"journal": "BMJ"}, {"metadata.journal": "BMJ"}, {"mesh.major": "Statins"}):
        found = send(api, "search", query="statins", collection=with_metadata, filters={"equals": equals})
        assert found.status_code == 200, found.text
        assert [h["doc_id"] for h in found.json()["hits"]] == ["m0"]
    body = assert_refused(
        send(api, "search", query="statins", collection=with_metadata, filters={"equals": {"jurnal": "BMJ"}}),
        422,
        "'jurnal'",
        "did you mean 'journal'",
    )
    assert "mesh.major" in body["message"]


def test_an_integer_on_a_text_field_matches_its_text(api: httpx.Client) -> None:
    found = send(api, "search", query="stroke", filters={"equals": {"pmid": 10000001}})
    assert found.status_code == 200, found.text
    assert [h["doc_id"] for h in found.json()["hits"]] == ["af-stroke-1"]
