"""select_evidence: MMR over the round's candidates with a per-document cap, must-preserve priority,
title matches and spread across sub-questions; in bridge hops, relevance judged against the parent
passage. The chosen passages join the accumulated evidence."""

from __future__ import annotations

import re

import numpy as np

from deepcite.config import ResearchSettings
from deepcite.models import Candidate
from deepcite.research.protocols import Retriever
from deepcite.research.state import ExecutorState
from deepcite.research.vectors import candidate_vectors, text_vectors

_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")


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


def selection_score(rank: int, round_no: int, settings: ResearchSettings) -> float:
    """A selected passage's pack score: ``round_decay ** (round - 1) / (selection_rank_k + rank)``, so the
    pack interleaves hops, each later hop a little behind the one before."""
    return settings.round_decay ** (round_no - 1) / (settings.selection_rank_k + rank)


def min_max(scores: list[float]) -> np.ndarray:
    """Scores scaled onto [0, 1] (all ones when they are equal)."""
    arr = np.asarray(scores, dtype=float)
    span = float(arr.max() - arr.min()) if arr.size else 0.0
    return (arr - arr.min()) / span if span > 0 else np.ones_like(arr)


def _holds_terms(cand: Candidate, terms: list[str]) -> bool:
    text = f"{cand.chunk.title} {cand.chunk.text}".lower()
    return any(t.lower() in text for t in terms)


def _group(cand: Candidate, round_no: int) -> str:
    """The sub-question (and, in bridge hops, the parent passage) of the candidate's best hit this round."""
    own = [p for p in cand.provenance if p["round"] == round_no]
    if not own:
        return ""
    best = min(own, key=lambda p: p["rank"])
    return f"{best['subquestion']}|{best.get('parent')}"


def _title_names(title: str, entity: str) -> bool:
    """Whether a title names the entity: equal, ignoring case and a trailing "(…)" disambiguation."""

    def bare(text: str) -> str:
        return _DISAMBIGUATION.sub("", text).strip().lower()

    return bool(bare(title)) and bare(title) == bare(entity)


def _reached_by_bridge(cand: Candidate, round_no: int) -> bool:
    return any(p["round"] == round_no and p["kind"] == "bridge" for p in cand.provenance)


def _titled_after_focus(cand: Candidate, round_no: int) -> bool:
    """Whether the passage's title names the entity or aspect one of this round's queries was about."""
    return any(
        p.get("focus") and _title_names(cand.chunk.title, p["focus"])
        for p in cand.provenance
        if p["round"] == round_no
    )


def bridge_relevance(
    state: ExecutorState,
    pool: list[Candidate],
    vectors: np.ndarray,
    retriever: Retriever,
    settings: ResearchSettings,
) -> np.ndarray:
    """Relevance of bridge-hop candidates, each judged against the parent passage it was reached from:
    cosine to the normalised sum of the question and parent vectors, plus ``title_match_bonus`` when
    its title names the followed entity, plus ``bridge_residual_weight`` times its residual-query score
    over the best residual score of that parent (the question's words the parent lacks)."""
    question_vec = text_vectors(retriever, [state.plan.question], state.vectors)[0]
    parents = {q.parent for q in state.queries if q.parent is not None}
    parent_vecs = {key: state.vectors.get(key[1]) for key in parents}
    residual_best: dict[tuple[str, str], float] = {}
    for cand in pool:
        for p in cand.provenance:
            if p["round"] == state.round and p["kind"] == "residual":
                key = tuple(p["parent"])
                residual_best[key] = max(residual_best.get(key, 0.0), p["score"])
    out = np.zeros(len(pool))
    for i, cand in enumerate(pool):
        own = [p for p in cand.provenance if p["round"] == state.round and p.get("parent")]
        if not own:
            continue
        best = min(own, key=lambda p: (p["kind"] != "bridge", p["rank"]))
        parent = tuple(best["parent"])
        focus = question_vec + (parent_vecs.get(parent) if parent_vecs.get(parent) is not None else 0.0)
        focus = focus / (np.linalg.norm(focus) or 1.0)
        title_hit = _titled_after_focus(cand, state.round)
        residual = max(
            (p["score"] for p in own if p["kind"] == "residual" and tuple(p["parent"]) == parent), default=0.0
        )
        out[i] = (
            float(vectors[i] @ focus)
            + settings.title_match_bonus * title_hit
            + settings.bridge_residual_weight * (residual / (residual_best.get(parent) or 1.0))
        )
    return out


def select_evidence(state: ExecutorState, retriever: Retriever, settings: ResearchSettings) -> ExecutorState:
    """Choose up to ``max_docs_per_round`` passages of this round and add them to the evidence.

    Relevance is the fused score min-max scaled to [0, 1] (in bridge hops :func:`bridge_relevance`), plus
    ``must_preserve_boost`` for passages holding a must-preserve term; the best passage of each
    sub-question (bridge hops: each parent) not yet represented gets ``spread_bonus``; diversity is
    MMR with embedding cosine (``mmr_lambda``); at most ``per_document_cap`` passages per document
    across the whole evidence. A selected passage scores :func:`selection_score` by its rank in the
    selection and its round, and the evidence keeps each passage's best score over the rounds.
    """
    parents = {q.parent for q in state.queries if q.parent is not None}
    pool = state.candidates
    if parents:  # a bridge hop weighs the passages reached through a followed entity, beyond its parents
        pool = [c for c in pool if c.key not in parents and _reached_by_bridge(c, state.round)]
    pool = pool[: settings.selection_pool]
    if not pool:
        state.selected, state.new_evidence = [], 0
        state.subquery_evidence.setdefault(state.subquestion, [])
        return state
    vectors = candidate_vectors(retriever, pool, state.vectors)
    if parents:
        candidate_vectors(
            retriever, [state.evidence[k] for k in parents if k in state.evidence], state.vectors
        )
        relevance = bridge_relevance(state, pool, vectors, retriever, settings)
    else:
        relevance = min_max([c.score for c in pool])
        relevance += np.array(
            [settings.title_match_bonus * _titled_after_focus(c, state.round) for c in pool]
        )
    terms = state.plan.intake.must_preserve_terms
    if terms:
        relevance += np.array([settings.must_preserve_boost * _holds_terms(c, terms) for c in pool])
    per_doc: dict[str, int] = {}
    for cand in state.evidence.values():
        per_doc[cand.chunk.doc_id] = per_doc.get(cand.chunk.doc_id, 0) + 1
    chosen = mmr_order(
        relevance,
        vectors,
        lam=settings.mmr_lambda,
        limit=settings.max_docs_per_round,
        groups=[_group(c, state.round) for c in pool],
        spread_bonus=settings.spread_bonus,
        doc_ids=[c.chunk.doc_id for c in pool],
        doc_counts=per_doc,
        doc_cap=settings.per_document_cap,
        counted=[c.key not in state.evidence for c in pool],
    )
    state.selected = [pool[i] for i in chosen]
    new = 0
    for rank, cand in enumerate(state.selected, start=1):
        cand.features[f"r{state.round}:selected_rank"] = float(rank)
        cand.features[f"r{state.round}:relevance"] = float(relevance[chosen[rank - 1]])
        cand.score = selection_score(rank, state.round, settings)
        old = state.evidence.get(cand.key)
        if old is None:
            cand.features["first_round"] = float(state.round)
            state.evidence[cand.key] = cand.model_copy(deep=True)
            new += 1
            continue
        old.score = max(old.score, cand.score)
        old.features.update(cand.features)
        old.provenance.extend(cand.provenance)
        old.subquestions.extend(s for s in cand.subquestions if s not in old.subquestions)
    state.new_evidence = new
    state.subquery_evidence[state.subquestion] = [c.model_copy(deep=True) for c in state.selected]
    return state
