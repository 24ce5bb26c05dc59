"""follow_chain: a composed question's hop takes its answer entities from the passages it found, and its
best passage is pinned near the head of the pack."""

from __future__ import annotations

from deepcite.models import Candidate, Selection, SkippedQuery
from deepcite.research.chain import rank_answers
from deepcite.research.followup import noise_reason
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.nodes.select_evidence import selection_score, title_names
from deepcite.research.state import ExecutorState
from deepcite.retrieval.graph.extract import entity_key


def _hop_passages(state: ExecutorState) -> list[tuple[Candidate, str | None]]:
    """This round's candidates reached by a chain query, each with the entity its title names (``None`` when
    it names none): titled ones first, then by their best rank in a chain query's list."""
    reached = []
    for cand in state.candidates:
        hits = [p for p in cand.hits_in(state.round) if p.kind == "chain"]
        if hits:
            focus = next((p.focus for p in hits if p.focus and title_names(cand.chunk.title, p.focus)), None)
            reached.append((focus is None, min(p.rank for p in hits), cand, focus))
    return [(c, focus) for *_, c, focus in sorted(reached, key=lambda item: item[:2])]


@node(
    reads=("chain", "candidates", "round", "evidence", "skipped_queries"),
    writes=("chain", "evidence", "skipped_queries"),
)
def follow_chain(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """Record the chain hop of this round: its passages and, unless it is the last hop, its answer
    entities ranked by :func:`deepcite.research.chain.rank_answers` over its best ``answer_passages``; an
    answer that would fill the next hop with noise (:func:`~deepcite.research.followup.noise_reason`) is
    skipped and recorded in ``skipped_queries``, unless a document of the collection is titled so.

    A later hop keeps in the evidence only the passages it selected that are titled after an entity it
    followed (the page of the hop before's answer), and the page of the best answer is scored
    ``pin_factor ** hop`` times the best score of round 1, so the chain stands near the head of the pack
    while a wrong turn adds nothing else."""
    if not state.chain or state.chain[-1].round != state.round:
        return state
    s = adapters.settings
    step, hop = state.chain[-1], len(state.chain)
    reached = _hop_passages(state)
    passages = [c for c, _ in reached[: s.chain.answer_passages]]
    step.passages = [(c.chunk.doc_id, c.chunk.title) for c in passages]
    if hop < len(state.plan.chain):
        earlier = [a for previous in state.chain[:-1] for a in previous.answers]
        known = adapters.titles.get(adapters.retriever)
        ranked = rank_answers(step.query, passages, exclude=earlier, known=known, settings=s.chain)
        answers: list[str] = []
        for name, _ in ranked:
            if len(answers) >= s.chain.beam:
                break
            reason = None if entity_key(name) in known else noise_reason(name, s.followup)
            if reason is None:
                answers.append(name)
            else:
                state.skipped_queries.append(SkippedQuery(text=name, reason=reason, round=state.round + 1))
        step.answers = answers
    if hop == 1:
        return state
    pages = {c.key: focus for c, focus in reached if focus is not None}
    for key in [k for k, c in state.evidence.items() if c.first_round == state.round and k not in pages]:
        del state.evidence[key]
    best_answer = state.chain[-2].answers[0] if state.chain[-2].answers else None
    for cand, focus in reached:
        if focus is None or focus != best_answer:
            continue
        held = state.evidence.get(cand.key)
        if held is None:
            held, _ = state.add_evidence(cand)
            held.selections.append(Selection(round=state.round, rank=0, relevance=0.0))
        held.score = max(held.score, s.chain.pin_factor**hop * selection_score(1, 1, s))
        break
    return state
