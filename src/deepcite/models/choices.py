"""Choices given by name (search modes, fusion methods; aspect types in :mod:`.coverage`), each parsed by
``from_str``, which fails with the list of valid values."""

from __future__ import annotations

from enum import StrEnum

from deepcite.errors import InputError


class _ChoiceEnum(StrEnum):
    @classmethod
    def from_str(cls, value: str) -> _ChoiceEnum:
        """Parse a value, failing with the list of valid choices."""
        try:
            return cls(value.strip().lower())
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise InputError(f"unknown {cls.__name__} {value!r}; choose one of: {choices}") from None


class SearchMode(_ChoiceEnum):
    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"
    GRAPH = "graph"  # Personalized PageRank over the collection's entity graph (retrieval/graph/)


class FusionMethod(_ChoiceEnum):
    RRF = "rrf"
    DBSF = "dbsf"
