"""JSON out of LLM replies, and ``chat_json``: one call that returns a validated object or raises.

Models wrap JSON in code fences, put prose around it, leave trailing commas, or answer with a Python
literal (single quotes, ``True``/``None``). Repairing that is `json-repair`'s job (:func:`extract_json`);
checking the shape is pydantic's (a model: its ``model_json_schema()`` goes out as the requested
schema, ``model_validate`` checks what comes back) or `jsonschema`'s (a schema given as a dict).
Callers catch :class:`LLMError` and use their heuristic fallback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar, overload

import json_repair
import jsonschema
from pydantic import BaseModel, ValidationError

from deepcite.errors import LLMError
from deepcite.llm.client import LLMClient, Message

M = TypeVar("M", bound=BaseModel)
Schema = type[BaseModel] | dict[str, Any]
_PREVIEW_CHARS = 200
_FENCE_START = re.compile(r"^```[\w-]*\s*")


def extract_json(text: str) -> Any:
    """The first JSON object or array in an LLM reply, repaired by json-repair; LLMError when there is none.

    Several JSON values in one reply (prose holding ``[a note]`` before the object) come back from
    json-repair as a list of them: the first object among them is taken.
    """
    stripped = text.strip()
    value = json_repair.loads(stripped) if stripped else ""
    opens_with_array = _FENCE_START.sub("", stripped).startswith("[")
    if isinstance(value, list) and not opens_with_array:
        value = next((v for v in value if isinstance(v, dict)), value)
    if isinstance(value, dict | list) and value != []:
        return value
    preview = stripped[:_PREVIEW_CHARS] + ("…" if len(stripped) > _PREVIEW_CHARS else "")
    raise LLMError(f"the LLM reply holds no parseable JSON object: {preview!r}; the caller falls back")


@overload
def validate_reply(value: Any, schema: type[M]) -> M: ...
@overload
def validate_reply(value: Any, schema: dict[str, Any]) -> dict[str, Any]: ...
def validate_reply(value: Any, schema: Schema) -> Any:
    """``value`` checked against a pydantic model (the model instance) or a JSON Schema dict (the dict)."""
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise LLMError(f"the LLM returned JSON {type(value).__name__}, expected an object")
        try:
            jsonschema.validate(value, schema)
        except jsonschema.ValidationError as exc:
            where = ".".join(str(p) for p in exc.absolute_path) or "the reply"
            raise LLMError(f"the LLM's JSON does not match the schema at {where}: {exc.message}") from None
        return value
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors())
        raise LLMError(f"the LLM's JSON does not match {schema.__name__}: {problems}") from None


def _schema_of(schema: Schema) -> dict[str, Any]:
    return schema if isinstance(schema, dict) else schema.model_json_schema()


@overload
def chat_json(
    client: LLMClient, messages: Sequence[Message], schema: type[M], *, max_tokens: int | None = None
) -> M: ...
@overload
def chat_json(
    client: LLMClient, messages: Sequence[Message], schema: dict[str, Any], *, max_tokens: int | None = None
) -> dict[str, Any]: ...
def chat_json(
    client: LLMClient, messages: Sequence[Message], schema: Schema, *, max_tokens: int | None = None
) -> Any:
    """Ask for JSON matching ``schema`` (a pydantic model or a JSON Schema dict); the validated reply or
    LLMError."""
    reply = client.chat(messages, schema=_schema_of(schema), max_tokens=max_tokens)
    return validate_reply(extract_json(reply), schema)


@overload
async def achat_json(
    client: LLMClient, messages: Sequence[Message], schema: type[M], *, max_tokens: int | None = None
) -> M: ...
@overload
async def achat_json(
    client: LLMClient, messages: Sequence[Message], schema: dict[str, Any], *, max_tokens: int | None = None
) -> dict[str, Any]: ...
async def achat_json(
    client: LLMClient, messages: Sequence[Message], schema: Schema, *, max_tokens: int | None = None
) -> Any:
    """Async twin of :func:`chat_json`."""
    reply = await client.achat(messages, schema=_schema_of(schema), max_tokens=max_tokens)
    return validate_reply(extract_json(reply), schema)
