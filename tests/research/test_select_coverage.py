"""run_retrieval, select_evidence and grade_coverage on a real small index (Edge store, real MiniLM)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from deepcite.config import ResearchSettings, Settings
from deepcite.models import AspectType, QueryAspect
from deepcite.research.llm_adapters import LLMCoverageGrader
from deepcite.research.nodes import (
    grade_coverage,
    merge_candidates,
    prepare_round_queries,
    run_retrieval,
    select_evidence,
)
from deepcite.research.nodes.finalize_evidence_pack import pack_order
from deepcite.research.nodes.grade_coverage import keyword_score, similarity_score
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.mmr import mmr_order
from research.helpers import StandInLLM, adapters, new_state

S = ResearchSettings()


def test_mmr_prefers_a_diverse_second_pick() -> None:
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert mmr_order(np.array([1.0, 0.95, 0.9]), vectors, lam=0.7, limit=2) == [0, 2]
    assert mmr_order(np.array([1.0, 0.95, 0.9]), vectors, lam=1.0, limit=2) == [0, 1]


def test_mmr_caps_items_per_document_and_spreads_groups() -> None:
    vectors = np.eye(4)
    rel = np.array([1.0, 0.9, 0.8, 0.1])
    picked = mmr_order(rel, vectors, lam=1.0, limit=3, doc_ids=["a", "a", "a", "b"], doc_cap=2)
    assert picked == [0, 1, 3]
    spread = mmr_order(rel, vectors, lam=1.0, limit=2, groups=["x", "x", "x", "y"], spread_bonus=1.0)
    assert spread == [0, 3]


def test_keyword_and_similarity_scores() -> None:
    definition = QueryAspect(
        aspect="statins", aspect_type=AspectType.DEFINITION, importance=1.0, keywords=["statins"]
    )
    assert keyword_score(definition, [{"statin"}], [set()]) == 0.0  # named in the body only, not the lead
    assert keyword_score(definition, [{"statin"}], [{"statin"}]) == 1.0
    comparison = QueryAspect(
        aspect="a vs b", aspect_type=AspectType.COMPARISON, importance=1.0, keywords=["alpha", "beta"]
    )
    assert keyword_score(comparison, [{"alpha"}, {"beta"}], [set(), set()]) == 1.0
    assert similarity_score(np.array([0.5]), 0.25, 0.75) == pytest.approx(0.5)
    assert similarity_score(np.array([0.9]), 0.25, 0.75) == 1.0


def _round(collection: Collection, question: str, settings: ResearchSettings = S):
    state, planner = new_state(question, settings)
    ctx = adapters(planner, collection, settings)
    prepare_round_queries(state, ctx)
    run_retrieval(state, ctx)
    merge_candidates(state, ctx)
    return state, ctx


@pytest.mark.slow
def test_run_retrieval_records_provenance(research_collection: Collection) -> None:
    state, _ = _round(research_collection, "What is the most common side effect of statins?")
    assert state.counts["before_fusion"] > 0 and state.results[0].mode == "hybrid"
    top = state.candidates[0]
    assert top.chunk.doc_id == "statins-safety"
    assert top.provenance[0].round == 1 and top.provenance[0].kind == "subquestion"


@pytest.mark.slow
def test_failing_search_is_recorded_and_the_round_goes_on(
    research_collection: Collection, fixture_settings: Settings
) -> None:
    dropped = open_collection("dropped-for-test", fixture_settings, embedder=research_collection.embedder)
    state, _ = _round(dropped, "statins")
    assert state.results == [] and "search for 'statins' failed" in state.errors[0]


@pytest.mark.slow
def test_select_evidence_caps_documents_keeps_subquestion_evidence_and_scores_by_rank(
    research_collection: Collection,
) -> None:
    settings = S.tuned(selection={"max_docs_per_round": 4})
    state, ctx = _round(research_collection, "statins LDL cholesterol", settings)
    select_evidence(state, ctx)
    assert 0 < len(state.selected) <= 4 and state.new_evidence == len(state.selected)
    assert set(state.evidence) == {c.key for c in state.selected}
    assert (
        state.subquery_evidence["statins LDL cholesterol"][0].chunk.chunk_id
        == state.selected[0].chunk.chunk_id
    )
    scores = [c.score for c in state.selected]
    assert scores == sorted(scores, reverse=True) and scores[0] == pytest.approx(
        1 / (1 + settings.selection.rank_k)
    )
    docs = [c.chunk.doc_id for c in state.selected]
    assert all(docs.count(d) <= settings.selection.per_document_cap for d in docs)


@pytest.mark.slow
def test_the_first_rounds_tail_joins_the_pack_at_the_end_only(research_collection: Collection) -> None:
    """With ``first_round_tail`` the first round's next passages after its selection are kept apart: not
    evidence (no hop reads them, coverage and the stop decision do not count them), in the final pack."""
    settings = S.tuned(selection={"max_docs_per_round": 2, "first_round_tail": 3})
    state, ctx = _round(research_collection, "statins LDL cholesterol", settings)
    assert len(state.candidates) > 2
    select_evidence(state, ctx)
    assert len(state.selected) == 2 and set(state.evidence) == {c.key for c in state.selected}
    assert 0 < len(state.tail) <= 3 and not {c.key for c in state.tail} & set(state.evidence)
    assert max(c.score for c in state.tail) < min(c.score for c in state.selected)
    assert {c.key for c in pack_order(state, ctx)} == set(state.evidence)
    assert {c.key for c in pack_order(state, ctx, tail=True)} == set(state.evidence) | {
        c.key for c in state.tail
    }
    assert S.selection.first_round_tail == 10  # on by default; profile no_first_round_tail: off
    off = S.tuned(selection={"first_round_tail": 0})
    untouched, ctx = _round(research_collection, "statins LDL cholesterol", off)
    select_evidence(untouched, ctx)
    assert untouched.tail == []


@pytest.mark.slow
def test_a_later_round_selecting_a_tail_passage_meets_a_new_record_not_the_tails(
    research_collection: Collection,
) -> None:
    """The tail holds copies: a later round that selects one of its passages selects that round's own record of it
    (merge_candidates builds new ones each round), so the tail's copy keeps its one first-round selection and
    score, and the pack holds the passage once, as the evidence has it (no selection counted twice)."""
    settings = S.tuned(selection={"max_docs_per_round": 2, "first_round_tail": 3})
    state, ctx = _round(research_collection, "statins LDL cholesterol", settings)
    select_evidence(state, ctx)
    kept = [(c.key, c.score, list(c.selections)) for c in state.tail]
    state.round = 2  # the same searches again as a later round, the passages held already left out
    merge_candidates(state, ctx)
    state.candidates = [c for c in state.candidates if c.key not in state.evidence]
    select_evidence(state, ctx)
    met = {c.key for c in state.selected} & {c.key for c in state.tail}
    assert met  # the later round selected a passage of the tail
    assert all(t is not c for t in state.tail for c in [*state.selected, *state.evidence.values()])
    assert [(c.key, c.score, c.selections) for c in state.tail] == kept
    assert all(len(c.selections) == 1 and c.selections[0].round == 1 for c in state.tail)
    pack = pack_order(state, ctx, tail=True)
    keys = [c.key for c in pack]
    assert len(keys) == len(set(keys)) and set(keys) == set(state.evidence) | {c.key for c in state.tail}
    for cand in pack:
        if cand.key in met:
            assert [s.round for s in cand.selections] == [2]  # the evidence's record, not the tail's copy


@pytest.mark.slow
def test_must_preserve_passages_come_first(research_collection: Collection) -> None:
    settings = S.tuned(selection={"must_preserve_boost": 1.0, "max_docs_per_round": 3})
    state, ctx = _round(research_collection, "Which drug lowers LDL, e.g. evolocumab?", settings)
    select_evidence(state, ctx)
    assert "evolocumab" in (state.selected[0].chunk.text + state.selected[0].chunk.title).lower()


@pytest.mark.slow
def test_grade_coverage_rises_with_the_right_evidence(research_collection: Collection) -> None:
    settings = S.tuned(selection={"max_docs_per_round": 1})
    state, ctx = _round(research_collection, "What is ezetimibe?", settings)
    grade_coverage(state, ctx)
    assert state.coverage.coverage_scores == {"ezetimibe": 0.0}  # nothing selected yet
    select_evidence(state, ctx)
    grade_coverage(state, ctx)
    assert state.selected[0].chunk.title == "Ezetimibe"
    assert state.coverage.coverage_scores["ezetimibe"] >= settings.coverage.threshold
    assert state.coverage.covered_by_hop == {"ezetimibe": 1}
    assert state.quality > 0.3


@pytest.mark.slow
def test_llm_grader_scores_and_its_failure_falls_back(research_collection: Collection) -> None:
    state, ctx = _round(research_collection, "What is ezetimibe?")
    select_evidence(state, ctx)
    llm = StandInLLM(['{"scores": {"ezetimibe": 0.2}, "contradictions": []}', TimeoutError("slow LLM")])
    ctx = replace(ctx, grader=LLMCoverageGrader(llm))
    grade_coverage(state, ctx)
    assert (
        state.coverage.coverage_scores["ezetimibe"] == 0.2
        and "ezetimibe" not in state.coverage.covered_by_hop
    )
    grade_coverage(state, ctx)
    assert state.coverage.coverage_scores["ezetimibe"] > 0.5
    assert "coverage grader failed" in state.errors[-1] and "slow LLM" in state.errors[-1]


@pytest.mark.slow
def test_an_llm_grade_can_lower_the_heuristic_and_raises_it_only_when_set_to(
    research_collection: Collection,
) -> None:
    """A small model that calls every aspect covered cannot end the research before the offline grade would:
    its score replaces the heuristic's only where it is lower, unless ``coverage.llm_may_raise``."""
    state, ctx = _round(research_collection, "Which statin did the Norwegian trial of 1987 test?")
    select_evidence(state, ctx)
    grade_coverage(state, ctx)
    offline = dict(state.coverage.coverage_scores)
    aspect = min(offline, key=offline.__getitem__)
    assert offline[aspect] < S.coverage.threshold  # not covered offline
    for may_raise, grade, expected in ((False, 1.0, offline[aspect]), (False, 0.1, 0.1), (True, 1.0, 1.0)):
        settings = S.tuned(coverage={"llm_may_raise": may_raise})
        llm = StandInLLM([json.dumps({"scores": {aspect: grade}, "contradictions": []})])
        grade_coverage(state, replace(ctx, settings=settings, grader=LLMCoverageGrader(llm)))
        assert state.coverage.coverage_scores[aspect] == pytest.approx(expected)
        assert (aspect in state.coverage.covered_by_hop) is may_raise
