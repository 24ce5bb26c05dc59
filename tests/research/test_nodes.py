"""Executor nodes over typed state, without an index: gate, prepare, merge, rerank, should_continue, finalize."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from deepcite.config import ResearchSettings
from deepcite.models import Candidate, SearchMode
from deepcite.research.executor import (
    executor_gate,
    finalize_evidence_pack,
    merge_candidates,
    prepare_round_queries,
    rrf_contribution,
)
from deepcite.research.llm_adapters import LLMHyde
from deepcite.research.rerank import CrossEncoderReranker, load_reranker, rerank_candidates
from deepcite.research.state import QueryResult, RoundQuery
from deepcite.research.stopping import should_continue
from research.helpers import StandInLLM, chunk, hit, new_state

S = ResearchSettings()


def test_gate_passes_a_valid_plan() -> None:
    state, _ = new_state("compare statins and PCSK9 inhibitors")
    assert executor_gate(state, S).done is False


def test_gate_skips_a_plan_without_searchable_words() -> None:
    state, _ = new_state("what is the?")
    executor_gate(state, S)
    assert state.done and "needs no retrieval" in state.stop_reason


def test_gate_refuses_broken_caps() -> None:
    state, _ = new_state("statins")
    executor_gate(state, S.model_copy(update={"modes": [], "k_per_query": 0}))
    assert state.done
    assert "no retrieval modes" in state.skip_reason and "k_per_query" in state.skip_reason
    assert state.errors


def test_first_round_asks_the_question() -> None:
    state, planner = new_state("compare statins and PCSK9 inhibitors")
    prepare_round_queries(state, planner, S)
    assert state.round == 1
    assert state.subquestion == "compare statins and PCSK9 inhibitors"
    assert [q.text for q in state.queries] == ["compare statins and PCSK9 inhibitors"]


def test_must_preserve_terms_reach_a_query_verbatim() -> None:
    state, planner = new_state("Is SVT treated with adenosine?")
    state.asked.append(state.plan.question)  # round 1 done: the next hop asks an aspect sub-question
    state.plan.subquestions.append("adenosine dosing")
    prepare_round_queries(state, planner, S)
    assert any("SVT" in q.text for q in state.queries)


def test_hyde_adds_a_query_through_the_adapter() -> None:
    state, planner = new_state("how do statins lower LDL?")
    llm = StandInLLM(['{"passage": "Statins block HMG-CoA reductase in the liver."}'])
    prepare_round_queries(state, planner, S.model_copy(update={"hyde_enabled": True}), LLMHyde(llm))
    assert [q.kind for q in state.queries] == ["subquestion", "hyde"]
    assert state.queries[1].text == "Statins block HMG-CoA reductase in the liver."


def test_hyde_is_skipped_when_the_user_quotes() -> None:
    state, planner = new_state('what does "statin myopathy" mean?')
    llm = StandInLLM(['{"passage": "x"}'])
    prepare_round_queries(state, planner, S.model_copy(update={"hyde_enabled": True}), LLMHyde(llm))
    assert all(q.kind != "hyde" for q in state.queries) and llm.calls == []


def test_failing_hyde_is_recorded_and_the_round_goes_on() -> None:
    state, planner = new_state("how do statins lower LDL?")
    llm = StandInLLM([ConnectionError("endpoint down")])
    prepare_round_queries(state, planner, S.model_copy(update={"hyde_enabled": True}), LLMHyde(llm))
    assert [q.kind for q in state.queries] == ["subquestion"]
    assert "HyDE failed" in state.errors[0] and "endpoint down" in state.errors[0]


def _merged_state():
    state, planner = new_state("statins")
    prepare_round_queries(state, planner, S)
    a, b, c = chunk("a", "statins one"), chunk("b", "statins two"), chunk("c", "statins three")
    q1, q2 = RoundQuery("statins", "statins"), RoundQuery("statin drugs", "statins")
    state.results = [
        QueryResult(q1, SearchMode.BM25, [hit(a, 1, 9.0, SearchMode.BM25), hit(b, 2, 5.0, SearchMode.BM25)]),
        QueryResult(
            q2, SearchMode.DENSE, [hit(b, 1, 0.8, SearchMode.DENSE), hit(c, 2, 0.7, SearchMode.DENSE)]
        ),
    ]
    return merge_candidates(state, S)


def test_merge_dedupes_and_fuses_by_rrf_keeping_every_feature() -> None:
    state = _merged_state()
    assert [c.chunk.chunk_id for c in state.candidates] == ["b", "a", "c"]  # b is in both lists
    b = state.candidates[0]
    k = S.merge_rrf_k
    assert b.score == pytest.approx(rrf_contribution(2, k) + rrf_contribution(1, k))
    assert b.features["r1:bm25:q0:rank"] == 2 and b.features["r1:dense:q1:score"] == pytest.approx(0.8)
    assert {p["mode"] for p in b.provenance} == {"bm25", "dense"}
    assert all(p["round"] == 1 and p["subquestion"] == "statins" for p in b.provenance)
    assert state.counts["after_fusion"] == 3


class _StandInCrossEncoder:
    """Stands in for a cross-encoder model object (no weights can be installed offline): it scores a
    passage by how often it says 'three'."""

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[float]:
        return [float(p.count("three")) for _, p in pairs]


def test_rerank_reorders_the_head_and_keeps_the_score_scale() -> None:
    state = _merged_state()
    fused = [c.score for c in state.candidates]
    rerank_candidates(state, CrossEncoderReranker(_StandInCrossEncoder()), S)
    assert state.candidates[0].chunk.chunk_id == "c"
    assert state.candidates[0].features["rerank"] == 1.0
    assert [c.score for c in state.candidates] == fused
    assert state.counts["after_rerank"] == 3


def test_rerank_off_keeps_the_order() -> None:
    state = _merged_state()
    rerank_candidates(state, None, S)
    assert [c.chunk.chunk_id for c in state.candidates] == ["b", "a", "c"]


def test_missing_reranker_model_is_recorded_not_raised() -> None:
    errors: list[str] = []
    reranker = load_reranker(
        S.model_copy(update={"rerank_enabled": True, "reranker_model": "/no/such/model"}), errors
    )
    assert reranker is None
    assert "reranker unavailable" in errors[0] and "/no/such/model" in errors[0]


def test_raising_reranker_is_recorded_and_the_fused_order_kept() -> None:
    class Broken:
        def score(self, query: str, passages: Sequence[str]) -> list[float]:
            raise RuntimeError("out of memory")

    state = _merged_state()
    rerank_candidates(state, Broken(), S)
    assert [c.chunk.chunk_id for c in state.candidates] == ["b", "a", "c"]
    assert "reranker failed" in state.errors[0] and "out of memory" in state.errors[0]


def _evidence(state, *items: tuple[str, str, float]) -> None:
    for cid, doc, score in items:
        cand = Candidate(chunk=chunk(cid, f"text {cid}", doc=doc), score=score)
        state.evidence[cand.key] = cand


def test_should_continue_runs_to_min_hops_and_reports_the_round() -> None:
    state, planner = new_state("statins")
    prepare_round_queries(state, planner, S)
    _evidence(state, ("a", "d1", 1.0))
    state.new_evidence = 1
    state.coverage.coverage_scores = {a.aspect: 1.0 for a in state.plan.aspects}
    should_continue(state, planner, S)
    report = state.reports[-1]
    assert report.decision == "continue" and "minimum hops (1/3)" in report.reason
    assert report.round == 1 and report.coverage_percentage == 100.0 and not state.done


def test_should_continue_stops_after_the_no_novelty_streak() -> None:
    state, planner = new_state("statins")
    _evidence(state, ("a", "d1", 1.0))
    state.round, state.new_evidence, state.no_novelty = 4, 0, S.no_novelty_streak - 1
    should_continue(state, planner, S)
    assert state.done and "no new evidence" in state.stop_reason


def test_finalize_sorts_caps_per_document_and_trims() -> None:
    state, _ = new_state("statins")
    _evidence(
        state, ("a1", "A", 0.9), ("a2", "A", 0.8), ("a3", "A", 0.7), ("b1", "B", 0.85), ("c1", "C", 0.1)
    )
    pack = finalize_evidence_pack(state, S.model_copy(update={"per_document_cap": 2, "max_total_docs": 4}))
    assert [c.chunk.chunk_id for c in pack.final_evidence] == ["a1", "b1", "a2", "c1"]


def test_finalize_with_no_evidence_gives_an_empty_pack_and_the_reason() -> None:
    state, _ = new_state("statins")
    pack = finalize_evidence_pack(state, S)
    assert pack.final_evidence == [] and "no evidence found" in pack.stop_reason
    assert pack.coverage.get_weighted_coverage() == 0.0
