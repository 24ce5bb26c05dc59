"""run_retrieval: every query of the round in its modes, with the plan's filters."""

from __future__ import annotations

from deepcite.errors import DeepciteError
from deepcite.models import SearchMode
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.protocols import GraphRetriever
from deepcite.research.state import ExecutorState, QueryResult

_ENTITY_KINDS = frozenset(["bridge", "graph"])  # queries that are one entity's name
_GRAPH_KINDS = frozenset(["subquestion", "chain"])  # queries that also take the graph's ranked list


@node(reads=("plan", "queries", "round"), writes=("results", "counts", "errors"))
def run_retrieval(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """One result list per query and mode (``bridge_k`` hits for a query of one entity's name); a failing
    search is recorded in ``errors`` and the round goes on. With ``research.retrieval.use_graph`` and a
    retriever that keeps an entity graph, sub-question and chain queries add the graph's ranked list
    (``research.retrieval.graph_k`` hits)."""
    settings = adapters.settings
    filters = state.plan.intake.filters
    graph = (
        settings.retrieval.use_graph
        and settings.retrieval.graph_k > 0
        and isinstance(adapters.retriever, GraphRetriever)
    )
    results: list[QueryResult] = []
    for query in state.queries:
        named = query.kind in _ENTITY_KINDS
        k = settings.retrieval.bridge_k if named else settings.retrieval.k_per_query
        modes = list(query.modes or settings.retrieval.modes)
        if graph and query.kind in _GRAPH_KINDS:
            modes.append("graph")
        for mode_name in modes:
            mode = SearchMode.from_str(mode_name)
            depth = settings.retrieval.graph_k if mode is SearchMode.GRAPH else k
            try:
                hits = adapters.retriever.search(query.text, mode=mode, k=depth, filters=filters)
            except DeepciteError as exc:
                state.errors.append(
                    f"round {state.round}: {mode} search for {query.text[:60]!r} failed: {exc}"
                )
                continue
            results.append(QueryResult(query=query, mode=mode, hits=hits))
    state.results = results
    state.counts["before_fusion"] = sum(len(r.hits) for r in results)
    return state
