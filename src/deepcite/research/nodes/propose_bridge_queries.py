"""propose_bridge_queries: walk the entity graph from the question and the evidence so far, and propose the
high-PPR entities the evidence does not yet mention as the next hop's bridge queries."""

from __future__ import annotations

from deepcite.errors import DeepciteError
from deepcite.models import SkippedQuery
from deepcite.research.followup import DOCUMENT_TITLE, document_names, names_a_document, noise_reason
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.protocols import GraphRetriever
from deepcite.research.state import ExecutorState


@node(
    reads=("plan", "evidence", "round", "used_entities", "graph_bridges", "skipped_queries"),
    writes=("graph_bridges", "errors", "skipped_queries"),
)
def propose_bridge_queries(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """With a retriever that keeps a graph: seed Personalized PageRank with the question's entities and the
    best ``research.planning.graph_seed_passages`` evidence passages, and keep up to
    ``research.planning.graph_bridge_entities`` entities the walk reached (not the question's own) that no evidence passage
    names and no earlier hop followed. An entity that would be a noisy query (a statistics fragment, a date, a
    sentence: :func:`~deepcite.research.followup.noise_reason`) or that names a document of the evidence (its
    title or file name) is not proposed; it is recorded in
    ``skipped_queries`` for the next round's report. A walk that fails is recorded in ``errors`` and proposes
    nothing."""
    settings, retriever = adapters.settings.planning, adapters.retriever
    if settings.graph_bridge_entities < 1 or not isinstance(retriever, GraphRetriever):
        return state
    best = state.best_evidence(settings.graph_seed_passages)
    if not best:
        return state
    try:
        walk = retriever.graph_walk(state.plan.question, seed_chunk_ids=[c.chunk.chunk_id for c in best])
    except DeepciteError as exc:
        state.errors.append(f"round {state.round}: graph walk failed: {exc}; no graph bridges proposed")
        return state
    held = " ".join(f"{c.chunk.title} {c.chunk.text}" for c in state.evidence.values()).lower()
    taken = {e.lower() for e in [*state.used_entities, *state.graph_bridges]}
    documents = document_names(c.chunk for c in state.evidence.values())
    proposed: list[str] = []
    for entity in walk.entities:
        name = entity.name.strip()
        if entity.seed or not name or name.lower() in taken or name.lower() in held:
            continue
        reason = noise_reason(name, adapters.settings.followup) or (
            DOCUMENT_TITLE if names_a_document(name, documents) else None
        )
        if reason is not None:
            taken.add(name.lower())
            state.skip(SkippedQuery(text=name, reason=reason, round=state.round + 1))
            continue
        proposed.append(name)
        if len(proposed) >= settings.graph_bridge_entities:
            break
    state.graph_bridges = proposed
    return state
