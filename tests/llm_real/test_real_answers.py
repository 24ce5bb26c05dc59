"""Answers written by the real llama.cpp server (SmolLM2) through the real deepcite server: the research steps,
sub-answers, summary and long answer, the LLM citation judge, streaming, the time budget; and the citation
check catching what such a small model writes (uncited or unsupported sentences become "Unknown based on
provided sources.", ids no passage has are removed).

Bypasses are noticed: the writer's draft must be the model's reply itself (counted requests), every answer part
of a response must say it was written by the model or refused by a guard on the model's real reply (never an
offline part without a reason), and each answer guard is shown firing on what SmolLM2 writes: its summary
keeps too few citations (grounding), its long answer breaks the structure asked for, and the citation judge
fails its control pairs.

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
from deepcite.answer.pipeline import answer_budget, answer_context
from deepcite.answer.prompts import UNKNOWN
from deepcite.answer.support import CONTROL_PAIRS, JUDGE_PART, LLMSupportJudge
from deepcite.config import AnswerBudgetSettings, AnswerSettings, LLMStageSettings, Settings
from deepcite.config.answer import AnswerGuardSettings
from deepcite.llm.json import extract_json
from deepcite.server.app import create_app
from llm_real.conftest import LlamaServer

pytestmark = pytest.mark.real_llm

QUESTION = "Does atrial fibrillation raise stroke risk, and how is it prevented?"
# the prompt (passages trimmed to fit) plus the reply must fit the test server's context; the LLM citation judge
# (a call per cited sentence) is tested on its own below
TOKENS = 1600
NO_EVIDENCE = "no evidence for the sub-question"  # a sub-question with no evidence of its own: nothing to ask


def app_settings(index: Index, llama: LlamaServer, **budget: Any) -> Settings:
    # a generous time budget: a busy machine slows the model, and the model's parts are what is tested; the LLM
    # citation judge is on, to show its refusal in the response
    budget = {"tokens": TOKENS, "request_s": 1800.0, **budget}
    answer = index.settings.answer.model_copy(
        update={
            "budget": AnswerBudgetSettings(**budget),
            "citations": index.settings.answer.citations.model_copy(update={"judge": "llm"}),
        }
    )
    return index.settings.model_copy(
        update={
            "llm": llama.settings(),
            "answer": answer,
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


def assert_model_wrote_or_a_guard_refused(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every answer part of ``body`` was written by the model, or the model's real reply was refused by a guard
    (never a refused request, a timeout, or an offline part with no reason); the citation judge was refused by
    its control pairs. Returns the parts by name."""
    written = {w["part"]: w for w in body["written"]}
    answer_parts = [p for p in written if p in ("summary", "long answer") or p.startswith("sub-answer: ")]
    assert {"summary", "long answer"} <= set(answer_parts), written
    for part in answer_parts:
        w = written[part]
        reason = w["reason"] or ""
        assert w["writer"] == "llm" or reason.startswith("reply rejected: ") or reason == NO_EVIDENCE, w
    assert written["plan"]["writer"] == "llm" or written["plan"]["reason"] == "unusable reply", written[
        "plan"
    ]
    judge = written[JUDGE_PART]
    assert judge["writer"] == "offline" and judge["reason"].startswith("failed a control pair"), judge
    return written


def test_the_model_answers_and_every_sentence_it_keeps_is_cited(llm_live: LiveServer) -> None:
    with httpx.Client(base_url=llm_live.base_url, timeout=600) as c:
        response = c.post("/api/unified-search", json={"query": QUESTION})
        assert response.status_code == 200, response.text
        body = response.json()
        regenerated = c.post("/api/detailed-answer", json={"request_id": body["request_id"]})
    assert_model_wrote_or_a_guard_refused(body)
    if body["degraded"] is not None:  # only guards on real replies, never a refused request or a timeout
        assert body["degraded"]["reason"].startswith("LLM failed (reply rejected: "), body["degraded"]
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
    assert_model_wrote_or_a_guard_refused(done)
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


def writer_settings(**guards: Any) -> Settings:
    return Settings(
        answer=AnswerSettings(
            budget=AnswerBudgetSettings(tokens=TOKENS, request_s=1800.0),
            guards=AnswerGuardSettings(**guards),
        )
    )


async def test_the_writers_draft_is_the_models_reply(make_client) -> None:
    """With the guards off, each part's draft is exactly what the model sent, marked as the model's."""
    settings = writer_settings(enabled=False)
    client = make_client()
    ctx = ResponseContext.from_pack(make_pack(), settings.answer, request_id="real-0")
    writer = LLMGenerator(client, settings, ExtractiveGenerator(HashingEmbedder(), settings.answer))
    for write in (writer.summary_draft, writer.long_answer_draft):
        draft = await write(ctx)
        assert draft.writer == "llm" and draft.reason is None
        assert draft.text == client.calls[-1].reply
    assert len(client.calls) == 2


async def test_uncited_or_unsupported_model_text_is_replaced_by_the_unknown_phrase(
    make_client, minilm
) -> None:
    """The raw summary of the model, and what the check makes of it: nothing it kept is uncited, and each id it
    kept supports its sentence (MiniLM scores)."""
    settings = writer_settings(enabled=False)
    client = make_client()
    ctx = ResponseContext.from_pack(make_pack(), settings.answer, request_id="real-1")
    writer = LLMGenerator(client, settings, ExtractiveGenerator(HashingEmbedder(), settings.answer))
    raw = await writer.summary(ctx)
    assert raw == client.calls[-1].reply
    support = build_support(settings, minilm, client)
    texts = {c.id: c.text for c in ctx.selected_chunks}
    checked, check = check_citations(
        raw, list(texts), "replace", supports=lambda sentence, i: support.supports(sentence, texts[i])
    )
    every_sentence_cited_or_unknown(checked, set(texts))
    assert check.sentences == check.cited + check.repaired
    if check.repaired:
        assert UNKNOWN in checked


async def test_the_grounding_guard_ships_the_offline_summary_over_the_models_uncited_one(
    make_client, minilm
) -> None:
    """SmolLM2's summary keeps fewer than half its sentences cited after the check: the offline writer's summary,
    which cites the evidence, is shipped instead, and the response says why."""
    settings = writer_settings()
    client = make_client()
    ctx = ResponseContext.from_pack(make_pack(), settings.answer, request_id="real-2")
    offline = ExtractiveGenerator(minilm, settings.answer)
    writer = LLMGenerator(client, settings, offline)
    support = build_support(settings, minilm)
    with answer_budget(settings.answer):
        answered = await answer_context(ctx, writer, settings.answer, support)
    summary_calls = [c for c in client.calls if "quick summary" in c.messages[-1]["content"]]
    assert len(summary_calls) == 1  # the model was asked; its reply was refused
    written = {w.part: w for w in answered.written}
    assert written["summary"].writer == "offline", written["summary"]
    assert written["summary"].reason.startswith("reply rejected: "), written["summary"]
    assert "kept a citation" in written["summary"].reason
    assert answered.summary != summary_calls[0].reply and UNKNOWN not in answered.summary
    assert answered.citation_check.cited >= 1
    every_sentence_cited_or_unknown(answered.summary, {c.id for c in ctx.selected_chunks})


async def test_the_structure_guard_refuses_the_models_long_answer(make_client, minilm) -> None:
    """Asked for one section per aspect, SmolLM2's long answer breaks the structure (a repeated or empty section,
    a repeated line, or far more than it was asked for): the offline writer's sections are shipped. The reply may
    run to the long answer's default output cap (llm.stages.long_answer_tokens), as a user's would."""
    settings = writer_settings()
    client = make_client(max_output_tokens=LLMStageSettings().long_answer_tokens)
    ctx = ResponseContext.from_pack(make_pack(), settings.answer, request_id="real-3")
    writer = LLMGenerator(client, settings, ExtractiveGenerator(minilm, settings.answer))
    draft = await writer.long_answer_draft(ctx)
    assert len(client.calls) == 1
    assert draft.writer == "offline" and draft.reason is not None, draft
    assert draft.reason.startswith("reply rejected: "), draft.reason
    assert any(w in draft.reason for w in ("repeated", "empty", "sentences where", "characters where"))
    assert draft.text != client.calls[0].reply


def test_the_citation_judge_fails_its_control_pairs_and_is_not_used(make_client) -> None:
    client = make_client()
    judge = LLMSupportJudge(client)
    standing = judge.standing()
    assert standing.writer == "offline" and standing.reason.startswith("failed a control pair"), standing
    asked = len(client.calls)
    assert 1 <= asked <= len(CONTROL_PAIRS)  # it was asked, and stopped at the first wrong answer
    assert all(isinstance(extract_json(c.reply)["supported"], bool) for c in client.calls)
    verdict = judge.judge(
        "Warfarin lowers the risk of stroke.",
        "In patients with atrial fibrillation, warfarin reduced the risk of stroke by two thirds.",
    )
    assert verdict is None and len(client.calls) == asked  # refused: the scores decide, nothing more is asked
