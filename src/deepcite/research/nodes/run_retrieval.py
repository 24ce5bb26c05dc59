"""run_retrieval: every query of the round in its modes, with the plan's filters."""

from __future__ import annotations

from deepcite.errors import DeepciteError
from deepcite.models import Filters, SearchMode
from deepcite.research.nodes.base import Adapters, node
from deepcite.research.protocols import GraphRetriever
from deepcite.research.state import ExecutorState, QueryResult, RoundQuery

_ENTITY_KINDS = frozenset(["bridge", "graph"])  # queries that are one entity's name
_GRAPH_KINDS = frozenset(["subquestion", "chain"])  # queries that also take the graph's ranked list


def _named_pages(
    state: ExecutorState, adapters: Adapters, query: RoundQuery, filters: Filters | None
) -> QueryResult | None:
    """The pages ``name`` names by the collection's alias table (at most ``research.retrieval.name_pages``),
    searched by the name within those documents: a BM25 list of their best passages; ``None`` when the name
    names no page (or the plan's filters leave none)."""
    limit, name = adapters.settings.retrieval.name_pages, query.text
    doc_ids = list(dict.fromkeys(p.doc_id for p in adapters.titles.aliases(adapters.retriever).pages(name)))
    if filters is not None and filters.doc_ids is not None:
        doc_ids = [d for d in doc_ids if d in filters.doc_ids]
    if not doc_ids:
        return None
    within = (filters or Filters()).model_copy(update={"doc_ids": doc_ids[:limit]})
    try:
        hits = adapters.retriever.search(
            name,
            mode=SearchMode.BM25,
            k=limit,
            filters=within,
            anchors=adapters.settings.retrieval.anchor_text,
        )
    except DeepciteError as exc:
        state.errors.append(f"round {state.round}: the pages {name[:60]!r} names: search failed: {exc}")
        return None
    return QueryResult(query=query, mode=SearchMode.BM25, hits=hits) if hits else None


@node(reads=("plan", "queries", "round"), writes=("results", "counts", "errors"))
def run_retrieval(state: ExecutorState, adapters: Adapters) -> ExecutorState:
    """One result list per query and mode (``bridge_k`` hits for a query of one entity's name); a failing
    search is recorded in ``errors`` and the round goes on. With ``research.retrieval.use_graph`` and a
    retriever that keeps an entity graph, sub-question and chain queries add the graph's ranked list
    (``research.retrieval.graph_k`` hits). A query of one entity's name also finds the pages that name names
    (names to pages: :func:`_named_pages`). The pages' anchor text is read only with
    ``research.retrieval.anchor_text`` (off: it cost recall in the research; plain search reads it)."""
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
        k = query.k or (settings.retrieval.bridge_k if named else settings.retrieval.k_per_query)
        modes = list(query.modes or settings.retrieval.modes)
        if graph and query.kind in _GRAPH_KINDS:
            modes.append("graph")
        for mode_name in modes:
            mode = SearchMode.from_str(mode_name)
            depth = settings.retrieval.graph_k if mode is SearchMode.GRAPH else k
            try:
                hits = adapters.retriever.search(
                    query.text, mode=mode, k=depth, filters=filters, anchors=settings.retrieval.anchor_text
                )
            except DeepciteError as exc:
                state.errors.append(
                    f"round {state.round}: {mode} search for {query.text[:60]!r} failed: {exc}"
                )
                continue
            results.append(QueryResult(query=query, mode=mode, hits=hits))
        if named and settings.retrieval.name_pages > 0:
            pages = _named_pages(state, adapters, query, filters)
            if pages is not None:
                results.append(pages)
    state.results = results
    state.counts["before_fusion"] = sum(len(r.hits) for r in results)
    return state
