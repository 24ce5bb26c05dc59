"""Executor nodes that gate a plan, prepare and run a round's queries, merge the hits, and finalise the pack.

Each node takes the :class:`ExecutorState`, updates it and returns it. ``rerank_candidates``,
``select_evidence``, ``grade_coverage`` and ``should_continue`` live in their own modules.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from deepcite.config import ResearchSettings
from deepcite.errors import DeepciteError
from deepcite.models import Candidate, EvidencePack, SearchMode
from deepcite.research.planner import QueryPlanner
from deepcite.research.protocols import HydeGenerator, Retriever
from deepcite.research.state import ExecutorState, QueryResult, RoundQuery
from deepcite.retrieval.fusion import rrf_contribution

log = logging.getLogger(__name__)


def executor_gate(state: ExecutorState, settings: ResearchSettings) -> ExecutorState:
    """Validate the plan and the hard caps; mark the state done when there is nothing to retrieve."""
    plan = state.plan
    if not plan.needs_retrieval:
        state.done = True
        state.skip_reason = "the plan needs no retrieval (the question has no searchable words)"
        state.stop_reason = state.skip_reason
        return state
    problems = []
    if not plan.question.strip():
        problems.append("the plan has an empty question")
    if not plan.aspects:
        problems.append("the plan has no aspects")
    if not settings.modes:
        problems.append("no retrieval modes are configured (research.modes)")
    if settings.k_per_query < 1 or settings.max_docs_per_round < 1 or settings.max_total_docs < 1:
        problems.append("k_per_query, max_docs_per_round and max_total_docs must be at least 1")
    if problems:
        state.done = True
        state.skip_reason = "; ".join(problems)
        state.stop_reason = state.skip_reason
        state.errors.append(f"executor gate refused the plan: {state.skip_reason}")
    return state


def prepare_round_queries(
    state: ExecutorState,
    planner: QueryPlanner,
    settings: ResearchSettings,
    hyde: HydeGenerator | None = None,
) -> ExecutorState:
    """Start a round: the planner's next sub-question, plus must-preserve and HyDE variants.

    Must-preserve terms reach at least one query verbatim (a BM25 query: literal terms need literal
    matching). HyDE runs only when enabled and the user
    did not ask for exact matching; a failing HyDE adapter is recorded and the round goes on.
    """
    hop = planner.next_hop(state)
    if hop is None:
        state.done = True
        state.stop_reason = (
            "nothing new to ask: every planned sub-question ran and no new entities were found"
        )
        return state
    sub, queries = hop
    state.round += 1
    state.subquestion = sub
    state.asked.append(sub)
    intake = state.plan.intake
    terms = intake.must_preserve_terms
    if terms and not any(all(t.lower() in q.text.lower() for t in terms) for q in queries):
        queries.append(RoundQuery(" ".join(terms) + " " + sub, sub, kind="must_preserve", modes=["bm25"]))
    if hyde is not None and settings.hyde_enabled and not intake.must_match_exactly:
        try:
            queries.append(RoundQuery(hyde.generate(sub), sub, kind="hyde"))
        except Exception as exc:  # noqa: BLE001 - HyDE is optional: record and go on
            state.errors.append(f"round {state.round}: HyDE failed ({type(exc).__name__}: {exc}); skipped")
    unique: dict[str, RoundQuery] = {}
    for q in queries:
        text = q.text.strip()[: settings.max_query_chars]
        if text and text.lower() not in unique:
            unique[text.lower()] = replace(q, text=text)
    state.queries = list(unique.values())[: settings.max_queries_per_round]
    state.results, state.candidates, state.selected, state.counts = [], [], [], {}
    return state


def run_retrieval(state: ExecutorState, retriever: Retriever, settings: ResearchSettings) -> ExecutorState:
    """Every query in every configured mode, with the plan's filters; a failing search is recorded."""
    filters = state.plan.intake.filters
    results: list[QueryResult] = []
    for query in state.queries:
        k = settings.bridge_k if query.kind == "bridge" else settings.k_per_query
        for mode_name in query.modes or settings.modes:
            mode = SearchMode.from_str(mode_name)
            try:
                hits = retriever.search(query.text, mode=mode, k=k, filters=filters)
            except DeepciteError as exc:
                state.errors.append(
                    f"round {state.round}: {mode} search for {query.text[:60]!r} failed: {exc}"
                )
                continue
            results.append(QueryResult(query=query, mode=mode, hits=hits))
    state.results = results
    state.counts["before_fusion"] = sum(len(r.hits) for r in results)
    return state


def merge_candidates(state: ExecutorState, settings: ResearchSettings) -> ExecutorState:
    """Dedupe hits by (doc_id, chunk_id) and fuse the lists by RRF, keeping every rank and score."""
    merged: dict[tuple[str, str], Candidate] = {}
    for qi, result in enumerate(state.results):
        prefix = f"r{state.round}:{result.mode}:q{qi}"
        for hit in result.hits:
            key = (hit.chunk.doc_id, hit.chunk.chunk_id)
            cand = merged.get(key)
            if cand is None:
                cand = merged[key] = Candidate(chunk=hit.chunk)
            cand.features[f"{prefix}:rank"] = float(hit.rank)
            cand.features[f"{prefix}:score"] = float(hit.score)
            cand.features["rrf"] = cand.features.get("rrf", 0.0) + rrf_contribution(
                hit.rank, settings.merge_rrf_k
            )
            cand.provenance.append(
                {
                    "round": state.round,
                    "query": result.query.text,
                    "kind": result.query.kind,
                    "mode": str(result.mode),
                    "subquestion": result.query.subquestion,
                    "parent": list(result.query.parent) if result.query.parent else None,
                    "focus": result.query.focus,
                    "rank": hit.rank,
                    "score": float(hit.score),
                }
            )
            if result.query.subquestion not in cand.subquestions:
                cand.subquestions.append(result.query.subquestion)
    for cand in merged.values():
        cand.score = cand.features["rrf"]
    state.candidates = sorted(merged.values(), key=lambda c: (-c.score, c.chunk.chunk_id))
    state.counts["after_fusion"] = len(state.candidates)
    return state


def finalize_evidence_pack(state: ExecutorState, settings: ResearchSettings) -> EvidencePack:
    """The evidence pack: accumulated evidence by best score (per-document cap), trimmed to max_total_docs.

    A passage's score is its best selection score over the rounds, so the pack interleaves the rounds:
    every sub-question's best passage comes before any second-best (earlier rounds first on ties).
    """
    ranked = sorted(
        state.evidence.values(),
        key=lambda c: (-c.score, c.features.get("first_round", 0.0), c.chunk.chunk_id),
    )
    per_doc: dict[str, int] = {}
    final: list[Candidate] = []
    for cand in ranked:
        if per_doc.get(cand.chunk.doc_id, 0) >= settings.per_document_cap:
            continue
        per_doc[cand.chunk.doc_id] = per_doc.get(cand.chunk.doc_id, 0) + 1
        final.append(cand)
        if len(final) >= settings.max_total_docs:
            break
    reason = state.stop_reason
    if not final:
        reason = f"no evidence found: {state.skip_reason or 'no passage matched any query of any round'}"
    return EvidencePack(
        question=state.plan.question,
        final_evidence=final,
        coverage=state.coverage,
        retrieval_report=state.reports,
        errors=list(state.errors),
        subquery_evidence=state.subquery_evidence,
        warnings=list(state.warnings),
        stop_reason=reason,
    )
