"""Project-computed BM25 sparse vectors: term ids, tf saturation, and the collection statistics they need.

BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009) scores a
document ``d`` for a query ``q`` as ``sum over t in q of idf(t) * tfc(t, d)``. deepcite splits the formula
across client and Qdrant's engine:

- the **document side** ``tfc(t, d)`` (tf saturation with length normalisation) is computed here at
  index time and stored as the sparse vector's values;
- the **query side** gives each distinct query term weight 1;
- **IDF** is applied by Qdrant's IDF modifier at query time (``Modifier.Idf`` in Qdrant Edge,
  ``models.Modifier.IDF`` in qdrant-client), which both compute with the Lucene formula
  ``ln(1 + (N - df + 0.5) / (df + 0.5))`` over the live points, so it is always current.

The only statistic the stored weights depend on is ``avgdl``; :class:`Bm25Stats` keeps the document count
and total length of a collection and the ``avgdl`` (and ``k1``/``b``) its weights were computed with, so a
store can re-weight when the live ``avgdl`` drifts (see :meth:`Bm25Stats.needs_reweight`).

Term ids are the first 4 bytes (big-endian) of the BLAKE2b digest of the UTF-8 stemmed term: stable across
processes, machines and versions, so no vocabulary file is needed. With V distinct terms the expected number
of colliding pairs is about V²/2³³ (≈1 for a 90,000-term vocabulary); a collision merges two rare terms'
document frequencies, which moves scores negligibly.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from deepcite.text import TOKENS_FORMAT, tokenize

SPARSE_VECTOR_NAME = "bm25"


@lru_cache(maxsize=1 << 18)
def term_id(term: str) -> int:
    """The stable 32-bit id of a (stemmed) term: the first 4 bytes of its BLAKE2b digest."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "big")


def bm25_text(title: str, text: str, *, include_title: bool) -> str:
    """The text BM25 indexes for a chunk: ``title + " " + text`` (or the text alone)."""
    return f"{title} {text}" if include_title and title else text


def tfc_robertson(tf: float, dl: float, avgdl: float, k1: float, b: float) -> float:
    """Saturated, length-normalised term frequency ``tf*(k1+1) / (tf + k1*(1 - b + b*dl/avgdl))``.

    Robertson et al., "Okapi at TREC-3" (1994); the same document-side factor as Lucene's BM25Similarity
    (without Lucene's lossy 1-byte length encoding).
    """
    return tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / avgdl))


def idf_lucene(df: int, n_docs: int) -> float:
    """Lucene's BM25 IDF ``ln(1 + (N - df + 0.5) / (df + 0.5))``, always positive.

    The formula Qdrant's IDF modifier applies; here for references and tests (Qdrant computes it).
    """
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class SparseWeights:
    """A sparse vector as parallel lists of term ids and values (ids ascending)."""

    indices: list[int]
    values: list[float]


def _to_sparse(weights: Mapping[int, float]) -> SparseWeights:
    ids = sorted(weights)
    return SparseWeights(indices=ids, values=[weights[i] for i in ids])


def document_terms(text: str) -> Counter[str]:
    """Stemmed term frequencies of an indexed text (the one tokenizer: :func:`deepcite.text.tokenize`)."""
    return Counter(tokenize(text))


def document_vector(tf: Mapping[str, int], avgdl: float, k1: float, b: float) -> SparseWeights:
    """The stored BM25 document vector: :func:`tfc_robertson` per term, ``dl`` = total term count."""
    dl = sum(tf.values())
    weights: dict[int, float] = {}
    for term, count in tf.items():
        tid = term_id(term)
        weights[tid] = weights.get(tid, 0.0) + tfc_robertson(count, dl, avgdl, k1, b)
    return _to_sparse(weights)


def query_vector(text: str) -> SparseWeights:
    """The BM25 query vector: weight 1 per distinct query term (Qdrant multiplies in the IDF)."""
    return _to_sparse(dict.fromkeys((term_id(t) for t in tokenize(text)), 1.0))


@dataclass
class Bm25Stats:
    """A collection's BM25 statistics: live counts, and the parameters its stored weights were computed with.

    ``n_docs``/``total_len`` follow every upsert and delete; ``weight_avgdl``, ``k1``, ``b`` and
    ``include_title`` are what the stored sparse vectors were computed with, and ``tokens`` the format of the
    tokenizer that read their terms (:data:`deepcite.text.TOKENS_FORMAT`): a collection stored with another is
    re-weighted, from its stored text, at its next write.
    """

    n_docs: int = 0
    total_len: int = 0
    weight_avgdl: float = 0.0
    k1: float = 0.0
    b: float = 0.0
    include_title: bool = True
    tokens: int = 0  # the tokenizer's format the stored terms were read with (0: before formats were kept)

    @property
    def avgdl(self) -> float:
        """The live mean document length (1.0 for an empty collection, so weights stay finite)."""
        return self.total_len / self.n_docs if self.n_docs and self.total_len else 1.0

    def needs_reweight(self, k1: float, b: float, include_title: bool, tolerance: float) -> bool:
        """Whether stored weights are stale: parameters or the tokenizer's format changed, or avgdl drifted
        beyond ``tolerance``."""
        if self.n_docs == 0:
            return False
        if (self.k1, self.b, self.include_title) != (k1, b, include_title) or not self.terms_current:
            return True
        if self.weight_avgdl <= 0:
            return True
        return abs(self.avgdl - self.weight_avgdl) / self.weight_avgdl > tolerance

    @property
    def terms_current(self) -> bool:
        """Whether the stored terms were read by today's tokenizer (:data:`deepcite.text.TOKENS_FORMAT`); an empty
        collection's are."""
        return self.n_docs == 0 or self.tokens == TOKENS_FORMAT

    def weighted(self, avgdl: float, k1: float, b: float, include_title: bool) -> None:
        """Record that every stored vector is now weighted with these parameters by today's tokenizer."""
        self.weight_avgdl, self.k1, self.b, self.include_title = avgdl, k1, b, include_title
        self.tokens = TOKENS_FORMAT

    def add(self, lengths: Iterable[int]) -> None:
        for length in lengths:
            self.n_docs += 1
            self.total_len += length

    def remove(self, lengths: Iterable[int]) -> None:
        for length in lengths:
            self.n_docs -= 1
            self.total_len -= length

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Bm25Stats:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
