"""Tolerant JSON extraction and chat_json against the stand-in for a remote LLM."""

from __future__ import annotations

import pytest

from deepcite.errors import LLMError
from deepcite.llm.json import achat_json, chat_json, extract_json, validate_object
from llm.fake_openai_server import FakeOpenAIServer, Reply

SCHEMA = {
    "type": "object",
    "properties": {"aspects": {"type": "array"}, "confidence": {"type": "number"}},
    "required": ["aspects"],
}
ASK = [{"role": "user", "content": "List the aspects as JSON."}]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Sure! Here is the JSON you asked for:\n{"a": "x"}\nHope this helps.', {"a": "x"}),
        ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
        ("{'a': 'single', 'ok': True, 'none': None}", {"a": "single", "ok": True, "none": None}),
        ("Here's what I found: {'note': \"it's fine\"}", {"note": "it's fine"}),
        (
            '{"text": "braces } and ] inside strings", "n": 2}',
            {"text": "braces } and ] inside strings", "n": 2},
        ),
        ('["x", "y"]', ["x", "y"]),
        ('Noise [not json] then {"a": 1}', {"a": 1}),
    ],
)
def test_extract_json_tolerates_common_llm_habits(reply: str, expected: object) -> None:
    assert extract_json(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot answer that.",
        "{unquoted: keys, at: all",
        "",
        "{'a': {1, 2}}",
        "__import__('os').system('x')",
    ],
)
def test_extract_json_rejects_what_it_cannot_parse_safely(reply: str) -> None:
    with pytest.raises(LLMError, match="no parseable JSON"):
        extract_json(reply)


def test_validate_object_checks_required_keys_and_types() -> None:
    assert validate_object({"aspects": [], "confidence": 0.5}, SCHEMA) == {"aspects": [], "confidence": 0.5}
    with pytest.raises(LLMError, match="required keys"):
        validate_object({"confidence": 1}, SCHEMA)
    with pytest.raises(LLMError, match="expected array"):
        validate_object({"aspects": "one, two"}, SCHEMA)
    with pytest.raises(LLMError, match="expected number"):
        validate_object({"aspects": [], "confidence": True}, SCHEMA)
    with pytest.raises(LLMError, match="expected an object"):
        validate_object(["aspects"], SCHEMA)


def test_chat_json_parses_a_fenced_reply_with_trailing_comma(
    llm_server: FakeOpenAIServer, make_client
) -> None:
    llm_server.script(Reply('Here you go:\n```json\n{"aspects": ["risk", "treatment",],}\n```'))
    assert chat_json(make_client(), ASK, SCHEMA) == {"aspects": ["risk", "treatment"]}
    assert llm_server.requests[0]["response_format"]["type"] == "json_schema"


def test_chat_json_raises_when_required_key_is_missing(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply('{"topics": ["risk"]}'))
    with pytest.raises(LLMError, match="required keys"):
        chat_json(make_client(), ASK, SCHEMA)


def test_chat_json_raises_on_malformed_content(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply('{"aspects": ["risk", "treatment"'))
    with pytest.raises(LLMError, match="no parseable JSON"):
        chat_json(make_client(), ASK, SCHEMA)


async def test_achat_json(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply("{'aspects': ['a'], 'confidence': 0.9}"))
    assert await achat_json(make_client(), ASK, SCHEMA) == {"aspects": ["a"], "confidence": 0.9}
