"""Client-side fusion of ranked lists: RRF (the research executor's merge step) and DBSF normalisation.

The stores fuse inside Qdrant's engine; these pure functions fuse lists that come from different queries or
rounds, and state exactly what Qdrant's engines compute (so tests can check them against these).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def rrf_contribution(rank: int, k: int) -> float:
    """One list's share of a key's RRF score, ``1 / (k + rank)`` with a 1-based rank."""
    return 1.0 / (k + rank)


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[K]], k: int, weights: Sequence[float] | None = None
) -> list[tuple[K, float]]:
    """Reciprocal Rank Fusion: ``score(d) = sum_i w_i / (k + rank_i(d))`` with 1-based ranks.

    Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning
    Methods" (SIGIR 2009), who use k = 60. A key repeated within one list counts at its best rank. Returns
    (key, score) best first; ties keep first-seen order. (Qdrant's engines use 0-based ranks, i.e. this
    formula with ``k - 1``.)
    """
    if k < 0:
        raise ValueError(f"RRF k must be non-negative, not {k}")
    if weights is not None and len(weights) != len(ranked_lists):
        raise ValueError(f"{len(weights)} weights for {len(ranked_lists)} ranked lists")
    scores: dict[K, float] = {}
    for i, ranked in enumerate(ranked_lists):
        weight = 1.0 if weights is None else weights[i]
        seen: set[K] = set()
        for rank, key in enumerate(ranked, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight * rrf_contribution(rank, k)
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)


def dbsf_normalize(scores: Sequence[float]) -> list[float]:
    """Distribution-Based Score Fusion normalisation: map ``mean ± 3σ`` (sample σ) to ``[0, 1]``.

    Qdrant's DBSF (after Mazzeschi's "Distribution-Based Score Fusion", 2023): one score, or scores with
    no spread, normalise to 0.5.
    """
    n = len(scores)
    if n == 0:
        return []
    if n == 1:
        return [0.5]
    mean = sum(scores) / n
    std = math.sqrt(sum((s - mean) ** 2 for s in scores) / (n - 1))
    if std == 0:
        return [0.5] * n
    low = mean - 3 * std
    return [(s - low) / (6 * std) for s in scores]


def distribution_based_score_fusion(
    scored_lists: Sequence[Sequence[tuple[K, float]]],
) -> list[tuple[K, float]]:
    """DBSF: normalise each list with :func:`dbsf_normalize`, then sum per key. Returns best first."""
    fused: dict[K, float] = {}
    for scored in scored_lists:
        for (key, _), norm in zip(scored, dbsf_normalize([s for _, s in scored]), strict=True):
            fused[key] = fused.get(key, 0.0) + norm
    return sorted(fused.items(), key=lambda item: item[1], reverse=True)
