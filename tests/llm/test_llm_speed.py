"""Slow-model detection (llm/speed.py) and output caps per stage: the meter's fit, and the client not sending a
call its stage cannot finish (the stand-in server counts the requests it got)."""

from __future__ import annotations

import asyncio

import pytest

from deepcite.config import LLMSpeedSettings, LLMStageSettings
from deepcite.errors import LLMTimeoutError
from deepcite.llm.deadline import in_stage, request_budget
from deepcite.llm.speed import ModelTooSlowError, SpeedMeter
from llm.fake_openai_server import Hang, Reply


def test_the_fit_tells_reading_from_writing_once_replies_differ() -> None:
    meter = SpeedMeter(LLMSpeedSettings(min_fit_replies=2))
    assert meter.pace() is None and meter.predict(100, 10) is None  # nothing measured: no prediction
    # reads 100 tokens/s, writes 10 tokens/s
    meter.record(1000, 10, 1000 / 100 + 10 / 10)
    meter.record(100, 100, 100 / 100 + 100 / 10)
    pace = meter.pace()
    assert pace is not None
    assert pace.read_tps == pytest.approx(100) and pace.write_tps == pytest.approx(10)
    assert meter.predict(500, 50) == pytest.approx(10.0)


def test_one_reply_is_split_by_the_read_write_ratio() -> None:
    meter = SpeedMeter(LLMSpeedSettings(read_write_ratio=10.0))
    meter.record(1000, 100, 20.0)  # 1000/10 + 100 = 200 write-token equivalents in 20 s
    pace = meter.pace()
    assert pace is not None and pace.write_s == pytest.approx(0.1) and pace.read_s == pytest.approx(0.01)


def test_a_call_that_cannot_finish_in_the_time_left_is_refused_with_its_prediction() -> None:
    meter = SpeedMeter(LLMSpeedSettings(margin=1.0, min_fit_replies=2))
    meter.record(1000, 10, 11.0)
    meter.record(
        100, 100, 11.0
    )  # reads 100/s, writes 10/s; no cap recorded: replies planned at the whole cap
    meter.check(100, 10, left_s=5.0)  # 1 + 1 s fits
    with pytest.raises(ModelTooSlowError) as caught:
        meter.check(1000, 200, left_s=15.0)  # 10 + 20 s does not
    assert caught.value.reason.startswith("model too slow: needs ~30 s, 15 s left")


def test_a_fit_that_reads_slower_than_it_writes_is_not_trusted() -> None:
    meter = SpeedMeter(LLMSpeedSettings(min_fit_replies=2, read_write_ratio=10.0))
    meter.record(1000, 10, 100.0)  # a long prompt slow (load), a long reply fast (a cached prompt)
    meter.record(100, 100, 2.0)
    pace = meter.pace()
    assert pace is not None and pace.read_s == pytest.approx(pace.write_s / 10)


def test_replies_that_stop_early_are_planned_at_the_share_of_the_cap_they_used() -> None:
    meter = SpeedMeter(LLMSpeedSettings())
    meter.record(100, 25, 3.0, cap=100)
    meter.record(100, 50, 6.0, cap=200)
    assert meter.reply_tokens(400) == 100  # the largest share measured: a quarter of the cap


def test_the_prompt_the_time_left_can_read() -> None:
    meter = SpeedMeter(LLMSpeedSettings(margin=1.0, min_fit_replies=2))
    meter.record(1000, 10, 11.0)
    meter.record(100, 100, 11.0)
    assert meter.prompt_tokens_within(12.0, 20) == pytest.approx(1000, abs=2)  # 12 s less 2 s of reply
    assert meter.prompt_tokens_within(1.0, 20) == 0


def test_the_cap_the_time_left_can_write() -> None:
    meter = SpeedMeter(LLMSpeedSettings(margin=1.0, min_fit_replies=2))
    meter.record(1000, 10, 11.0, cap=10)
    meter.record(100, 100, 11.0, cap=100)  # reads 100/s, writes 10/s, replies run to their caps
    assert meter.cap_within(12.0, 200) == 100  # 2 s reading, 10 s writing
    assert meter.cap_within(1.0, 200) == 0


def test_a_slow_model_is_not_sent_a_call_its_stage_cannot_finish(make_client, llm_server) -> None:
    llm_server.script(Reply("x " * 200, delay_s=1.0))
    client = make_client(max_output_tokens=400)
    client.chat([{"role": "user", "content": "first"}])  # measured: about 200 tokens in 1 s or more
    assert client.speed.replies == 1
    with request_budget(0.5), pytest.raises(ModelTooSlowError):
        client.chat([{"role": "user", "content": "second"}])
    assert len(llm_server.requests) == 1  # the second call was never sent


def test_each_stage_caps_its_reply(make_client, llm_server) -> None:
    client = make_client(max_output_tokens=1000, stages=LLMStageSettings(plan_tokens=50, summary_tokens=70))
    with in_stage("plan"):
        client.chat([{"role": "user", "content": "plan"}])
    with in_stage("summary"):
        client.chat([{"role": "user", "content": "summary"}], max_tokens=500)
    with in_stage("sub-answer: what?"):
        client.chat([{"role": "user", "content": "sub"}])
    client.chat([{"role": "user", "content": "other"}])
    caps = [r["max_tokens"] for r in llm_server.requests]
    assert caps == [50, 70, LLMStageSettings().subanswer_tokens, 1000]


def test_the_meter_is_off_when_disabled(make_client, llm_server) -> None:
    llm_server.script(Reply("x " * 200, delay_s=1.0))
    client = make_client(speed=LLMSpeedSettings(enabled=False))
    client.chat([{"role": "user", "content": "first"}])
    with request_budget(3.0):
        client.chat([{"role": "user", "content": "second"}])  # sent: no prediction refuses it
    assert len(llm_server.requests) == 2


def test_a_timed_out_call_slows_the_rest_of_its_request_only(make_client, llm_server) -> None:
    """A call that timed out tells the request's later calls the model is slow (they are not sent); the next
    request, which may find the server well again, tries."""
    llm_server.script(Hang(5.0))
    client = make_client(timeout_s=30.0, max_retries=0, call_deadline_s=0.5)
    with request_budget(10.0) as budget:
        with pytest.raises(LLMTimeoutError):
            client.chat([{"role": "user", "content": "first"}])
        assert len(budget.timed_out) == 1 and client.speed.replies == 0  # not a measured reply
        with pytest.raises(ModelTooSlowError):
            client.chat([{"role": "user", "content": "second"}])
    assert len(llm_server.requests) == 1
    with request_budget(10.0):
        assert client.chat([{"role": "user", "content": "third"}]) == "ok"
    assert len(llm_server.requests) == 2


async def test_only_a_call_alone_on_the_server_is_measured(make_client, llm_server) -> None:
    """On a single-slot server a call sent beside others also waits for them: its time is not the model's pace."""
    llm_server.script(Reply("a b c", delay_s=0.3), Reply("d e f", delay_s=0.3))
    client = make_client()
    await asyncio.gather(
        client.achat([{"role": "user", "content": "one"}]), client.achat([{"role": "user", "content": "two"}])
    )
    assert client.speed.replies == 0
    await client.achat([{"role": "user", "content": "three"}])
    assert client.speed.replies == 1
    parallel = make_client(
        speed=LLMSpeedSettings(assume_serial=False)
    )  # a server that serves calls side by side
    await asyncio.gather(
        parallel.achat([{"role": "user", "content": "one"}]),
        parallel.achat([{"role": "user", "content": "two"}]),
    )
    assert parallel.speed.replies == 2
