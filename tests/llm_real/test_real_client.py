"""OpenAICompatClient against the real llama.cpp server (SmolLM2): request shapes, the structured-output mode it
supports (remembered for the next process), async and concurrent calls, deadlines and cancellation, and a
server killed under a request (the breaker: one retry, one message, no request after)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from deepcite.errors import LLMTimeoutError
from deepcite.llm.client import LLMClient
from deepcite.llm.deadline import LLMUnavailableError, request_budget
from deepcite.llm.json import chat_json
from deepcite.llm.modes import StructuredOutputMemory
from deepcite.llm.openai_client import OpenAICompatClient
from llm_real.conftest import LlamaServer, llama_server

pytestmark = pytest.mark.real_llm

HELLO = [{"role": "user", "content": "Say hello."}]
SCHEMA = {
    "type": "object",
    "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]}},
    "required": ["colour"],
}
# 200 tokens of it take over a second (about 150 tokens/s), so a 0.5 s deadline always ends the call first;
# the server finishes the abandoned generation before the next request, so it is kept short
ESSAY = [{"role": "user", "content": "Write a long essay about the history of medicine."}]


def test_plain_chat_is_accepted_without_an_api_key(make_client) -> None:
    client = make_client(api_key=None, temperature=0.0)
    assert isinstance(client, LLMClient)
    reply = client.chat(HELLO, max_tokens=8)
    assert reply.strip()


def test_max_tokens_bounds_the_reply(make_client) -> None:
    short = make_client().chat(ESSAY, max_tokens=4)
    assert 0 < len(short.split()) <= 4


def test_json_schema_refused_with_500_steps_down_to_json_object_with_schema_and_remembers(
    make_client, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client()
    assert client.structured_output == "json_schema"
    with caplog.at_level(logging.INFO, logger="deepcite.llm.openai_client"):
        first = chat_json(client, [{"role": "user", "content": "Name a colour."}], SCHEMA)
        second = chat_json(client, [{"role": "user", "content": "Name another colour."}], SCHEMA)
    assert first["colour"] in {"red", "green", "blue"} and second["colour"] in {"red", "green", "blue"}
    assert client.structured_output == "json_object"
    falls = [r.getMessage() for r in caplog.records if "falling back" in r.getMessage()]
    assert falls == ["LLM server rejected response_format json_schema (500); falling back to json_object"]
    assert not [r for r in caplog.records if "retry" in r.getMessage()]  # a refusal is not retried


def test_json_object_with_schema_constrains_the_reply(make_client) -> None:
    """The grammar keeps even a 135M model inside the schema: an enum it would not pick unasked."""
    client = make_client(structured_output="json_object")
    schema = {
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["zebra-7"]}, "n": {"type": "integer"}},
        "required": ["verdict", "n"],
    }
    reply = chat_json(client, [{"role": "user", "content": "What is the weather like?"}], schema)
    assert reply["verdict"] == "zebra-7" and isinstance(reply["n"], int)


async def test_achat_steps_down_and_concurrent_calls_each_get_their_own_reply(make_client) -> None:
    client = make_client()
    marks = ["alpha", "bravo", "charlie", "delta"]

    async def ask(mark: str) -> str:
        schema = {"type": "object", "properties": {"mark": {"const": mark}}, "required": ["mark"]}
        reply = await client.achat([{"role": "user", "content": f"Repeat the word {mark}."}], schema=schema)
        return reply

    replies = await asyncio.gather(*(ask(m) for m in marks))
    assert [m in r for m, r in zip(marks, replies, strict=True)] == [True] * len(marks)
    assert client.structured_output == "json_object"


def test_client_works_from_several_event_loops(make_client) -> None:
    client = make_client()
    for _ in range(2):
        assert asyncio.run(client.achat(HELLO, max_tokens=8)).strip()


def test_call_deadline_ends_a_long_generation(make_client) -> None:
    client = make_client(call_deadline_s=0.5, max_retries=0)
    with pytest.raises(LLMTimeoutError, match="did not answer within 0.5 s"):
        client.chat(ESSAY, max_tokens=200)
    assert make_client().chat(HELLO, max_tokens=8).strip()  # the server still answers afterwards


def test_request_budget_bounds_the_call_and_a_spent_budget_sends_nothing(make_client) -> None:
    client = make_client()
    with request_budget(0.6, reserve_s=0.1) as budget:
        with pytest.raises(LLMTimeoutError):
            client.chat(ESSAY, max_tokens=200)
        with pytest.raises(LLMTimeoutError, match="is spent"):
            client.chat(HELLO)
    assert budget.llm_seconds == pytest.approx(0.5)


async def test_a_cancelled_call_stops_and_the_server_serves_the_next(make_client) -> None:
    client = make_client()
    task = asyncio.create_task(client.achat(ESSAY, max_tokens=200))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await client.achat(HELLO, max_tokens=8)).strip()


def test_the_style_the_server_accepts_is_remembered_for_the_next_process(
    llama: LlamaServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "llm" / "structured_output.json"
    question = [{"role": "user", "content": "Name a colour."}]
    with caplog.at_level(logging.INFO, logger="deepcite.llm.openai_client"):
        first = OpenAICompatClient(llama.settings(), memory=StructuredOutputMemory(path))
        assert first.structured_output == "json_schema"
        assert chat_json(first, question, SCHEMA)["colour"] in {"red", "green", "blue"}
        first.close()
        second = OpenAICompatClient(llama.settings(), memory=StructuredOutputMemory(path))  # a new process
        assert second.structured_output == "json_object"
        assert chat_json(second, question, SCHEMA)["colour"] in {"red", "green", "blue"}
        second.close()
    falls = [r for r in caplog.records if "falling back" in r.getMessage()]
    assert len(falls) == 1  # one refused request in all, by the first client


def test_a_killed_server_is_retried_once_then_not_asked_again_in_the_request(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Its own server, killed after one answer: the next call retries once and opens the breaker with one
    warning; every later call of the request ends at once, without a request or a retry."""
    with llama_server(tmp_path) as (server, process):
        client = OpenAICompatClient(
            server.settings(max_retries=4, backoff_initial_s=0.1, breaker_open_s=60.0)
        )
        assert client.chat(HELLO, max_tokens=8).strip()
        process.kill()
        process.wait()
        with caplog.at_level(logging.INFO), request_budget(1800.0) as budget:
            with pytest.raises(LLMUnavailableError, match="unreachable"):
                client.chat(HELLO, max_tokens=8)
            for _ in range(5):
                with pytest.raises(LLMUnavailableError):
                    client.chat(HELLO, max_tokens=8)
        client.close()
    assert budget.unreachable
    retries = [r for r in caplog.records if "retry" in r.getMessage()]
    unreachable = [r for r in caplog.records if r.levelname == "WARNING" and "unreachable" in r.getMessage()]
    assert len(retries) == 1 and len(unreachable) == 1, [r.getMessage() for r in caplog.records]
