"""Search filters as a backend-neutral list of conditions, which each store maps to its own filter types.

:class:`~deepcite.models.Filters` becomes a conjunction (all must hold) of:

- ``equals``: each field matches its value exactly, or any of a list of values; a Chunk field is matched
  where it is stored, any other key in the chunk's ``metadata`` (``{"journal": "BMJ"}`` matches
  ``metadata.journal``; see :func:`deepcite.retrieval.points.payload_key`);
- ``year_from``/``year_to``: an inclusive year range (chunks without a year never match a range);
- ``sources`` / ``doc_ids``: any of the given values;
- ``acl_groups``: ``None`` means no restriction; a list means only chunks that are **public** (empty
  ``acl``) **or** shared with at least one of the groups. ``[]`` therefore means public chunks only. A
  search given a user's groups never returns a chunk whose ``acl`` names only other groups.

A request's filters are checked before they reach Qdrant's engine: their shape and values by
:class:`~deepcite.models.Filters` itself, their sizes against the settings by :func:`check_filter_sizes`,
and their field names against the collection by :func:`check_filter_fields`.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from deepcite.config import Settings
from deepcite.errors import InputError
from deepcite.models import Chunk, Filters
from deepcite.retrieval.points import METADATA_KEY, payload_key


@dataclass(frozen=True)
class Match:
    """``key`` equals ``value`` (str, int or bool)."""

    key: str
    value: str | int | bool


@dataclass(frozen=True)
class MatchAny:
    """``key`` equals one of ``values`` (all str or all int); on a list field, any element does."""

    key: str
    values: tuple[str, ...] | tuple[int, ...]


@dataclass(frozen=True)
class Range:
    """``gte <= key <= lte`` (either bound may be open)."""

    key: str
    gte: float | None = None
    lte: float | None = None


@dataclass(frozen=True)
class IsEmpty:
    """``key`` is missing, null or an empty list."""

    key: str


@dataclass(frozen=True)
class AnyOf:
    """At least one of ``conditions`` holds."""

    conditions: tuple[Condition, ...]


Condition = Match | MatchAny | Range | IsEmpty | AnyOf


def _value_condition(key: str, value: Any) -> Condition:
    if isinstance(value, (list, tuple, set)):
        values = list(value)
        if not values:
            raise InputError(f"filter on {key!r} has an empty list of values; give at least one value")
        if all(isinstance(v, str) for v in values):
            return MatchAny(key, tuple(values))
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return MatchAny(key, tuple(values))
        raise InputError(
            f"filter on {key!r}: a list of values must be all strings or all integers, got {values!r}"
        )
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (str, int, bool)):
        return Match(key, value)
    if isinstance(value, float):
        return Range(key, gte=value, lte=value)
    raise InputError(f"filter on {key!r}: cannot match a value of type {type(value).__name__} ({value!r})")


def filter_conditions(filters: Filters | None) -> list[Condition] | None:
    """The conditions (all must hold) that express ``filters``: ``[]`` for no filter, ``None`` when the
    filters can match nothing (``sources=[]`` or ``doc_ids=[]``), so a store answers without a query."""
    if filters is None:
        return []
    conditions: list[Condition] = []
    for field, value in filters.equals.items():
        if not field:
            raise InputError("a filter has an empty field name; use field=value")
        conditions.append(_value_condition(payload_key(field), value))
    if filters.year_from is not None or filters.year_to is not None:
        if (
            filters.year_from is not None
            and filters.year_to is not None
            and filters.year_from > filters.year_to
        ):
            raise InputError(
                f"year range is empty: year_from {filters.year_from} > year_to {filters.year_to}"
            )
        conditions.append(Range("year", gte=filters.year_from, lte=filters.year_to))
    for key, values in (("source", filters.sources), ("doc_id", filters.doc_ids)):
        if values is not None:
            if not values:
                return None
            conditions.append(_value_condition(key, values))
    if filters.acl_groups is not None:
        groups = [g for g in filters.acl_groups if g]
        public = IsEmpty("acl")
        conditions.append(AnyOf((public, MatchAny("acl", tuple(groups)))) if groups else public)
    return conditions


# Chunk fields a filter may name (``text`` is not matched whole, ``metadata`` is addressed by its keys),
# and those that hold integers
FILTER_FIELDS: tuple[str, ...] = tuple(f for f in Chunk.model_fields if f not in ("text", METADATA_KEY))
_INT_FIELDS = frozenset(
    name
    for name, info in Chunk.model_fields.items()
    if int in (info.annotation, *typing.get_args(info.annotation))
)


def check_filter_sizes(filters: Filters | None, settings: Settings) -> None:
    """InputError unless ``filters`` keeps to ``search.max_filter_fields``, ``max_filter_values`` and
    ``max_filter_value_chars``."""
    if filters is None:
        return
    limits = settings.search
    if len(filters.equals) > limits.max_filter_fields:
        raise InputError(
            f"equals names {len(filters.equals)} fields; the limit is {limits.max_filter_fields} "
            "(setting search.max_filter_fields)"
        )
    lists = {f"equals.{k}": v for k, v in filters.equals.items() if isinstance(v, (list, tuple))}
    lists.update(sources=filters.sources, doc_ids=filters.doc_ids, acl_groups=filters.acl_groups)
    for where, values in lists.items():
        if values is not None and len(values) > limits.max_filter_values:
            raise InputError(
                f"{where} lists {len(values)} values; the limit is {limits.max_filter_values} "
                "(setting search.max_filter_values)"
            )
    texts = [v for v in filters.equals.values() if isinstance(v, str)]
    texts += [v for values in lists.values() for v in values or () if isinstance(v, str)]
    longest = max(map(len, texts), default=0)
    if longest > limits.max_filter_value_chars:
        raise InputError(
            f"a filter value has {longest} characters; the limit is {limits.max_filter_value_chars} "
            "(setting search.max_filter_value_chars)"
        )


def check_filter_fields(filters: Filters | None, metadata_keys: Iterable[str] | None) -> None:
    """InputError unless every field ``filters.equals`` names is a Chunk field (with a value of its type) or
    one of ``metadata_keys`` (the collection's known metadata keys; None when it has no record of them, and
    then any metadata key is let through). The message names the field and lists the known ones."""
    if filters is None or not filters.equals:
        return
    known_metadata = None if metadata_keys is None else set(metadata_keys)
    for field, value in filters.equals.items():
        if field in FILTER_FIELDS:
            values = value if isinstance(value, (list, tuple)) else [value]
            wants_int = field in _INT_FIELDS
            numbers = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in values]
            if not all(numbers) if wants_int else not all(isinstance(v, str) for v in values):
                kind = "integers" if wants_int else "strings"
                raise InputError(f"filter on {field!r}: {field} holds {kind}, not {value!r}")
            continue
        key = field.removeprefix(f"{METADATA_KEY}.")
        if field in (METADATA_KEY, "text") or (known_metadata is not None and key not in known_metadata):
            known = [*FILTER_FIELDS, *sorted(known_metadata or ())]
            near = difflib.get_close_matches(field, known, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise InputError(
                f"unknown filter field {field!r}{hint} (the fields are: {', '.join(FILTER_FIELDS)}; "
                f"metadata keys of this collection: {', '.join(sorted(known_metadata or ())) or 'none'})"
            )
