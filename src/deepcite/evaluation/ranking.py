"""Per-list ranking metrics from ``ir_measures`` (never hand-written formulas), for evaluations that score
one ranked list at a time (multi-hop retrieval)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import ir_measures
from ir_measures import R


def recall_at(ranked: Sequence[str], relevant: set[str], cutoffs: Iterable[int]) -> dict[int, float]:
    """Recall of ``relevant`` ids in the first k of ``ranked`` (distinct ids, best first), for each k."""
    measures = {k: R @ k for k in cutoffs}
    run = {"q": {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)}}
    qrels = {"q": dict.fromkeys(relevant, 1)}
    scores = ir_measures.calc_aggregate(measures.values(), qrels, run)
    return {k: float(scores.get(measure, 0.0)) for k, measure in measures.items()}
