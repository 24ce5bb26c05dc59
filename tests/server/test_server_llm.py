"""The LLM-backed answer path through the real server, against the stand-in for a remote LLM.

No real LLM runs here: tests/llm/fake_openai_server.py (an OpenAI-compatible HTTP server on 127.0.0.1)
stands in for one. It answers the research engine's JSON requests with something unusable (so the
heuristic fallbacks run) and every answer prompt with text that cites a real passage, an id no passage
has, and a sentence with no citation: the citation check must repair all of it before a client sees it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from llm.fake_openai_server import FakeOpenAIServer

from deepcite.answer.prompts import SYSTEM_PROMPT, UNKNOWN
from server.conftest import ADMIN, Index, LiveServer, assert_citations_resolve, headers, llm_settings

pytestmark = pytest.mark.slow

LLM_ANSWER = (
    "Atrial fibrillation raises the risk of ischaemic stroke [1]. "
    "Warfarin cures atrial fibrillation in every patient [99]. "
    "Most cardiologists agree on this."
)


def respond(body: dict[str, Any]) -> str:
    if body.get("response_format"):
        return "not the JSON you asked for"
    return LLM_ANSWER


@pytest.fixture(scope="module")
def llm_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(respond) as server:
        yield server


@pytest.fixture(scope="module")
def llm_live(index: Index, llm_server: FakeOpenAIServer) -> Iterator[LiveServer]:
    from deepcite.server.app import create_app

    settings = index.settings.model_copy(update={"llm": llm_settings(llm_server.base_url)})
    with LiveServer(create_app(settings, store=index.store, embedder=index.embedder)) as server:
        yield server


def test_llm_answers_are_grounded_and_citation_checked(
    llm_live: LiveServer, llm_server: FakeOpenAIServer
) -> None:
    with httpx.Client(base_url=llm_live.base_url, headers=headers(ADMIN), timeout=300) as c:
        response = c.post(
            "/api/unified-search", json={"query": "Does atrial fibrillation raise stroke risk?"}
        )
        assert response.status_code == 200, response.text
        body = response.json()
        regenerated = c.post("/api/detailed-answer", json={"request_id": body["request_id"]}).json()

    answer_prompts = [r for r in llm_server.requests if r["messages"][0]["content"] == SYSTEM_PROMPT]
    assert len(answer_prompts) >= 3  # sub-answers, summary, long answer, regeneration
    assert all("Passages:\n[1] " in r["messages"][1]["content"] for r in answer_prompts)
    assert_citations_resolve(body)
    # the model's parts keep one sentence in three after the citation check ([99] invented, one uncited):
    # the grounding guard ships the offline writer's part instead, and says so per part
    written = {w["part"]: w for w in body["written"]}
    assert written["summary"]["writer"] == "offline" and written["summary"]["reason"]
    assert written["long answer"]["writer"] == "offline"
    assert (
        "[99]" not in str(body)
        and "Most cardiologists" not in str(body)
        and "Warfarin cures" not in str(body)
    )
    assert body["summary"] and UNKNOWN not in body["summary"]  # the offline writer cites the evidence
    assert "[99]" not in regenerated["text"] and regenerated["written"]["writer"] == "offline"
