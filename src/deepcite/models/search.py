"""What a search takes and gives: its filters, and each hit with how the entity graph reached it."""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from deepcite.models.choices import SearchMode
from deepcite.models.documents import Chunk
from deepcite.validation import INT64_MAX, INT64_MIN, InputModel, check_field_name, filter_value_problem


class GraphLink(BaseModel):
    """How the entity graph reached a passage: the entity whose walk brought it in and the edge it came by.

    ``edge``: ``title`` (the passage is the entity's own document), ``title_link`` (the passage mentions the
    entity, which is another document's title), ``mention`` (the passage mentions it), ``first_hop`` (the
    passage was a seed of the walk: a top passage of the first search; ``entity`` is then ``None``), ``anchor``
    (plain search: what other documents say of the page matched the query; ``entity`` is the title of the
    passage whose sentence about it matched most, ``score`` its anchor text's BM25 score).
    ``relation``: with LLM triples (``graph.llm_triples``), the triple ("subject relation object") by which
    the walk reached ``entity``, when it did.
    """

    entity: str | None
    edge: Literal["title", "title_link", "mention", "first_hop", "anchor"]
    score: float  # the passage's Personalized PageRank score (anchor: its anchor text's BM25 score)
    relation: str | None = Field(default=None, exclude_if=lambda v: v is None)  # absent without triples


class SearchHit(BaseModel):
    """A chunk returned by a search, with its score and rank in that result list."""

    chunk: Chunk
    score: float
    rank: int
    mode: SearchMode
    graph: GraphLink | None = None  # graph mode (or hybrid fused with the graph): how the walk reached it


# Chunk fields stored as text: a filter's integer on one (pmid=10000001) means that text
_TEXT_FIELDS = frozenset(n for n, f in Chunk.model_fields.items() if f.annotation in (str, str | None))


def _as_text(value: Any) -> Any:
    """Integers (not booleans) as text, in a value or a list of values."""
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class Filters(InputModel):
    """Payload filters for a search. ``acl_groups`` restricts results to chunks shared with those groups.

    Checked on construction: an unknown key is refused naming the nearest one, field names in ``equals`` are
    dotted words, values are what the engine stores (:mod:`deepcite.validation`); whether a field exists in
    a collection is checked against it (:func:`deepcite.retrieval.filters.check_filter_fields`).
    """

    equals: dict[str, Any] = Field(default_factory=dict)  # field -> value, or list of values (any of)
    year_from: int | None = Field(default=None, ge=INT64_MIN, le=INT64_MAX)
    year_to: int | None = Field(default=None, ge=INT64_MIN, le=INT64_MAX)
    sources: list[str] | None = None
    acl_groups: list[str] | None = None  # None: no ACL restriction; []: only public chunks
    doc_ids: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key not in cls.model_fields:
                    near = difflib.get_close_matches(str(key), list(cls.model_fields), n=1, cutoff=0.5)
                    hint = f"; did you mean {near[0]!r}?" if near else ""
                    raise ValueError(
                        f"unknown filter {str(key)[:80]!r}{hint} (the filters are: {', '.join(cls.model_fields)})"
                    )
        return data

    @field_validator("equals")
    @classmethod
    def _equals(cls, equals: dict[str, Any]) -> dict[str, Any]:
        checked = {}
        for name, value in equals.items():
            check_field_name(name)
            problem = filter_value_problem(value)
            if problem:
                raise ValueError(f"filter on {name!r}: {problem}")
            checked[name] = _as_text(value) if name in _TEXT_FIELDS else value
        return checked

    def is_empty(self) -> bool:
        return (
            not self.equals
            and self.year_from is None
            and self.year_to is None
            and self.sources is None
            and self.acl_groups is None
            and self.doc_ids is None
        )
