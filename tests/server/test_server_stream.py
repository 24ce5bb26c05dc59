"""Server-Sent Events: one hop event per research hop, then summary, answer and done, in that order."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from deepcite.server.sse import StreamEvent
from server.conftest import ADMIN, LiveServer, assert_citations_resolve, headers

pytestmark = pytest.mark.slow


def read_events(response: httpx.Response) -> list[tuple[str, Any]]:
    """Parse an SSE body into (event, JSON data) pairs."""
    events: list[tuple[str, Any]] = []
    name, data = "message", []
    for line in response.iter_lines():
        if not line:
            if data:
                events.append((name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
    return events


def assert_event_order(events: list[tuple[str, Any]]) -> dict[str, Any]:
    for name, data in events:  # every event is the published record of its name
        assert StreamEvent.model_validate({"event": name, "data": data}).root.event == name
    names = [name for name, _ in events]
    hops = names.count("hop")
    assert hops >= 1
    assert names == ["hop"] * hops + ["summary", "answer", "done"], names
    done = events[-1][1]
    assert [data["hop"] for name, data in events if name == "hop"] == list(range(1, hops + 1))
    assert len(done["retrieval_report"]) == hops  # one hop event per research hop
    first_hop = events[0][1]
    assert {"subquestion", "coverage_percentage", "evidence_total", "decision"} <= set(first_hop)
    assert {"aspect", "coverage_score"} <= set(first_hop["coverage"]["aspects"][0])
    summary, answer = events[-3][1], events[-2][1]
    assert summary["summary"] == done["summary"] and answer["answer"] == done["answer"]
    assert summary["insufficient"] is answer["insufficient"] is done["insufficient"] is False
    assert summary["request_id"] == answer["request_id"] == done["request_id"]
    assert_citations_resolve(done)
    return done


def test_get_stream_sends_hops_then_summary_answer_done(live: LiveServer) -> None:
    params = {"query": "How is atrial fibrillation treated to prevent stroke?", "max_hops": 2}
    with (
        httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=300) as c,
        c.stream("GET", "/api/unified-search/stream", params=params) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = read_events(response)
    done = assert_event_order(events)
    assert done["success"] is True and done["citations"]


def test_post_with_stream_true_streams_the_same_events(live: LiveServer) -> None:
    body = {"query": "Do statins cause muscle pain?", "stream": True, "max_hops": 1}
    with (
        httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=300) as c,
        c.stream("POST", "/api/unified-search", json=body) as response,
    ):
        assert response.status_code == 200
        events = read_events(response)
    done = assert_event_order(events)
    assert any("statin" in c["title"].lower() for c in done["citations"])


def test_stream_input_errors_are_http_errors_before_the_stream(live: LiveServer) -> None:
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=60) as c:
        unknown = c.get("/api/unified-search/stream", params={"query": "stroke", "collection": "nope"})
        assert unknown.status_code == 404 and "nope" in unknown.json()["message"]
        missing = c.get("/api/unified-search/stream")
        assert missing.status_code == 422 and missing.json()["detail"][0]["field"] == "query"
        no_token = httpx.get(f"{live.base_url}/api/unified-search/stream", params={"query": "stroke"})
        assert no_token.status_code == 401
