"""merge_candidates: dedupe the round's hits by passage and fuse the lists by reciprocal rank."""

from __future__ import annotations

from deepcite.models import Candidate, Provenance
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.state import ExecutorState
from deepcite.retrieval.fusion import rrf_contribution


@node(reads=("results", "round"), writes=("candidates", "counts"))
def merge_candidates(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """One :class:`Candidate` per (doc_id, chunk_id), scored by RRF over the lists (the retriever's ``search.rrf_k``), with
    a :class:`Provenance` per hit so every list's rank and score is kept (and, for a graph hit, the entity
    and edge that brought the passage in)."""
    merged: dict[tuple[str, str], Candidate] = {}
    for qi, result in enumerate(state.results):
        query = result.query
        for hit in result.hits:
            key = (hit.chunk.doc_id, hit.chunk.chunk_id)
            cand = merged.get(key)
            if cand is None:
                cand = merged[key] = Candidate(chunk=hit.chunk)
            cand.rrf += rrf_contribution(hit.rank, adapters.retriever.rrf_k)
            cand.provenance.append(
                Provenance(
                    round=state.round,
                    query=query.text,
                    query_index=qi,
                    kind=query.kind,
                    mode=str(result.mode),
                    subquestion=query.subquestion,
                    rank=hit.rank,
                    score=float(hit.score),
                    parent=query.parent,
                    focus=query.focus,
                    graph=hit.graph,
                )
            )
            if query.subquestion not in cand.subquestions:
                cand.subquestions.append(query.subquestion)
    for cand in merged.values():
        cand.score = cand.rrf
    state.candidates = sorted(merged.values(), key=lambda c: (-c.score, c.chunk.chunk_id))
    state.counts["after_fusion"] = len(state.candidates)
    return state
