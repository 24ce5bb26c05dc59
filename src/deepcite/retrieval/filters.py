"""Search filters as an engine-neutral list of conditions, which each store maps to its own filter types.

:class:`~deepcite.models.Filters` becomes a conjunction (all must hold) of:

- ``equals``: each field matches its value exactly, or any of a list of values; a Chunk field is matched
  where it is stored, any other key in the chunk's ``metadata`` (``{"journal": "BMJ"}`` matches
  ``metadata.journal``; see :func:`deepcite.retrieval.points.payload_key`);
- ``year_from``/``year_to``: an inclusive year range (chunks without a year never match a range);
- ``sources`` / ``doc_ids``: any of the given values;
- ``acl_groups``: ``None`` means no restriction; a list means only chunks that are **public** (empty
  ``acl``) **or** shared with at least one of the groups. ``[]`` therefore means public chunks only. A
  search given a user's groups never returns a chunk whose ``acl`` names only other groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deepcite.errors import InputError
from deepcite.models import Filters
from deepcite.retrieval.points import payload_key


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
