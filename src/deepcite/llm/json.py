"""Tolerant JSON out of LLM replies, and ``chat_json``: one call that returns a validated dict or raises.

Models wrap JSON in code fences, put prose before it, leave trailing commas, or answer with a Python
literal (single quotes, ``True``/``None``). :func:`extract_json` tries, in order: the whole reply, each
fenced block, then the first balanced ``{…}`` / ``[…]``; each candidate is parsed as JSON, then as JSON
without trailing commas, then with :func:`ast.literal_eval` (which evaluates literals only, never code,
so single quotes are handled safely). Callers catch :class:`LLMError` and use their heuristic fallback.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from deepcite.errors import LLMError
from deepcite.llm.client import LLMClient, Message

_FENCE_RE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
}
_PREVIEW_CHARS = 200


def _balanced_spans(text: str) -> Iterator[str]:
    """Each top-level ``{…}`` or ``[…]`` span, skipping brackets inside quoted strings."""
    pairs = {"{": "}", "[": "]"}
    start = 0
    while True:
        opens = [i for i in (text.find("{", start), text.find("[", start)) if i >= 0]
        if not opens:
            return
        begin = min(opens)
        stack: list[str] = []
        quote: str | None = None
        escaped = False
        end = -1
        for i in range(begin, len(text)):
            ch = text[i]
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == quote:
                    quote = None
            elif ch in "\"'":
                # an apostrophe inside a word ("don't") does not open a string
                if ch == '"' or not (i > 0 and text[i - 1].isalnum()):
                    quote = ch
            elif ch in pairs:
                stack.append(pairs[ch])
            elif ch in "}]":
                if not stack or stack.pop() != ch:
                    break
                if not stack:
                    end = i
                    break
        if end >= 0:
            yield text[begin : end + 1]
            start = end + 1
        else:
            start = begin + 1


def _parse_candidate(candidate: str) -> Any:
    """JSON, then JSON without trailing commas, then a Python literal; raises ValueError."""
    for attempt in (candidate, _TRAILING_COMMA_RE.sub(r"\1", candidate)):
        try:
            return json.loads(attempt)
        except json.JSONDecodeError:
            continue
    try:
        value = ast.literal_eval(candidate)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(value, dict | list):
        raise ValueError("not an object or array")
    # round-trip proves the literal holds only JSON types (no tuples, sets, bytes)
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None


def extract_json(text: str) -> Any:
    """The first JSON object or array found in an LLM reply; raises LLMError when there is none."""
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE_RE.finditer(text))]
    candidates.extend(_balanced_spans(text))
    for candidate in candidates:
        if not candidate:
            continue
        try:
            value = _parse_candidate(candidate)
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    preview = stripped[:_PREVIEW_CHARS] + ("…" if len(stripped) > _PREVIEW_CHARS else "")
    raise LLMError(f"the LLM reply holds no parseable JSON object: {preview!r}; the caller falls back")


def validate_object(value: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """Check ``value`` is an object with the schema's required keys and top-level property types."""
    if not isinstance(value, dict):
        raise LLMError(f"the LLM returned JSON {type(value).__name__}, expected an object")
    missing = [key for key in schema.get("required", []) if key not in value]
    if missing:
        raise LLMError(f"the LLM's JSON lacks required keys {missing}; got keys {sorted(value)}")
    for key, spec in (schema.get("properties") or {}).items():
        expected = spec.get("type") if isinstance(spec, dict) else None
        if key not in value or not isinstance(expected, str) or expected not in _JSON_TYPES:
            continue
        item = value[key]
        is_bool = isinstance(item, bool)
        if not isinstance(item, _JSON_TYPES[expected]) or (is_bool and expected != "boolean"):
            raise LLMError(f"the LLM's JSON key {key!r} is {type(item).__name__}, expected {expected}")
    return value


def chat_json(
    client: LLMClient, messages: Sequence[Message], schema: dict[str, Any], *, max_tokens: int | None = None
) -> dict[str, Any]:
    """Ask for JSON matching ``schema``; returns the parsed object or raises LLMError."""
    reply = client.chat(messages, schema=schema, max_tokens=max_tokens)
    return validate_object(extract_json(reply), schema)


async def achat_json(
    client: LLMClient, messages: Sequence[Message], schema: dict[str, Any], *, max_tokens: int | None = None
) -> dict[str, Any]:
    """Async twin of :func:`chat_json`."""
    reply = await client.achat(messages, schema=schema, max_tokens=max_tokens)
    return validate_object(extract_json(reply), schema)
