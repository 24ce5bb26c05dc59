"""Dense vectors of candidate passages for MMR and coverage, fetched once per chunk and cached."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from deepcite.models import Candidate, Chunk
from deepcite.research.protocols import Retriever
from deepcite.retrieval.collection import passage_text
from deepcite.text import tokenize

_TEXT = "text:"  # cache keys of short texts, apart from chunk ids


@runtime_checkable
class StoredVectors(Protocol):
    """A retriever that can hand back the vectors it indexed, saving a re-embedding."""

    def vectors(self, chunks: Sequence[Chunk]) -> np.ndarray: ...


def candidate_vectors(
    retriever: Retriever, candidates: Sequence[Candidate], cache: MutableMapping[str, np.ndarray]
) -> np.ndarray:
    """A ``(len(candidates), dim)`` matrix of unit vectors; misses are fetched or embedded, then cached."""
    missing = [c.chunk for c in candidates if c.chunk.chunk_id not in cache]
    unique = list({c.chunk_id: c for c in missing}.values())
    if unique:
        if isinstance(retriever, StoredVectors):
            rows = retriever.vectors(unique)
        else:
            rows = retriever.embed([passage_text(c) for c in unique])
        for chunk, row in zip(unique, np.asarray(rows, dtype=np.float32), strict=True):
            cache[chunk.chunk_id] = row
    if not candidates:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([cache[c.chunk.chunk_id] for c in candidates])


def text_vectors(
    retriever: Retriever, texts: Sequence[str], cache: MutableMapping[str, np.ndarray]
) -> np.ndarray:
    """Unit vectors of short texts (aspects, sub-questions), cached by text."""
    missing = [t for t in dict.fromkeys(texts) if _TEXT + t not in cache]
    if missing:
        for text, row in zip(missing, np.asarray(retriever.embed(missing), dtype=np.float32), strict=True):
            cache[_TEXT + text] = row
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([cache[_TEXT + t] for t in texts])


def passage_words(passages: Iterable[Candidate]) -> set[str]:
    """The stems of the passages' texts (title and text, as :func:`passage_text` gives them)."""
    return {t for c in passages for t in tokenize(passage_text(c.chunk))}
