"""Checks on a caller's input that every surface shares (HTTP, MCP, CLI, Python API), applied by the request
models before anything else sees the input.

- Text must be valid Unicode: a string holding a lone UTF-16 surrogate (``"\\ud800"``, which JSON can carry
  as an escape but UTF-8 cannot encode) is **refused**, naming the field, never silently replaced: a
  replaced character would change what a filter matches or what a question asks.
- A question is empty when it holds no letter or digit (white space, zero-width characters, joiners, a BOM
  or punctuation alone): it is refused like an empty string.
- A filter's field name is dotted words (``section``, ``journal``, ``metadata.journal``), and its value is
  what the search engine stores: a string, a boolean, an integer within 64 bits, a finite number, or a
  flat list of strings or of integers.

:class:`InputModel` applies the Unicode check to every field of a request model; the messages name the
field (``filters.equals``, ``location.city``, ``messages.0.content``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ValidationInfo, field_validator

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# dotted words: letters, digits, '_' or '-' between the dots; no empty part, no space
FIELD_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)*")
_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_at(value: Any, path: str) -> str | None:
    """The dotted path (starting at ``path``) of the first string in ``value`` (strings, lists, dicts and
    their keys, models' fields) that holds a lone UTF-16 surrogate; None when there is none."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where
        elif isinstance(item, BaseModel):
            stack.extend((v, f"{where}.{k}") for k, v in item.__dict__.items())
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return f"{where} (a key)"
                stack.append((inner, f"{where}.{key}"))
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend((inner, f"{where}.{i}") for i, inner in enumerate(item))
    return None


def surrogate_problem(path: str) -> str:
    """The message for a lone surrogate at ``path``."""
    return (
        f"{path} is not valid Unicode text: it holds a lone UTF-16 surrogate (e.g. \\ud800 without its pair); "
        "send UTF-8 text (inputs with lone surrogates are refused, not repaired)"
    )


def is_blank(text: str) -> bool:
    """True when ``text`` holds no letter or digit: only white space, punctuation, symbols, control or
    zero-width characters (nothing a search or a plan can take hold of)."""
    return not any(ch.isalnum() for ch in text)


def check_field_name(name: Any) -> str:
    """``name`` if it can name a stored field, else ValueError saying what a field name looks like."""
    if not isinstance(name, str) or not FIELD_NAME.fullmatch(name):
        raise ValueError(
            f"{name!r} is not a field name: use words of letters, digits, '_' or '-' joined by dots, "
            "e.g. 'section', 'journal' or 'metadata.journal'"
        )
    return name


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):
        if INT64_MIN <= value <= INT64_MAX:
            return None
        return f"the integer {value} does not fit in 64 bits ({INT64_MIN}..{INT64_MAX})"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number"
    return (
        f"a value of type {type(value).__name__} cannot be matched: give a string, a number, true/false, "
        "or a flat list of strings or of integers"
    )


def filter_value_problem(value: Any) -> str | None:
    """Why the search engine cannot take ``value`` as a filter value (None when it can)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, (list, tuple, dict)):
                return "a list of values holds another list or object: give a flat list of strings or of integers"
            problem = _scalar_problem(item)
            if problem:
                return problem
        return None
    return _scalar_problem(value)


class InputModel(BaseModel):
    """A request record whose every text field must be valid Unicode (:func:`surrogate_at`): a field
    holding a lone surrogate fails validation with a message naming it."""

    @field_validator("*", mode="after")
    @classmethod
    def _valid_unicode(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields[info.field_name] if info.field_name else None
        name = (field.alias if field is not None and field.alias else info.field_name) or "input"
        where = surrogate_at(value, name)
        if where is not None:
            raise ValueError(surrogate_problem(where))
        return value
