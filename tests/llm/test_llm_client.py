"""OpenAICompatClient against the stand-in for a remote LLM (tests/llm/fake_openai_server.py on 127.0.0.1)."""

from __future__ import annotations

import asyncio

import pytest

from deepcite.config import LLMSettings
from deepcite.errors import ConfigError, LLMError
from deepcite.llm.client import LLMClient
from deepcite.llm.openai_client import OpenAICompatClient
from llm.fake_openai_server import Fail, FakeOpenAIServer, Malformed, Reply

HELLO = [{"role": "user", "content": "Say hello"}]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def test_canned_completion_and_request_shape(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply("Hello there."))
    client = make_client(temperature=0.2, max_output_tokens=77)
    assert isinstance(client, LLMClient)
    assert client.chat(HELLO) == "Hello there."
    [body] = llm_server.requests
    assert body["model"] == "stand-in-model"
    assert body["messages"] == HELLO
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 77
    assert "response_format" not in body
    assert llm_server.headers[0]["authorization"] == "Bearer test-key"


def test_max_tokens_argument_overrides_setting(llm_server: FakeOpenAIServer, make_client) -> None:
    make_client().chat(HELLO, max_tokens=12)
    assert llm_server.requests[0]["max_tokens"] == 12


def test_local_server_without_api_key(llm_server: FakeOpenAIServer, make_client) -> None:
    assert make_client(api_key=None).chat(HELLO) == "ok"
    assert llm_server.headers[0]["authorization"].startswith("Bearer ")


def test_unconfigured_settings_are_refused() -> None:
    with pytest.raises(ConfigError, match="DEEPCITE_LLM_BASE_URL"):
        OpenAICompatClient(LLMSettings(base_url=None, model=None))


def test_429_waits_exactly_retry_after(llm_server: FakeOpenAIServer, make_client, sleeps) -> None:
    llm_server.script(Fail(429, retry_after="2"), Reply("after the wait"))
    assert make_client().chat(HELLO) == "after the wait"
    assert sleeps == [2.0]
    assert len(llm_server.requests) == 2


def test_5xx_backoff_is_exponential_with_jitter_and_capped(
    llm_server: FakeOpenAIServer, make_client, sleeps
) -> None:
    llm_server.script(Fail(500), Fail(502), Fail(503), Reply("third time lucky"))
    assert (
        make_client(max_retries=3, backoff_initial_s=0.5, backoff_max_s=1.5).chat(HELLO) == "third time lucky"
    )
    assert len(sleeps) == 3
    caps = [0.5, 1.0, 1.5]  # initial * 2**n, capped at backoff_max_s
    assert all(0.0 <= s <= cap for s, cap in zip(sleeps, caps, strict=True))


def test_persistent_5xx_ends_in_llm_error(llm_server: FakeOpenAIServer, make_client, sleeps) -> None:
    llm_server.script(*[Fail(500)] * 5)
    with pytest.raises(LLMError, match="after 3 attempts"):
        make_client(max_retries=2).chat(HELLO)
    assert len(llm_server.requests) == 3
    assert len(sleeps) == 2


def test_retry_after_beyond_backoff_cap_fails_at_once(
    llm_server: FakeOpenAIServer, make_client, sleeps
) -> None:
    llm_server.script(Fail(429, retry_after="120"), Reply("never reached"))
    with pytest.raises(LLMError, match="retry after 120s"):
        make_client(backoff_max_s=10.0).chat(HELLO)
    assert len(llm_server.requests) == 1
    assert sleeps == []


def test_timeout_is_retried(llm_server: FakeOpenAIServer, make_client, sleeps) -> None:
    llm_server.script(Reply("too slow", delay_s=1.5), Reply("fast enough"))
    assert make_client(timeout_s=0.3).chat(HELLO) == "fast enough"
    assert len(sleeps) == 1


def test_persistent_timeouts_end_in_llm_error(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply("slow", delay_s=1.5), Reply("slow", delay_s=1.5))
    with pytest.raises(LLMError, match="DEEPCITE_LLM_TIMEOUT_S"):
        make_client(timeout_s=0.3, max_retries=1).chat(HELLO)


def test_malformed_http_body_is_not_retried(llm_server: FakeOpenAIServer, make_client, sleeps) -> None:
    llm_server.script(Malformed(), Reply("unused"))
    with pytest.raises(LLMError, match="not valid JSON"):
        make_client().chat(HELLO)
    assert len(llm_server.requests) == 1


def test_bad_api_key_is_reported_without_retry(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Fail(401))
    with pytest.raises(LLMError, match="DEEPCITE_LLM_API_KEY"):
        make_client().chat(HELLO)
    assert len(llm_server.requests) == 1


def test_empty_message_is_an_error(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply("   "))
    with pytest.raises(LLMError, match="empty"):
        make_client().chat(HELLO)


def test_plain_400_is_an_error(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Fail(400))
    with pytest.raises(LLMError, match="rejected the request"):
        make_client().chat(HELLO)


def test_json_schema_requested_when_supported(llm_server: FakeOpenAIServer, make_client) -> None:
    make_client().chat(HELLO, schema=SCHEMA)
    fmt = llm_server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"] == SCHEMA


def test_json_schema_rejected_steps_down_to_json_object_and_remembers(make_client) -> None:
    with FakeOpenAIServer(reject_json_schema=True) as server:
        client = make_client(base_url=server.base_url)
        client.chat(HELLO, schema=SCHEMA)
        assert [r.get("response_format", {}).get("type") for r in server.requests] == [
            "json_schema",
            "json_object",
        ]
        assert '"required": ["answer"]' in server.requests[1]["messages"][0]["content"]
        assert client.structured_output == "json_object"
        client.chat(HELLO, schema=SCHEMA)
        assert server.requests[2]["response_format"] == {"type": "json_object"}
        assert len(server.requests) == 3


def test_no_structured_output_falls_back_to_prompt_instruction(make_client) -> None:
    with FakeOpenAIServer(reject_json_schema=True, reject_json_object=True) as server:
        client = make_client(base_url=server.base_url)
        assert client.chat(HELLO, schema=SCHEMA) == "ok"
        last = server.requests[-1]
        assert len(server.requests) == 3
        assert "response_format" not in last
        assert last["messages"][0]["role"] == "system"
        assert "JSON Schema" in last["messages"][0]["content"]
        assert client.structured_output == "prompt"


async def test_achat_retries_429_with_async_sleep(llm_server: FakeOpenAIServer, make_client, sleeps) -> None:
    llm_server.script(Fail(429, retry_after="1"), Reply("async hello"))
    assert await make_client().achat(HELLO) == "async hello"
    assert sleeps == [1.0]


async def test_achat_steps_down_structured_output(make_client) -> None:
    with FakeOpenAIServer(reject_json_schema=True) as server:
        client = make_client(base_url=server.base_url)
        assert await client.achat(HELLO, schema=SCHEMA) == "ok"
        assert client.structured_output == "json_object"


async def test_achat_persistent_failure_raises(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(*[Fail(503)] * 3)
    with pytest.raises(LLMError):
        await make_client(max_retries=2).achat(HELLO)


async def test_concurrent_achat_calls_each_get_their_reply(make_client) -> None:
    with FakeOpenAIServer(responder=lambda body: body["messages"][-1]["content"].upper()) as server:
        client = make_client(base_url=server.base_url)
        prompts = [f"question {i}" for i in range(12)]
        replies = await asyncio.gather(*(client.achat([{"role": "user", "content": p}]) for p in prompts))
        assert replies == [p.upper() for p in prompts]


def test_client_works_from_several_event_loops(llm_server: FakeOpenAIServer, make_client) -> None:
    client = make_client()
    for _ in range(2):
        assert asyncio.run(client.achat(HELLO)) == "ok"
