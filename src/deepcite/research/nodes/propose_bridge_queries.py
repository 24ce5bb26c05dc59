"""propose_bridge_queries: walk the entity graph from the question and the evidence so far, and propose the
high-PPR entities the evidence does not yet mention as the next hop's bridge queries."""

from __future__ import annotations

from deepcite.errors import DeepciteError
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.protocols import GraphRetriever
from deepcite.research.state import ExecutorState


@node(
    reads=("plan", "evidence", "round", "used_entities", "graph_bridges"),
    writes=("graph_bridges", "errors"),
)
def propose_bridge_queries(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """With a retriever that keeps a graph: seed Personalized PageRank with the question's entities and the
    best ``research.planning.graph_seed_passages`` evidence passages, and keep up to
    ``research.planning.graph_bridge_entities`` entities the walk reached (not the question's own) that no evidence passage
    names and no earlier hop followed. A walk that fails is recorded in ``errors`` and proposes nothing."""
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
    proposed: list[str] = []
    for entity in walk.entities:
        name = entity.name.strip()
        if entity.seed or not name or name.lower() in taken or name.lower() in held:
            continue
        proposed.append(name)
        if len(proposed) >= settings.graph_bridge_entities:
            break
    state.graph_bridges = proposed
    return state
