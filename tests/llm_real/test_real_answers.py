"""Answers written by the real llama.cpp server (SmolLM2) through the real deepcite server: the research steps,
sub-answers, summary and long answer, the LLM citation judge, streaming, the time budget; and the citation
check catching what such a small model writes (uncited or unsupported sentences become "Unknown based on
provided sources.", ids no passage has are removed).

The deepcite app runs under uvicorn on 127.0.0.1 over the server tests' fixture index (tests/server/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from answer.conftest import HashingEmbedder, make_pack
from server.conftest import Index, LiveServer, assert_citations_resolve
from server.test_server_stream import assert_event_order, read_events

from deepcite.answer.citations import check_citations
from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.factory import build_support
from deepcite.answer.llm_generator import LLMGenerator
from deepcite.answer.pipeline import answer_context
from deepcite.answer.prompts import UNKNOWN
from deepcite.answer.support import LLMSupportJudge
from deepcite.config import AnswerBudgetSettings, AnswerSettings, CitationSettings, Settings
from deepcite.server.app import create_app
from llm_real.conftest import LlamaServer

pytestmark = pytest.mark.real_llm

QUESTION = "Does atrial fibrillation raise stroke risk, and how is it prevented?"
# the prompt (passages trimmed to fit) plus the reply must fit the test server's context; the LLM citation judge
# (a call per cited sentence) is tested on its own below
TOKENS = 1600


def app_settings(index: Index, llama: LlamaServer, **budget: Any) -> Settings:
    # a generous time budget: a busy machine slows the model, and the model's parts are what is tested
    budget = {"tokens": TOKENS, "request_s": 1800.0, **budget}
    return index.settings.model_copy(
        update={
            "llm": llama.settings(),
            "answer": index.settings.answer.model_copy(update={"budget": AnswerBudgetSettings(**budget)}),
            "research": index.settings.research.tuned(stopping={"min_hops": 1, "max_hops": 1}),
            "api_keys": "",
        }
    )


@pytest.fixture(scope="module")
def llm_live(index: Index, llama: LlamaServer) -> Iterator[LiveServer]:
    app = create_app(app_settings(index, llama), store=index.store, embedder=index.embedder)
    with LiveServer(app) as server:
        yield server


def every_sentence_cited_or_unknown(text: str, ids: set[int]) -> None:
    """What the citation check guarantees of a text it returned: checked again, nothing is left to repair
    (each factual sentence cites passages of the context, or is the unknown phrase)."""
    _, again = check_citations(text, sorted(ids), "replace")
    assert again.repaired == 0 and again.invalid_ids == 0, text


def test_the_model_answers_and_every_sentence_it_keeps_is_cited(llm_live: LiveServer) -> None:
    with httpx.Client(base_url=llm_live.base_url, timeout=600) as c:
        response = c.post("/api/unified-search", json={"query": QUESTION})
        assert response.status_code == 200, response.text
        body = response.json()
        regenerated = c.post("/api/detailed-answer", json={"request_id": body["request_id"]})
    # the model wrote the parts; any it did not was for an unfit reply, never a refused request or a timeout
    assert body["degraded"] is None or "unusable reply" in body["degraded"]["reason"], body["degraded"]
    assert_citations_resolve(body)
    ids = {c["id"] for c in body["citations"]}
    for text in [body["summary"], body["answer"], *(s["answer"] for s in body["subanswers"])]:
        every_sentence_cited_or_unknown(text, ids)
    check = body["citation_check"]
    assert check["sentences"] == check["cited"] + check["repaired"]
    assert regenerated.status_code == 200, regenerated.text
    every_sentence_cited_or_unknown(regenerated.json()["text"], ids)


def test_the_stream_sends_hops_then_the_models_summary_and_answer(llm_live: LiveServer) -> None:
    with (
        httpx.Client(base_url=llm_live.base_url, timeout=600) as c,
        c.stream("GET", "/api/unified-search/stream", params={"query": QUESTION}) as response,
    ):
        assert response.status_code == 200
        events = read_events(response)
    done = assert_event_order(events)
    assert done["degraded"] is None or "unusable reply" in done["degraded"]["reason"], done["degraded"]
    assert_citations_resolve(done)


def test_a_spent_budget_answers_offline_and_says_so(index: Index, llama: LlamaServer) -> None:
    """The LLM gets 0.1 s of the question's time (budget.request_s less budget.offline_reserve_s): research alone takes
    longer, so every LLM call ends at once and the offline writer answers, as the response says."""
    settings = app_settings(index, llama, request_s=30.1, offline_reserve_s=30.0)
    app = create_app(settings, store=index.store, embedder=index.embedder)
    with LiveServer(app) as live, httpx.Client(base_url=live.base_url, timeout=600) as c:
        body = c.post("/api/unified-search", json={"query": QUESTION}).json()
    assert body["degraded"]["reason"] == "LLM did not answer within 0.1 s; offline answer"
    assert {"summary", "long answer"} <= set(body["degraded"]["parts"])
    assert body["summary"] and body["summary"] != UNKNOWN
    assert_citations_resolve(body)


async def test_uncited_or_unsupported_model_text_is_replaced_by_the_unknown_phrase(
    make_client, minilm
) -> None:
    """The raw summary of the model, and what the check makes of it: nothing it kept is uncited, and each id it
    kept supports its sentence (MiniLM scores, then the model's own verdict as judge)."""
    settings = Settings(
        answer=AnswerSettings(
            budget=AnswerBudgetSettings(tokens=TOKENS, request_s=1800.0),
            citations=CitationSettings(judge="llm"),
        )
    )
    client = make_client()
    ctx = ResponseContext.from_pack(make_pack(), settings.answer, request_id="real-1")
    writer = LLMGenerator(client, settings, ExtractiveGenerator(HashingEmbedder(), settings.answer))
    raw = await writer.summary(ctx)
    support = build_support(settings, minilm, client)  # MiniLM scores, then the model as judge
    texts = {c.id: c.text for c in ctx.selected_chunks}
    checked, check = check_citations(
        raw, list(texts), "replace", supports=lambda sentence, i: support.supports(sentence, texts[i])
    )
    every_sentence_cited_or_unknown(checked, set(texts))
    assert check.sentences == check.cited + check.repaired
    if check.repaired:
        assert UNKNOWN in checked
    answered = await answer_context(ctx, writer, settings.answer, support)
    every_sentence_cited_or_unknown(answered.summary, set(texts))
    every_sentence_cited_or_unknown(answered.answer, set(texts))


def test_the_citation_judge_gives_a_verdict(make_client) -> None:
    judge = LLMSupportJudge(make_client())
    verdict = judge.judge(
        "Warfarin lowers the risk of stroke.",
        "In patients with atrial fibrillation, warfarin reduced the risk of stroke by two thirds.",
    )
    assert verdict is not None  # parsed through the schema mode the server supports, not a failed call
