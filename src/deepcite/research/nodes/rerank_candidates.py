"""rerank_candidates: re-order the head of the fused list by the reranker, when one is configured."""

from __future__ import annotations

from deepcite.research.nodes.base import Adapters, node
from deepcite.research.state import ExecutorState
from deepcite.retrieval.collection import passage_text


@node(reads=("candidates", "subquestion", "round"), writes=("candidates", "counts", "errors"))
def rerank_candidates(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """Re-order the top ``rerank_top_n`` candidates by the reranker's score against the sub-question.

    The reranked head keeps its fused score scale (the head's fused scores are re-assigned in the new
    order), so scores stay comparable across rounds; the reranker's own score is kept in
    ``Candidate.rerank``. A reranker that raises is recorded in ``errors`` and the fused order is kept.
    """
    reranker, settings = adapters.reranker, adapters.settings
    if reranker is None or not state.candidates:
        state.counts["after_rerank"] = len(state.candidates)
        return state
    head = state.candidates[: settings.retrieval.rerank_top_n]
    tail = state.candidates[settings.retrieval.rerank_top_n :]
    try:
        scores = reranker.score(state.subquestion, [passage_text(c.chunk) for c in head])
        if len(scores) != len(head):
            raise ValueError(f"the reranker returned {len(scores)} scores for {len(head)} passages")
    except Exception as exc:  # noqa: BLE001 - a broken reranker must not stop the round
        state.errors.append(
            f"round {state.round}: reranker failed ({type(exc).__name__}: {exc}); fused order kept"
        )
        state.counts["after_rerank"] = len(state.candidates)
        return state
    fused_scores = [c.score for c in head]
    order = sorted(range(len(head)), key=lambda i: -scores[i])
    reranked = []
    for new_pos, i in enumerate(order):
        cand = head[i]
        cand.rerank = scores[i]
        cand.score = fused_scores[new_pos]
        reranked.append(cand)
    state.candidates = reranked + tail
    state.counts["after_rerank"] = len(state.candidates)
    return state
