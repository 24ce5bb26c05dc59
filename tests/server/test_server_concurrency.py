"""Concurrent requests: each gets its own context, id and checked citations; the store stays within its cap."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from server.conftest import ADMIN, LiveServer, assert_citations_resolve, headers

pytestmark = pytest.mark.slow

QUESTIONS = [
    "Does atrial fibrillation increase stroke risk?",
    "Do statins cause muscle pain?",
    "How do PCSK9 inhibitors lower LDL cholesterol?",
    "Is metformin the first-line drug for type 2 diabetes?",
    "Do SGLT2 inhibitors reduce heart failure hospitalisation?",
    "Does lowering blood pressure prevent stroke?",
    "Should older adults who fall take anticoagulants?",
    "Does vitamin D prevent fractures?",
]


async def run_all(base_url: str) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=base_url, headers=headers(ADMIN), timeout=600) as c:
        return await asyncio.gather(
            *(c.post("/api/unified-search", json={"query": q, "max_hops": 1}) for q in QUESTIONS)
        )


def test_eight_concurrent_searches_each_get_their_own_answer(live: LiveServer) -> None:
    responses = asyncio.run(run_all(live.base_url))
    bodies: list[dict[str, Any]] = [r.json() for r in responses]
    assert [r.status_code for r in responses] == [200] * len(QUESTIONS)
    assert len({b["request_id"] for b in bodies}) == len(QUESTIONS)
    for question, body in zip(QUESTIONS, bodies, strict=True):
        assert body["query"] == question
        assert_citations_resolve(body)
    # each stored context is the one its own request answered from
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=120) as c:
        for body in bodies:
            again = c.post("/api/quick-summary", json={"request_id": body["request_id"]}).json()
            assert again["query"] == body["query"] and again["text"] == body["summary"]
        health = c.get("/healthz").json()
    assert len(QUESTIONS) <= health["contexts"] <= health["context_cap"]
