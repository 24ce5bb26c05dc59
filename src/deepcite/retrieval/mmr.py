"""Maximal marginal relevance: a diverse, relevant subset of ranked items, with group spread and a
per-document cap."""

from __future__ import annotations

import numpy as np


def mmr_order(
    relevance: np.ndarray,
    vectors: np.ndarray,
    *,
    lam: float,
    limit: int,
    groups: list[str] | None = None,
    spread_bonus: float = 0.0,
    doc_ids: list[str] | None = None,
    doc_counts: dict[str, int] | None = None,
    doc_cap: int | None = None,
    counted: list[bool] | None = None,
) -> list[int]:
    """Maximal marginal relevance (Carbonell & Goldstein, 1998): indices picked greedily by
    ``lam * (relevance + bonus) - (1 - lam) * max cosine to the picked``.

    ``bonus`` is ``spread_bonus`` for an item whose group has nothing picked yet. With ``doc_ids`` and
    ``doc_cap``, an item is skipped once its document holds ``doc_cap`` items (``doc_counts`` are the
    counts before picking; items with ``counted[i]`` False are already counted and add nothing).
    """
    n = len(relevance)
    groups = groups or [""] * n
    counts = dict(doc_counts or {})
    counted = counted if counted is not None else [True] * n
    picked: list[int] = []
    max_sim = np.zeros(n)
    available = np.ones(n, dtype=bool)
    while len(picked) < limit:
        if doc_ids is not None and doc_cap is not None:
            for i in np.flatnonzero(available):
                if counted[i] and counts.get(doc_ids[i], 0) >= doc_cap:
                    available[i] = False
        if not available.any():
            break
        represented = {groups[i] for i in picked}
        bonus = np.array([spread_bonus if g not in represented else 0.0 for g in groups])
        gain = lam * (relevance + bonus) - (1.0 - lam) * max_sim
        gain[~available] = -np.inf
        best = int(np.argmax(gain))
        picked.append(best)
        available[best] = False
        if doc_ids is not None and counted[best]:
            counts[doc_ids[best]] = counts.get(doc_ids[best], 0) + 1
        if vectors.size:
            max_sim = np.maximum(max_sim, vectors @ vectors[best])
    return picked
