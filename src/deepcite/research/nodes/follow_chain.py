"""follow_chain: a composed question's hop takes its answer entities from the passages it found, and its
best passage is pinned near the head of the pack."""

from __future__ import annotations

from deepcite.models import Candidate, Selection
from deepcite.research.chain import rank_answers
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.nodes.select_evidence import selection_score, title_names
from deepcite.research.state import ExecutorState


def _hop_passages(state: ExecutorState) -> list[Candidate]:
    """This round's candidates reached by a chain query: those titled after the entity their query was
    about first, then by their best rank in a chain query's list."""
    reached = []
    for cand in state.candidates:
        hits = [p for p in cand.hits_in(state.round) if p.kind == "chain"]
        if hits:
            titled = any(p.focus and title_names(cand.chunk.title, p.focus) for p in hits)
            reached.append((not titled, min(p.rank for p in hits), cand))
    return [c for *_, c in sorted(reached, key=lambda item: item[:2])]


@node(reads=("chain", "candidates", "round", "evidence"), writes=("chain", "evidence"))
def follow_chain(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """Record the chain hop of this round: its passages and, unless it is the last hop, its answer
    entities ranked by :func:`deepcite.research.chain.rank_answers` over its best ``answer_passages``.
    The hop's best passage enters the evidence (if the selection left it out) scored ``pin_factor ** hop``
    times the best score of round 1, so every hop of the chain stands near the head of the pack."""
    if not state.chain or state.chain[-1].round != state.round:
        return state
    s = adapters.settings
    step, hop = state.chain[-1], len(state.chain)
    passages = _hop_passages(state)[: s.chain.answer_passages]
    step.passages = [(c.chunk.doc_id, c.chunk.title) for c in passages]
    if hop < len(state.plan.chain):
        earlier = [a for previous in state.chain[:-1] for a in previous.answers]
        known = adapters.titles.get(adapters.retriever)
        ranked = rank_answers(step.query, passages, exclude=earlier, known=known, settings=s.chain)
        step.answers = [name for name, _ in ranked[: s.chain.beam]]
    if passages:
        best = passages[0]
        pinned = s.chain.pin_factor**hop * selection_score(1, 1, s)
        held = state.evidence.get(best.key)
        if held is None:
            held = state.evidence[best.key] = best.model_copy(deep=True)
            held.selections.append(Selection(round=state.round, rank=0, relevance=0.0))
        held.score = max(held.score, pinned)
    return state
