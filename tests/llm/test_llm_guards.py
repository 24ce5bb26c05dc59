"""Issue 30 in the LLM layer: replies fitted to their schema instead of refused, a breaker for a dead server,
the structured-output style remembered across processes, and research's share of a request's LLM time. The
stand-in OpenAI-compatible server (tests/llm/fake_openai_server.py) plays the remote LLM."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from deepcite.config import LLMSettings
from deepcite.errors import LLMError, LLMTimeoutError
from deepcite.llm.deadline import LLMUnavailableError, answer_stage, call_deadline, request_budget
from deepcite.llm.json import chat_json, conform
from deepcite.llm.modes import StructuredOutputMemory
from deepcite.llm.openai_client import OpenAICompatClient
from deepcite.research.llm_adapters import aspects_schema, grade_schema
from llm.fake_openai_server import FakeOpenAIServer, Reply

ASPECTS = aspects_schema(3)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_importance_above_one_is_clamped_not_the_plan_refused() -> None:
    reply = {"aspects": [{"aspect": "stroke", "type": "definition", "importance": 1.5}]}
    assert conform(reply, ASPECTS)["aspects"][0]["importance"] == 1


def test_aspects_beyond_the_cap_and_items_that_cannot_fit_are_dropped() -> None:
    items = [{"aspect": f"a{i}", "type": "definition", "importance": "0.5"} for i in range(5)]
    reply = {
        "aspects": [{"type": "definition"}, {"aspect": "x", "type": "NOT A TYPE", "importance": 1}, *items]
    }
    fitted = conform(reply, ASPECTS)["aspects"]
    assert [a["aspect"] for a in fitted] == ["a0", "a1", "a2"] and fitted[0]["importance"] == 0.5


def test_a_grader_echoing_the_schema_keeps_the_scores_it_gave() -> None:
    reply = {
        "scores": {"type": "object", "additionalProperties": {"type": "number"}, "stroke": 2, "risk": 0.4}
    }
    assert conform(reply, grade_schema(["stroke", "risk"]))["scores"] == {"stroke": 1, "risk": 0.4}


def test_a_reply_that_cannot_fit_is_still_refused(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply('{"aspects": "none"}'))
    with pytest.raises(LLMError, match="does not match the schema"):
        chat_json(make_client(), [{"role": "user", "content": "plan"}], ASPECTS)


def test_chat_json_clamps_before_validating(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply('{"aspects": [{"aspect": "stroke", "type": "Definition", "importance": 7}]}'))
    data = chat_json(make_client(), [{"role": "user", "content": "plan"}], ASPECTS)
    assert data["aspects"] == [{"aspect": "stroke", "type": "definition", "importance": 1}]


def dead_client(sleeps: list[float], **overrides: Any) -> OpenAICompatClient:
    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    fields: dict[str, Any] = {
        "base_url": f"http://127.0.0.1:{free_port()}/v1",  # nothing listens there
        "model": "m",
        "max_retries": 4,
        "backoff_initial_s": 0.01,
        **overrides,
    }
    return OpenAICompatClient(LLMSettings(**fields), asleep=record)


def test_a_dead_server_is_retried_once_then_the_breaker_opens(caplog: pytest.LogCaptureFixture) -> None:
    sleeps: list[float] = []
    client = dead_client(sleeps, breaker_open_s=60.0)
    with pytest.raises(LLMUnavailableError, match="unreachable"):
        client.chat([{"role": "user", "content": "hi"}])
    assert len(sleeps) == 1  # llm.connect_retries = 1, not max_retries = 4
    started = time.monotonic()
    for _ in range(3):
        with pytest.raises(LLMUnavailableError, match="not asked again"):
            client.chat([{"role": "user", "content": "hi"}])
    assert len(sleeps) == 1 and time.monotonic() - started < 0.5
    warnings = [r for r in caplog.records if r.levelname == "WARNING" and "unreachable" in r.getMessage()]
    assert len(warnings) == 1  # one clear message


def test_the_breaker_holds_for_the_rest_of_the_request_after_it_closes() -> None:
    sleeps: list[float] = []
    client = dead_client(sleeps, breaker_open_s=0.0, connect_retries=0)
    with request_budget(600.0) as budget:
        with pytest.raises(LLMUnavailableError):
            client.chat([{"role": "user", "content": "hi"}])
        with pytest.raises(LLMUnavailableError, match="no further LLM calls in this request"):
            client.chat([{"role": "user", "content": "hi"}])
    assert budget.unreachable and sleeps == []
    with pytest.raises(LLMUnavailableError, match="unreachable"):  # a new request tries the server again
        client.chat([{"role": "user", "content": "hi"}])


def test_the_accepted_structured_output_style_is_remembered_across_clients(tmp_path: Path) -> None:
    memory_file = tmp_path / "llm" / "structured_output.json"
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    with FakeOpenAIServer(reject_json_schema=True) as server:
        settings = LLMSettings(base_url=server.base_url, model="m", max_retries=0)
        first = OpenAICompatClient(settings, memory=StructuredOutputMemory(memory_file))
        server.script(Reply('{"a": "x"}'))
        chat_json(first, [{"role": "user", "content": "go"}], schema)
        assert [r["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object"]
        assert json.loads(memory_file.read_text()) == {f"{server.base_url} m": "json_object"}
        assert [p.name for p in memory_file.parent.iterdir()] == ["structured_output.json"]  # no temp left
        second = OpenAICompatClient(settings, memory=StructuredOutputMemory(memory_file))  # a new process
        assert second.structured_output == "json_object"
        server.script(Reply('{"a": "y"}'))
        chat_json(second, [{"role": "user", "content": "go"}], schema)
        assert [r["response_format"]["type"] for r in server.requests][2:] == ["json_object"]


def test_a_broken_memory_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "structured_output.json"
    path.write_text("{not json")
    assert StructuredOutputMemory(path).get("http://x/v1", "m") is None


def test_research_calls_end_at_their_share_and_the_answer_keeps_the_rest() -> None:
    with request_budget(10.0, reserve_s=0.0, research_share=0.3) as budget:
        research_end, research_s = call_deadline(600.0)
        with answer_stage():
            answer_end, answer_s = call_deadline(600.0)
    assert research_s == pytest.approx(3.0) and answer_s == pytest.approx(10.0)
    assert research_end == pytest.approx(budget.started + 3.0)
    assert answer_end == pytest.approx(budget.started + 10.0)
    with request_budget(10.0, research_share=0.0):
        with pytest.raises(LLMTimeoutError, match="research's share"):
            call_deadline(600.0)
        with answer_stage():
            call_deadline(600.0)  # the answer's time is untouched
