"""Slow-model detection and output caps per stage on the real llama.cpp server (SmolLM2): the model's pace is
measured from its own replies; a part it cannot write in the time its stage has left is not sent and runs
offline, saying so; the prompt shows only the passages the time left can read; each stage's reply stops at its
output cap.

Bypasses are noticed: the pace must come from the model's replies (counted requests, measured replies), the
part refused for time must not reach the server (no new reply measured), and the capped reply is the model's.
"""

from __future__ import annotations

import pytest
from answer.conftest import HashingEmbedder, make_pack

from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.llm_generator import LLMGenerator
from deepcite.answer.pipeline import answer_budget, answer_context
from deepcite.answer.prompts import summary_messages
from deepcite.config import (
    AnswerBudgetSettings,
    AnswerSettings,
    LLMStageSettings,
    ResearchSettings,
    Settings,
)
from deepcite.errors import LLMError, LLMTimeoutError
from deepcite.llm.deadline import request_budget
from deepcite.llm.speed import ModelTooSlowError
from deepcite.research import llm_adapters
from llm_real.conftest import LlamaServer

pytestmark = pytest.mark.real_llm

TOKENS = 1600  # the prompt (passages trimmed to fit) plus the reply fit the test server's context


def writer_settings(llama: LlamaServer, **llm: object) -> Settings:
    return Settings(
        llm=llama.settings(**llm),
        answer=AnswerSettings(budget=AnswerBudgetSettings(tokens=TOKENS, request_s=1800.0)),
    )


async def test_a_part_the_model_cannot_write_in_time_runs_offline_and_says_why(
    llama: LlamaServer, make_client
) -> None:
    settings = writer_settings(llama)
    client = make_client()
    ctx = ResponseContext.from_pack(make_pack(), settings.answer, request_id="speed-0")
    writer = LLMGenerator(client, settings, ExtractiveGenerator(HashingEmbedder(), settings.answer))
    first = await writer.summary_draft(ctx)  # no pace known yet: the model is asked, and measured
    assert len(client.calls) == 1 and client.inner.speed.replies == 1
    assert first.writer == "llm" or first.reason is not None and first.reason.startswith("reply rejected")
    took = client.inner.speed.samples()[0][2]
    # a third of the time the same part took: the model cannot write it again in time
    with request_budget(took / 3) as budget:
        draft = await writer.summary_draft(ctx)
    assert draft.writer == "offline" and draft.reason is not None, draft
    assert draft.reason.startswith("model too slow: needs ~"), draft.reason
    assert client.inner.speed.replies == 1  # nothing more was sent to the server
    assert all(call.reply for call in client.calls)  # every request that went out was answered
    assert draft.text == writer.offline.summary(ctx)  # the offline writer's summary, in full
    degraded = budget.degraded()
    # a foreseen timeout: the response's degraded note says the request's LLM time, as for one that happened
    assert degraded is not None and degraded.parts == ["summary"]
    assert degraded.reason.startswith("LLM did not answer within ")


async def test_the_prompt_shows_only_the_passages_the_time_left_can_read(
    llama: LlamaServer, make_client
) -> None:
    settings = writer_settings(llama)
    client = make_client()
    ctx = ResponseContext.from_pack(make_pack(), settings.answer, request_id="speed-1")
    writer = LLMGenerator(client, settings, ExtractiveGenerator(HashingEmbedder(), settings.answer))
    await writer.summary_draft(ctx)  # measured on the model's own reply
    assert len(client.calls) == 1
    meter = client.inner.speed
    pace = meter.pace()
    assert pace is not None and pace.replies == 1

    def build(chunks):
        return summary_messages(ctx.query, chunks, 3, 5)

    chunks = ctx.selected_chunks
    everything = writer.fit_messages(chunks, build)  # no budget: every passage fits
    assert all(f"[{c.id}]" in everything[-1]["content"] for c in chunks)
    frame = client.prompt_tokens(build([]))
    one = client.prompt_tokens(build(chunks[:1])) - frame
    reply = meter.reply_tokens(writer.reply_cap())
    # time for the frame, about two passages and the reply, at the measured pace with its margin
    seconds = pace.seconds(frame + 2 * one, reply) * settings.llm.speed.margin
    with request_budget(seconds * 1.01):  # a hair more than that: about two passages, never all six
        fitted = writer.fit_messages(chunks, build)
    shown = [c.id for c in chunks if f"[{c.id}]" in fitted[-1]["content"]]
    assert 1 <= len(shown) < len(chunks), shown
    assert shown == [c.id for c in chunks[: len(shown)]]  # the best passages first
    # time for one passage and half the reply: one passage, and the reply capped at what the pace can write
    floor = settings.llm.stages.min_reply_tokens
    half = max(floor, reply // 2)
    seconds = pace.seconds(frame + one, meter.reply_tokens(half)) * settings.llm.speed.margin
    with request_budget(seconds * 1.01):
        fitted, cap = writer.fit_request(chunks, build)
    assert [c.id for c in chunks if f"[{c.id}]" in fitted[-1]["content"]] == [chunks[0].id]
    assert floor <= cap < writer.reply_cap(), cap
    short = pace.seconds(frame, meter.reply_tokens(floor)) * 0.5
    with request_budget(short), pytest.raises(ModelTooSlowError):
        writer.fit_request(
            chunks, build
        )  # not even one passage and the shortest reply: the part runs offline


def test_each_research_stage_stops_at_its_output_cap(llama: LlamaServer, make_client) -> None:
    """The plan's reply (a list the model tends to run on with) stops at llm.stages.plan_tokens."""
    client = make_client(max_output_tokens=400, stages=LLMStageSettings(plan_tokens=24))
    question = "How do statins and diet each lower cholesterol?"
    with pytest.raises(LLMError):  # a JSON plan cut at 24 tokens does not parse: the heuristic plan is used
        llm_adapters.noted("plan", lambda: llm_adapters.llm_aspects(client, question, ResearchSettings()))
    assert len(client.calls) == 1 and client.calls[0].reply  # the model was asked and answered
    prompt, reply, _ = client.inner.speed.samples()[-1]
    assert reply <= 24 and prompt > 24


def test_a_call_that_timed_out_keeps_the_rest_of_its_request_from_the_model(
    llama: LlamaServer, make_client
) -> None:
    """The model's first reply runs past its call deadline: the request's next call of that size is not sent (its
    part would time out too); the next request asks the model again."""
    client = make_client(call_deadline_s=0.3, max_retries=0)
    essay = [{"role": "user", "content": "Write a long essay on the history of medicine."}]
    with request_budget(1800.0) as budget:
        with pytest.raises(LLMTimeoutError):
            client.chat(essay, max_tokens=200)
        assert len(budget.timed_out) == 1 and client.inner.speed.replies == 0
        with pytest.raises(ModelTooSlowError):
            client.chat(essay, max_tokens=200)
    assert [bool(c.reply) for c in client.calls] == [False, False]
    quick = make_client()
    assert quick.chat([{"role": "user", "content": "Say hi."}], max_tokens=8).strip()


async def test_the_sub_answers_end_at_their_share_and_the_summary_is_still_the_models(
    llama: LlamaServer, make_client
) -> None:
    """With answer.budget.subanswer_share 0 the sub-answers get no LLM time (written offline, 'timeout'), and the
    summary and long answer are still asked of the model."""
    settings = writer_settings(llama)
    settings = settings.model_copy(
        update={"answer": settings.answer.tuned(budget={"subanswer_share": 0.0, "request_s": 1800.0})}
    )
    client = make_client()
    ctx = ResponseContext.from_pack(make_pack(), settings.answer, request_id="speed-2")
    writer = LLMGenerator(client, settings, ExtractiveGenerator(HashingEmbedder(), settings.answer))
    with answer_budget(settings.answer):
        answered = await answer_context(ctx, writer, settings.answer)
    written = {w.part: w for w in answered.written}
    subs = [w for part, w in written.items() if part.startswith("sub-answer")]
    assert subs and all(w.writer == "offline" and w.reason == "timeout" for w in subs), subs
    asked = [c.messages[-1]["content"] for c in client.calls]
    assert not any("Sub-question:" in a for a in asked)  # no sub-answer was sent
    assert any("quick summary" in a for a in asked) and any("detailed answer" in a for a in asked)
    assert written["summary"].reason != "timeout" and written["long answer"].reason != "timeout"
