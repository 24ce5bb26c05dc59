"""LLMGenerator against the stand-in for a remote LLM (tests/llm/fake_openai_server.py on 127.0.0.1)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from llm.fake_openai_server import Fail, FakeOpenAIServer, Hang, Reply

from answer.conftest import QUESTION, SQ_DRUGS, HashingEmbedder, make_pack
from deepcite.answer.citations import check_citations, unresolved_citations
from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.factory import build_generator
from deepcite.answer.generators import AsyncGenerator
from deepcite.answer.llm_generator import LLMGenerator
from deepcite.answer.prompts import (
    PASSAGE_SEPARATOR,
    SYSTEM_PROMPT,
    UNKNOWN,
    format_passage,
    summary_messages,
)
from deepcite.config import AnswerSettings, LLMSettings, LLMStageSettings, Settings
from deepcite.errors import InsufficientEvidenceError
from deepcite.llm.budget import estimate_messages_tokens, estimate_tokens
from deepcite.llm.deadline import request_budget
from deepcite.llm.openai_client import OpenAICompatClient
from deepcite.models import EvidencePack

LLM_ANSWER = (
    "Atrial fibrillation raises stroke risk fivefold [1]. Warfarin cuts it by two thirds [2][42]. Cats purr."
)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """The stand-in for a remote LLM."""
    with FakeOpenAIServer(responder=lambda body: LLM_ANSWER) as srv:
        yield srv


def make_settings(server: FakeOpenAIServer, **budget: Any) -> Settings:
    caps = LLMStageSettings(summary_tokens=300, long_answer_tokens=300, subanswer_tokens=300)
    llm = LLMSettings(
        base_url=server.base_url, model="stand-in", max_retries=0, max_output_tokens=300, stages=caps
    )
    return Settings(llm=llm, answer=AnswerSettings().tuned(budget=budget))


def make_gen(server: FakeOpenAIServer, settings: Settings) -> LLMGenerator:
    fallback = ExtractiveGenerator(HashingEmbedder(), settings.answer)
    return LLMGenerator(OpenAICompatClient(settings.llm), settings, fallback)


def user_prompt(server: FakeOpenAIServer, index: int = -1) -> str:
    return server.requests[index]["messages"][-1]["content"]


async def test_summary_sends_the_grounded_prompt(server: FakeOpenAIServer, ctx: ResponseContext) -> None:
    settings = make_settings(server)
    gen = make_gen(server, settings)
    assert isinstance(gen, AsyncGenerator)
    text = await gen.summary(ctx)
    assert text == LLM_ANSWER
    body = server.requests[0]
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert body["max_tokens"] == 300
    for chunk in ctx.selected_chunks:
        assert format_passage(chunk) in user_prompt(server)
    clean, check = check_citations(text, [c.id for c in ctx.selected_chunks])
    expected = "Atrial fibrillation raises stroke risk fivefold [1]. Warfarin cuts it by two thirds [2]."
    assert clean == f"{expected} {UNKNOWN}"
    assert (check.invalid_ids, check.repaired) == (1, 1)
    assert unresolved_citations(clean, [c.id for c in ctx.selected_chunks]) == []


async def test_long_answer_prompt_has_aspect_headings(server: FakeOpenAIServer, ctx: ResponseContext) -> None:
    await make_gen(server, make_settings(server)).long_answer(ctx)
    prompt = user_prompt(server)
    assert "## stroke risk in atrial fibrillation\n## anticoagulant treatment\n## bleeding harms" in prompt


async def test_subanswer_shows_only_its_evidence(server: FakeOpenAIServer, ctx: ResponseContext) -> None:
    await make_gen(server, make_settings(server)).subanswer(ctx, SQ_DRUGS)
    prompt = user_prompt(server)
    assert QUESTION in prompt and SQ_DRUGS in prompt
    shown = {c.id for c in ctx.all_chunks() if format_passage(c) in prompt}
    assert shown == {2, 3}


def budget_for(ctx: ResponseContext, passages: int, output_tokens: int = 300) -> int:
    """The token budget that fits exactly ``passages`` leading passages in the summary prompt."""
    fixed = estimate_messages_tokens(summary_messages(ctx.query, [], 3, 5), 4.0)
    shown = estimate_tokens(
        PASSAGE_SEPARATOR.join(format_passage(c) for c in ctx.selected_chunks[:passages]), 4.0
    )
    return output_tokens + fixed + shown


async def test_evidence_is_trimmed_to_the_token_budget(
    server: FakeOpenAIServer, ctx: ResponseContext
) -> None:
    gen = make_gen(server, make_settings(server, tokens=budget_for(ctx, 2) + 1))
    await gen.summary(ctx)
    prompt = user_prompt(server)
    shown = [c.id for c in ctx.selected_chunks if format_passage(c) in prompt]
    assert shown == [1, 2]  # the best-scored passages are the ones kept


async def test_budget_too_small_for_one_passage_falls_back(
    server: FakeOpenAIServer, ctx: ResponseContext
) -> None:
    settings = make_settings(server, tokens=budget_for(ctx, 1) - 1)
    text = await make_gen(server, settings).summary(ctx)
    assert server.requests == []
    assert text == ExtractiveGenerator(HashingEmbedder(), settings.answer).summary(ctx)


async def test_llm_failure_falls_back_to_extractive(server: FakeOpenAIServer, ctx: ResponseContext) -> None:
    server.script(Fail(503), Fail(503), Fail(503))
    settings = make_settings(server)
    gen = make_gen(server, settings)
    extractive = ExtractiveGenerator(HashingEmbedder(), settings.answer)
    assert await gen.summary(ctx) == extractive.summary(ctx)
    assert await gen.long_answer(ctx) == extractive.long_answer(ctx)
    assert await gen.subanswer(ctx, SQ_DRUGS) == extractive.subanswer(ctx, SQ_DRUGS)
    text = await gen.summary(ctx)  # script exhausted: the LLM answers again
    assert text == LLM_ANSWER


async def test_empty_context_never_reaches_the_llm(
    server: FakeOpenAIServer, settings: AnswerSettings
) -> None:
    ctx = ResponseContext.from_pack(EvidencePack(question=QUESTION, subquery_evidence={"q": []}), settings)
    gen = make_gen(server, make_settings(server))
    for call in (gen.summary(ctx), gen.long_answer(ctx), gen.subanswer(ctx, "q")):
        with pytest.raises(InsufficientEvidenceError):
            await call
    assert server.requests == []


async def test_subquestion_without_evidence_is_unknown_without_a_call(server: FakeOpenAIServer) -> None:
    ctx = ResponseContext.from_pack(make_pack(subquestions={"none": ()}), AnswerSettings())
    assert await make_gen(server, make_settings(server)).subanswer(ctx, "none") == UNKNOWN
    assert server.requests == []


async def test_a_slow_llm_still_yields_an_answer(server: FakeOpenAIServer, ctx: ResponseContext) -> None:
    server.script(Reply("late", delay_s=1.5))
    settings = make_settings(server)
    settings.llm.timeout_s = 0.3
    text = await make_gen(server, settings).summary(ctx)
    assert text == ExtractiveGenerator(HashingEmbedder(), settings.answer).summary(ctx)


def test_build_generator_picks_by_llm(server: FakeOpenAIServer) -> None:
    settings = make_settings(server)
    assert isinstance(build_generator(settings, HashingEmbedder(), None), ExtractiveGenerator)
    assert isinstance(
        build_generator(settings, HashingEmbedder(), OpenAICompatClient(settings.llm)), LLMGenerator
    )


async def test_a_part_that_waits_past_its_deadline_for_a_slot_falls_back(
    server: FakeOpenAIServer, ctx: ResponseContext
) -> None:
    # one slot, held by a summary the server never answers: the long answer waits for the slot until the
    # request's LLM time is spent, then both parts are written offline
    server.script(Hang(60.0))
    settings = make_settings(server)
    settings.llm.max_concurrent_calls = 1
    gen = make_gen(server, settings)
    extractive = ExtractiveGenerator(HashingEmbedder(), settings.answer)
    with request_budget(2.0) as budget:
        summary, long_answer = await asyncio.gather(gen.summary(ctx), gen.long_answer(ctx))
    assert summary == extractive.summary(ctx)
    assert long_answer == extractive.long_answer(ctx)
    assert len(server.requests) == 1  # the long answer never reached the server
    degraded = budget.degraded()
    assert degraded is not None and set(degraded.parts) == {"summary", "long answer"}
