"""Executor nodes over typed state, without an index: gate, prepare, merge, rerank, should_continue, finalize,
and the pipeline that wires them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from deepcite.config import ResearchSettings, SearchSettings
from deepcite.errors import ConfigError, InputError
from deepcite.models import AspectCoverage, AspectType, Candidate, QueryAspect, SearchMode, Selection
from deepcite.research.aspects import subquestion_for
from deepcite.research.llm_adapters import LLMHyde
from deepcite.research.nodes import (
    executor_gate,
    finalize_evidence_pack,
    merge_candidates,
    node,
    prepare_round_queries,
    rerank_candidates,
    should_continue,
)
from deepcite.research.nodes.should_continue import check_hop_budget, stop_decision
from deepcite.research.pipeline import RESEARCH_PIPELINE
from deepcite.research.state import ExecutorState, QueryResult, RoundQuery
from deepcite.retrieval.fusion import rrf_contribution
from deepcite.retrieval.rerankers import CrossEncoderReranker, load_reranker
from research.helpers import StandInLLM, adapters, chunk, hit, new_state

S = ResearchSettings()


def test_gate_passes_a_valid_plan() -> None:
    state, planner = new_state("compare statins and PCSK9 inhibitors")
    assert executor_gate(state, adapters(planner)).done is False


def test_gate_skips_a_plan_without_searchable_words() -> None:
    state, planner = new_state("what is the?")
    executor_gate(state, adapters(planner))
    assert state.done and "needs no retrieval" in state.stop_reason


def test_gate_refuses_broken_caps() -> None:
    state, planner = new_state("statins")
    executor_gate(state, adapters(planner, settings=S.tuned(retrieval={"modes": [], "k_per_query": 0})))
    assert state.done
    assert "no retrieval modes" in state.skip_reason and "k_per_query" in state.skip_reason
    assert state.errors


def test_first_round_asks_the_question() -> None:
    state, planner = new_state("compare statins and PCSK9 inhibitors")
    prepare_round_queries(state, adapters(planner))
    assert state.round == 1
    assert state.subquestion == "compare statins and PCSK9 inhibitors"
    assert [q.text for q in state.queries] == ["compare statins and PCSK9 inhibitors"]


def test_must_preserve_terms_reach_a_query_verbatim() -> None:
    state, planner = new_state("Is SVT treated with adenosine?")
    state.asked.append(state.plan.question)  # round 1 done: the next hop asks an aspect sub-question
    dosing = QueryAspect(aspect="adenosine dosing", aspect_type=AspectType.DEFINITION, importance=0.9)
    state.plan.aspects.append(dosing)
    state.plan.subquestions.append(subquestion_for(dosing))
    prepare_round_queries(state, adapters(planner))
    assert state.subquestion == subquestion_for(dosing) and "SVT" not in state.subquestion
    assert any("SVT" in q.text and q.kind == "must_preserve" for q in state.queries)


def _hyde_adapters(planner, llm: StandInLLM):
    return adapters(planner, settings=S.tuned(planning={"hyde_enabled": True}), hyde=LLMHyde(llm))


def test_hyde_adds_a_query_through_the_adapter() -> None:
    state, planner = new_state("how do statins lower LDL?")
    llm = StandInLLM(['{"passage": "Statins block HMG-CoA reductase in the liver."}'])
    prepare_round_queries(state, _hyde_adapters(planner, llm))
    assert [q.kind for q in state.queries] == ["subquestion", "hyde"]
    assert state.queries[1].text == "Statins block HMG-CoA reductase in the liver."


def test_hyde_is_skipped_when_the_user_quotes() -> None:
    state, planner = new_state('what does "statin myopathy" mean?')
    llm = StandInLLM(['{"passage": "x"}'])
    prepare_round_queries(state, _hyde_adapters(planner, llm))
    assert all(q.kind != "hyde" for q in state.queries) and llm.calls == []


def test_failing_hyde_is_recorded_and_the_round_goes_on() -> None:
    state, planner = new_state("how do statins lower LDL?")
    llm = StandInLLM([ConnectionError("endpoint down")])
    prepare_round_queries(state, _hyde_adapters(planner, llm))
    assert [q.kind for q in state.queries] == ["subquestion"]
    assert "HyDE failed" in state.errors[0] and "endpoint down" in state.errors[0]


def _merged_state():
    state, planner = new_state("statins")
    prepare_round_queries(state, adapters(planner))
    a, b, c = chunk("a", "statins one"), chunk("b", "statins two"), chunk("c", "statins three")
    q1, q2 = RoundQuery("statins", "statins"), RoundQuery("statin drugs", "statins")
    state.results = [
        QueryResult(q1, SearchMode.BM25, [hit(a, 1, 9.0, SearchMode.BM25), hit(b, 2, 5.0, SearchMode.BM25)]),
        QueryResult(
            q2, SearchMode.DENSE, [hit(b, 1, 0.8, SearchMode.DENSE), hit(c, 2, 0.7, SearchMode.DENSE)]
        ),
    ]
    return merge_candidates(state, adapters(planner)), planner


def test_merge_dedupes_and_fuses_by_rrf_keeping_every_feature() -> None:
    state, _ = _merged_state()
    assert [c.chunk.chunk_id for c in state.candidates] == ["b", "a", "c"]  # b is in both lists
    b = state.candidates[0]
    k = SearchSettings().rrf_k
    assert b.score == b.rrf == pytest.approx(rrf_contribution(2, k) + rrf_contribution(1, k))
    by_list = {(p.mode, p.query_index): (p.rank, p.score) for p in b.provenance}
    assert by_list == {("bm25", 0): (2, 5.0), ("dense", 1): (1, pytest.approx(0.8))}
    assert all(p.round == 1 and p.subquestion == "statins" for p in b.provenance)
    assert state.counts["after_fusion"] == 3


class _StandInCrossEncoder:
    """Stands in for a cross-encoder model object (no weights can be installed offline): it scores a
    passage by how often it says 'three'."""

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[float]:
        return [float(p.count("three")) for _, p in pairs]


def test_rerank_reorders_the_head_and_keeps_the_score_scale() -> None:
    state, planner = _merged_state()
    fused = [c.score for c in state.candidates]
    rerank_candidates(state, adapters(planner, reranker=CrossEncoderReranker(_StandInCrossEncoder())))
    assert state.candidates[0].chunk.chunk_id == "c"
    assert state.candidates[0].rerank == 1.0
    assert [c.score for c in state.candidates] == fused
    assert state.counts["after_rerank"] == 3


def test_rerank_off_keeps_the_order() -> None:
    state, planner = _merged_state()
    rerank_candidates(state, adapters(planner))
    assert [c.chunk.chunk_id for c in state.candidates] == ["b", "a", "c"]


def test_missing_reranker_model_is_recorded_not_raised() -> None:
    errors: list[str] = []
    reranker = load_reranker(
        S.tuned(retrieval={"rerank_enabled": True, "reranker_model": "/no/such/model"}), errors
    )
    assert reranker is None
    assert "reranker unavailable" in errors[0] and "/no/such/model" in errors[0]


def test_raising_reranker_is_recorded_and_the_fused_order_kept() -> None:
    class Broken:
        def score(self, query: str, passages: Sequence[str]) -> list[float]:
            raise RuntimeError("out of memory")

    state, planner = _merged_state()
    rerank_candidates(state, adapters(planner, reranker=Broken()))
    assert [c.chunk.chunk_id for c in state.candidates] == ["b", "a", "c"]
    assert "reranker failed" in state.errors[0] and "out of memory" in state.errors[0]


def _evidence(state, *items: tuple[str, str, float]) -> None:
    for cid, doc, score in items:
        cand = Candidate(chunk=chunk(cid, f"text {cid}", doc=doc), score=score)
        state.evidence[cand.key] = cand


def test_should_continue_runs_to_min_hops_and_reports_the_round() -> None:
    state, planner = new_state("statins")
    prepare_round_queries(state, adapters(planner))
    _evidence(state, ("a", "d1", 1.0))
    state.new_evidence = 1
    state.coverage.coverage_scores = {a.aspect: 1.0 for a in state.plan.aspects}
    should_continue(state, adapters(planner))
    report = state.reports[-1]
    assert report.decision == "continue" and "minimum hops (1/3)" in report.reason
    assert report.round == 1 and report.coverage_percentage == 100.0 and not state.done


def test_should_continue_stops_after_the_no_novelty_streak() -> None:
    state, planner = new_state("statins")
    _evidence(state, ("a", "d1", 1.0))
    state.round, state.new_evidence, state.no_novelty = 4, 0, S.stopping.no_novelty_streak - 1
    state.top_keys = [("d1", "a")]  # the pack's top is what it was after the last round
    should_continue(state, adapters(planner))
    assert state.done and "no new evidence" in state.stop_reason


def test_finalize_sorts_caps_per_document_and_trims() -> None:
    state, planner = new_state("statins")
    _evidence(
        state, ("a1", "A", 0.9), ("a2", "A", 0.8), ("a3", "A", 0.7), ("b1", "B", 0.85), ("c1", "C", 0.1)
    )
    capped = S.tuned(selection={"per_document_cap": 2, "max_total_docs": 4}, ranking={"enabled": False})
    pack = finalize_evidence_pack(state, adapters(planner, settings=capped))
    assert [c.chunk.chunk_id for c in pack.final_evidence] == ["a1", "b1", "a2", "c1"]


def test_finalize_with_no_evidence_gives_an_empty_pack_and_the_reason() -> None:
    state, planner = new_state("statins")
    pack = finalize_evidence_pack(state, adapters(planner))
    assert pack.final_evidence == [] and "no evidence found" in pack.stop_reason
    assert pack.coverage.get_weighted_coverage() == 0.0


def test_should_continue_stops_when_no_round_found_evidence() -> None:
    state, planner = new_state("statins")
    state.round = S.stopping.min_hops
    should_continue(state, adapters(planner))
    assert state.done and state.stop_reason == "no evidence found in any round"


def _coverage(scores: dict[str, float], importance: dict[str, float]) -> AspectCoverage:
    aspects = [
        QueryAspect(aspect=a, aspect_type=AspectType.DEFINITION, importance=i) for a, i in importance.items()
    ]
    return AspectCoverage(aspects=aspects, coverage_scores=scores)


@pytest.mark.parametrize(
    ("hop", "scores", "streak", "go_on", "reason"),
    [
        (10, {"a": 0.0, "b": 0.0}, 0, False, "hop limit"),
        (2, {"a": 1.0, "b": 1.0}, 5, True, "minimum hops"),
        (4, {"a": 0.1, "b": 0.0}, 2, False, "no new evidence"),
        (3, {"a": 0.9, "b": 0.9}, 0, False, "all core aspects covered"),
        (3, {"a": 0.2, "b": 0.9}, 0, True, "core aspects not yet covered: a"),
        (3, {"a": 0.9, "b": 0.0}, 0, True, "weighted coverage"),
    ],
)
def test_stop_decision(hop: int, scores: dict, streak: int, go_on: bool, reason: str) -> None:
    settings = S.tuned(stopping={"min_hops": 3, "max_hops": 10})
    cov = _coverage(scores, {"a": 1.0, "b": 0.5})
    decision, why = stop_decision(settings, cov, hop, no_novelty_streak=streak)
    assert decision is go_on and reason in why


def test_quality_stopping_when_coverage_is_disabled() -> None:
    settings = S.tuned(stopping={"min_hops": 1, "max_hops": 5}, coverage={"enabled": False})
    cov = _coverage({"a": 0.0}, {"a": 1.0})
    assert stop_decision(settings, cov, 1, evidence_quality=0.2)[0] is True
    go_on, why = stop_decision(settings, cov, 1, evidence_quality=0.8)
    assert go_on is False and "coverage off" in why


def test_invalid_hop_budget_is_refused() -> None:
    with pytest.raises(InputError, match="min_hops"):
        check_hop_budget(S.tuned(stopping={"min_hops": 5, "max_hops": 2}))


def test_the_pipeline_lists_the_design_nodes_in_order() -> None:
    assert RESEARCH_PIPELINE.gate.name == "executor_gate"
    assert [n.name for n in RESEARCH_PIPELINE.round] == [
        "prepare_round_queries",
        "run_retrieval",
        "merge_candidates",
        "rerank_candidates",
        "select_evidence",
        "choose_next_hop",
        "follow_chain",
        "read_bridge",
        "propose_bridge_queries",
        "add_web_evidence",
        "grade_coverage",
        "should_continue",
    ]
    assert RESEARCH_PIPELINE.finalize.name == "finalize_evidence_pack"


def test_a_node_declaring_an_unknown_state_field_is_refused() -> None:
    with pytest.raises(TypeError, match="no_such_field"):

        @node(reads=("no_such_field",), writes=())
        def broken(state: ExecutorState, adapters) -> ExecutorState:
            return state


def test_a_pipeline_node_can_be_swapped_or_added_without_touching_the_loop() -> None:
    @node(reads=("round",), writes=("done", "stop_reason"))
    def stop_after_one(state: ExecutorState, adapters) -> ExecutorState:
        state.done, state.stop_reason = True, "one round is enough"
        return state

    calls: list[int] = []

    @node(reads=("round",), writes=())
    def count_rounds(state: ExecutorState, adapters) -> ExecutorState:
        calls.append(state.round)
        return state

    pipeline = RESEARCH_PIPELINE.replaced("run_retrieval", count_rounds).inserted_after(
        "prepare_round_queries", stop_after_one
    )
    assert [n.name for n in pipeline.round][:3] == ["prepare_round_queries", "stop_after_one", "count_rounds"]
    state, planner = new_state("statins")
    pack = pipeline.run(state, adapters(planner))
    assert state.round == 1 and calls == [] and pack.stop_reason.startswith("no evidence found")
    with pytest.raises(ConfigError, match="run_retrieval"):
        RESEARCH_PIPELINE.replaced("no_such_node", count_rounds)


def test_with_novelty_top_k_a_round_is_new_only_when_it_changes_the_packs_top() -> None:
    top2 = S.tuned(
        stopping={"novelty_top_k": 2, "min_hops": 1, "no_novelty_streak": 2}, ranking={"enabled": False}
    )
    state, planner = new_state("statins", top2)
    run = adapters(planner, settings=top2)
    state.round = 1
    _evidence(state, ("a", "A", 0.9), ("b", "B", 0.8))
    state.new_evidence = 2
    should_continue(state, run)
    assert state.no_novelty == 0 and state.top_keys == [("A", "a"), ("B", "b")]
    state.round = 2
    _evidence(state, ("c", "C", 0.1))  # new, but below the top two
    state.new_evidence = 1
    should_continue(state, run)
    assert state.no_novelty == 1 and not state.done
    state.round = 3
    _evidence(state, ("d", "D", 0.95))
    should_continue(state, run)
    assert state.no_novelty == 0 and state.top_keys[0] == ("D", "d")
    state.round = 4
    state.new_evidence = 0
    should_continue(state, run)
    state.round = 5
    should_continue(state, run)
    assert state.done and state.stop_reason == "no new evidence for 2 rounds"


def test_add_evidence_holds_a_copy_then_folds_later_findings_into_it() -> None:
    state, _ = new_state("Do statins prevent stroke?")
    first = Candidate(
        chunk=chunk("a", "Statins cut stroke."),
        score=0.5,
        selections=[Selection(round=1, rank=1, relevance=0.9)],
        subquestions=["statins"],
    )
    held, new = state.add_evidence(first)
    assert new and held is not first and held == first  # a copy: later edits of the round's list stay out
    again = first.model_copy(
        update={"score": 0.3, "rerank": 2.0, "selections": [Selection(round=2, rank=4, relevance=0.4)]}
    )
    held, new = state.add_evidence(again.model_copy(update={"subquestions": ["statins", "stroke"]}))
    assert not new and held is state.evidence[first.key]
    assert (held.score, held.rerank, held.first_round) == (0.5, 2.0, 1)  # best score, latest rerank
    assert [s.round for s in held.selections] == [1, 2] and held.subquestions == ["statins", "stroke"]
    late = Candidate(
        chunk=chunk("b", "Stroke risk."), score=0.5, selections=[Selection(round=2, rank=1, relevance=1)]
    )
    state.add_evidence(late)
    assert [c.chunk.chunk_id for c in state.best_evidence()] == ["a", "b"]  # ties: the earlier round first
    assert [c.chunk.chunk_id for c in state.best_evidence(1)] == ["a"]
