"""select_evidence: MMR over the round's candidates with a per-document cap, must-preserve priority,
title matches and spread across sub-questions; in bridge hops, relevance judged against the parent
passage. The chosen passages join the accumulated evidence."""

from __future__ import annotations

import re

import numpy as np

from deepcite.config import ResearchSettings
from deepcite.models import Candidate, Selection
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.protocols import Retriever
from deepcite.research.state import ExecutorState
from deepcite.research.vectors import candidate_vectors, text_vectors
from deepcite.retrieval.graph.aliases import prefixes
from deepcite.retrieval.graph.extract import entity_key
from deepcite.retrieval.mmr import mmr_order

_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")


def selection_score(rank: int, round_no: int, settings: ResearchSettings) -> float:
    """A selected passage's pack score: ``round_decay ** (round - 1) / (selection_rank_k + rank)``, so the
    pack interleaves hops, each later hop a little behind the one before."""
    return settings.selection.round_decay ** (round_no - 1) / (settings.selection.rank_k + rank)


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
    own = cand.hits_in(round_no)
    if not own:
        return ""
    best = min(own, key=lambda p: p.rank)
    return f"{best.subquestion}|{best.parent}"


def title_names(title: str, entity: str) -> bool:
    """Whether a title names the entity: equal, ignoring case and a trailing "(…)" disambiguation."""

    def bare(text: str) -> str:
        return _DISAMBIGUATION.sub("", text).strip().lower()

    return bool(bare(title)) and bare(title) == bare(entity)


def _reached_by_bridge(cand: Candidate, round_no: int) -> bool:
    return any(p.kind == "bridge" for p in cand.hits_in(round_no))


def page_named(title: str, entity: str, prefix_min_words: int) -> bool:
    """Whether a title names the entity (:func:`title_names`), or the entity is a longer form of the title's
    head before a comma (names to pages: "West Chicago High School" and the page "West Chicago, Illinois"),
    that head at least ``prefix_min_words`` words."""
    if title_names(title, entity):
        return True
    head = entity_key(title.split(",")[0])
    return len(head.split()) >= prefix_min_words and head in prefixes(entity_key(entity), prefix_min_words)


def _titled_after_focus(cand: Candidate, round_no: int, prefix_min_words: int = 0) -> bool:
    """Whether the passage's title names the entity or aspect one of this round's queries was about (with
    ``prefix_min_words``, also the page the entity's longer name names: :func:`page_named`)."""
    return any(
        p.focus
        and (
            page_named(cand.chunk.title, p.focus, prefix_min_words)
            if prefix_min_words
            else title_names(cand.chunk.title, p.focus)
        )
        for p in cand.hits_in(round_no)
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
        for p in cand.hits_in(state.round):
            if p.kind == "residual" and p.parent is not None:
                residual_best[p.parent] = max(residual_best.get(p.parent, 0.0), p.score)
    out = np.zeros(len(pool))
    for i, cand in enumerate(pool):
        own = [p for p in cand.hits_in(state.round) if p.parent]
        if not own:
            continue
        best = min(own, key=lambda p: (p.kind != "bridge", p.rank))
        parent = best.parent
        assert parent is not None
        focus = question_vec + (parent_vecs.get(parent) if parent_vecs.get(parent) is not None else 0.0)
        focus = focus / (np.linalg.norm(focus) or 1.0)
        title_hit = _titled_after_focus(cand, state.round, settings.ranking.alias_prefix_min_words)
        residual = max((p.score for p in own if p.kind == "residual" and p.parent == parent), default=0.0)
        out[i] = (
            float(vectors[i] @ focus)
            + settings.selection.title_match_bonus * title_hit
            + settings.selection.bridge_residual_weight * (residual / (residual_best.get(parent) or 1.0))
        )
    return out


@node(
    reads=("plan", "queries", "candidates", "evidence", "round", "subquestion", "vectors"),
    writes=("candidates", "selected", "new_evidence", "evidence", "subquery_evidence", "vectors", "tail"),
)
def select_evidence(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """Choose up to ``max_docs_per_round`` passages of this round and add them to the evidence.

    Relevance is the fused score min-max scaled to [0, 1] (in bridge hops :func:`bridge_relevance`), plus
    ``must_preserve_boost`` for passages holding a must-preserve term; the best passage of each
    sub-question (bridge hops: each parent) not yet represented gets ``spread_bonus``; diversity is
    MMR with embedding cosine (``mmr_lambda``); at most ``per_document_cap`` passages per document
    across the whole evidence. A selected passage scores :func:`selection_score` by its rank in the
    selection and its round, and the evidence keeps each passage's best score over the rounds. In the first
    round the next ``first_round_tail`` passages of the same order are kept apart, scored by their rank after
    the selection's (``state.tail``: the pack's, at the end).
    """
    settings, retriever = adapters.settings, adapters.retriever
    parents = {q.parent for q in state.queries if q.parent is not None}
    pool = state.candidates
    if parents:  # a bridge hop weighs the passages reached through a followed entity, beyond its parents
        pool = [c for c in pool if c.key not in parents and _reached_by_bridge(c, state.round)]
    pool = pool[: settings.selection.pool]
    first = state.round == 1 and not parents
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
            [settings.selection.title_match_bonus * _titled_after_focus(c, state.round) for c in pool]
        )
    terms = state.plan.intake.must_preserve_terms
    if terms:
        relevance += np.array([settings.selection.must_preserve_boost * _holds_terms(c, terms) for c in pool])
    per_doc: dict[str, int] = {}
    for cand in state.evidence.values():
        per_doc[cand.chunk.doc_id] = per_doc.get(cand.chunk.doc_id, 0) + 1
    chosen = mmr_order(
        relevance,
        vectors,
        lam=settings.selection.mmr_lambda,
        limit=settings.selection.max_docs_per_round + (settings.selection.first_round_tail if first else 0),
        groups=[_group(c, state.round) for c in pool],
        spread_bonus=settings.selection.spread_bonus,
        doc_ids=[c.chunk.doc_id for c in pool],
        doc_counts=per_doc,
        doc_cap=settings.selection.per_document_cap,
        counted=[c.key not in state.evidence for c in pool],
    )
    for rank, i in enumerate(chosen, start=1):
        pool[i].selections.append(Selection(round=state.round, rank=rank, relevance=float(relevance[i])))
        pool[i].score = selection_score(rank, state.round, settings)
    kept = settings.selection.max_docs_per_round
    state.selected = [pool[i] for i in chosen[:kept]]
    if first:
        state.tail = [pool[i].model_copy(deep=True) for i in chosen[kept:]]
    new = 0
    for cand in state.selected:
        new += state.add_evidence(cand)[1]
    state.new_evidence = new
    state.subquery_evidence[state.subquestion] = [c.model_copy(deep=True) for c in state.selected]
    return state
