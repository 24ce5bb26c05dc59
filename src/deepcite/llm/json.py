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


class _Unfit(Exception):  # noqa: N818 - a signal inside conform, never seen outside
    pass


def conform(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` fitted to ``schema`` where the fit is plain (module doc); otherwise returned as it is, for
    validation to report."""
    try:
        return _conform(value, schema, schema)
    except _Unfit:
        return value


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return target if isinstance(target, dict) else {}
    return schema


def _conform(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> Any:
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            for option in schema[key]:
                try:
                    return _conform(value, option, root)
                except _Unfit:
                    continue
            raise _Unfit
    if "const" in schema:
        if value != schema["const"]:
            raise _Unfit
        return value
    if "enum" in schema:
        return _enum(value, schema["enum"])
    kind = schema.get("type")
    if kind in ("number", "integer"):
        return _number(value, schema, integer=kind == "integer")
    if kind == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        if not isinstance(value, bool):
            raise _Unfit
        return value
    if kind == "string":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise _Unfit
        return value
    if kind == "array":
        return _array(value, schema, root)
    if kind == "object":
        return _object(value, schema, root)
    if kind == "null" and value is not None:
        raise _Unfit
    return value


def _enum(value: Any, allowed: list[Any]) -> Any:
    if value in allowed:
        return value
    if isinstance(value, str):
        folded = {str(a).lower(): a for a in allowed}
        if value.strip().lower() in folded:
            return folded[value.strip().lower()]
    raise _Unfit


def _number(value: Any, schema: dict[str, Any], *, integer: bool) -> Any:
    if isinstance(value, bool):
        raise _Unfit
    if isinstance(value, str):
        try:
            value = float(value.strip().rstrip("%"))
        except ValueError:
            raise _Unfit from None
    if not isinstance(value, int | float) or value != value:  # NaN is no number
        raise _Unfit
    if "minimum" in schema:
        value = max(value, schema["minimum"])
    if "maximum" in schema:
        value = min(value, schema["maximum"])
    if integer:
        if value != int(value):
            raise _Unfit
        return int(value)
    return value


def _array(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> list[Any]:
    if not isinstance(value, list):
        raise _Unfit
    items = schema.get("items")
    kept = []
    for item in value:
        if isinstance(items, dict):
            try:
                item = _conform(item, items, root)
            except _Unfit:
                continue
        kept.append(item)
    if isinstance(schema.get("maxItems"), int):
        kept = kept[: schema["maxItems"]]
    if len(kept) < schema.get("minItems", 0):
        raise _Unfit
    return kept


def _object(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Unfit
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    extra = schema.get("additionalProperties", True)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in properties:
            try:
                out[key] = _conform(item, properties[key], root)
            except _Unfit:
                if key in required:
                    raise
        elif isinstance(extra, dict):
            try:
                out[key] = _conform(item, extra, root)
            except _Unfit:
                continue
        elif extra is not False:
            out[key] = item
    if not required <= set(out):
        raise _Unfit
    return out


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
    wanted = _schema_of(schema)
    reply = client.chat(messages, schema=wanted, max_tokens=max_tokens)
    return validate_reply(conform(extract_json(reply), wanted), schema)


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
    wanted = _schema_of(schema)
    reply = await client.achat(messages, schema=wanted, max_tokens=max_tokens)
    return validate_reply(conform(extract_json(reply), wanted), schema)
