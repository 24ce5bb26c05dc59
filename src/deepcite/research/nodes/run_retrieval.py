"""run_retrieval: every query of the round in its modes, with the plan's filters."""

from __future__ import annotations

from deepcite.errors import DeepciteError
from deepcite.models import SearchMode
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.state import ExecutorState, QueryResult


@node(reads=("plan", "queries", "round"), writes=("results", "counts", "errors"))
def run_retrieval(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """One result list per query and mode (``bridge_k`` hits for bridge queries); a failing search is
    recorded in ``errors`` and the round goes on."""
    settings = adapters.settings
    filters = state.plan.intake.filters
    results: list[QueryResult] = []
    for query in state.queries:
        k = settings.retrieval.bridge_k if query.kind == "bridge" else settings.retrieval.k_per_query
        for mode_name in query.modes or settings.retrieval.modes:
            mode = SearchMode.from_str(mode_name)
            try:
                hits = adapters.retriever.search(query.text, mode=mode, k=k, filters=filters)
            except DeepciteError as exc:
                state.errors.append(
                    f"round {state.round}: {mode} search for {query.text[:60]!r} failed: {exc}"
                )
                continue
            results.append(QueryResult(query=query, mode=mode, hits=hits))
    state.results = results
    state.counts["before_fusion"] = sum(len(r.hits) for r in results)
    return state
