"""OpenAICompatClient against the stand-in for a remote LLM (tests/llm/fake_openai_server.py on 127.0.0.1): the exact
request sent, and faults a real server cannot be made to show (429 with Retry-After, 5xx, timeouts, malformed
bodies, a server that supports json_schema or no structured output at all). What the real llama.cpp server can
show (the json_schema refusal and the step down, async and concurrent calls, max_tokens, no API key) is tested
against it in tests/llm_real/test_real_client.py."""

from __future__ import annotations

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


def test_a_passing_500_to_a_structured_request_is_retried_not_stepped_down(
    llm_server: FakeOpenAIServer, make_client, sleeps
) -> None:
    """Only a refusal that names the response_format type steps down (llama-cpp-python's 500 to json_schema)."""
    llm_server.script(Fail(500), Reply('{"answer": "yes"}'))
    client = make_client()
    assert client.chat(HELLO, schema=SCHEMA) == '{"answer": "yes"}'
    assert [r["response_format"]["type"] for r in llm_server.requests] == ["json_schema", "json_schema"]
    assert len(sleeps) == 1 and client.structured_output == "json_schema"


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


async def test_achat_persistent_failure_raises(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(*[Fail(503)] * 3)
    with pytest.raises(LLMError):
        await make_client(max_retries=2).achat(HELLO)
