"""JSON repair (json-repair), validation (pydantic models, JSON Schema dicts) and chat_json against the
stand-in for a remote LLM."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from deepcite.errors import LLMError
from deepcite.llm.json import achat_json, chat_json, extract_json, validate_reply
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
        "",
        "   ",
        "__import__('os').system('x')",
    ],
)
def test_extract_json_rejects_what_it_cannot_parse_safely(reply: str) -> None:
    with pytest.raises(LLMError, match="no parseable JSON"):
        extract_json(reply)


class Aspects(BaseModel):
    aspects: list[str]
    confidence: float = 1.0


def test_validate_reply_with_a_model_and_with_a_schema_dict() -> None:
    assert validate_reply({"aspects": ["a"], "confidence": 0.5}, Aspects) == Aspects(
        aspects=["a"], confidence=0.5
    )
    with pytest.raises(LLMError, match=r"does not match Aspects: aspects: Field required"):
        validate_reply({"confidence": 1}, Aspects)
    assert validate_reply({"aspects": [], "confidence": 0.5}, SCHEMA) == {"aspects": [], "confidence": 0.5}
    with pytest.raises(LLMError, match="'aspects' is a required property"):
        validate_reply({"confidence": 1}, SCHEMA)
    with pytest.raises(LLMError, match="at aspects: 'one, two' is not of type 'array'"):
        validate_reply({"aspects": "one, two"}, SCHEMA)
    with pytest.raises(LLMError, match="True is not of type 'number'"):
        validate_reply({"aspects": [], "confidence": True}, SCHEMA)
    with pytest.raises(LLMError, match="expected an object"):
        validate_reply(["aspects"], SCHEMA)


def test_chat_json_parses_a_fenced_reply_with_trailing_comma(
    llm_server: FakeOpenAIServer, make_client
) -> None:
    llm_server.script(Reply('Here you go:\n```json\n{"aspects": ["risk", "treatment",],}\n```'))
    assert chat_json(make_client(), ASK, SCHEMA) == {"aspects": ["risk", "treatment"]}
    assert llm_server.requests[0]["response_format"]["type"] == "json_schema"


def test_chat_json_raises_when_required_key_is_missing(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply('{"topics": ["risk"]}'))
    with pytest.raises(LLMError, match="'aspects' is a required property"):
        chat_json(make_client(), ASK, SCHEMA)


def test_chat_json_repairs_a_cut_reply_and_refuses_prose(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply('{"aspects": ["risk", "treatment"'), Reply("I cannot answer that."))
    assert chat_json(make_client(), ASK, SCHEMA) == {"aspects": ["risk", "treatment"]}
    with pytest.raises(LLMError, match="no parseable JSON"):
        chat_json(make_client(), ASK, SCHEMA)


def test_chat_json_with_a_model_sends_its_schema_and_returns_the_model(
    llm_server: FakeOpenAIServer, make_client
) -> None:
    llm_server.script(Reply('```json\n{"aspects": ["risk"], "confidence": 0.7,}\n```'))
    assert chat_json(make_client(), ASK, Aspects) == Aspects(aspects=["risk"], confidence=0.7)
    sent = llm_server.requests[0]["response_format"]["json_schema"]["schema"]
    assert sent == Aspects.model_json_schema()


async def test_achat_json(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Reply("{'aspects': ['a'], 'confidence': 0.9}"))
    assert await achat_json(make_client(), ASK, SCHEMA) == {"aspects": ["a"], "confidence": 0.9}
