"""The ResearchAgent end to end on a real small index (Edge store, real MiniLM, the fixture corpus)."""

from __future__ import annotations

import pytest

from deepcite.config import ResearchSettings, Settings
from deepcite.engine import Engine
from deepcite.errors import CollectionNotFoundError, InputError
from deepcite.models import Filters
from deepcite.research.agent import ResearchAgent
from deepcite.research.llm_adapters import LLMCoverageGrader
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.rerankers import load_reranker
from research.helpers import StandInLLM

pytestmark = pytest.mark.slow

COMPARISON = "Compare statins and PCSK9 inhibitors"


def _agent(collection: Collection, **kwargs) -> ResearchAgent:
    return ResearchAgent(collection, ResearchSettings(), **kwargs)


def test_coverage_rises_across_hops_for_a_comparison(research_collection: Collection) -> None:
    # one passage per hop, so what each hop adds shows in the coverage
    settings = ResearchSettings().tuned(selection={"max_docs_per_round": 1})
    result = ResearchAgent(research_collection, settings).process(COMPARISON)
    reports = result.pack.retrieval_report
    weighted = [r.weighted_coverage for r in reports]
    assert len(reports) >= 3
    assert weighted == sorted(weighted)  # evidence only grows, so coverage never falls
    assert weighted[-1] > weighted[0]
    aspects = {a.aspect: a for a in result.coverage.aspects}
    assert set(aspects) == {COMPARISON, "statins", "PCSK9 inhibitors"}
    assert any((a.covered_at_hop or 0) > 1 for a in aspects.values())  # a later hop covered something
    asked = [r.subquestion for r in reports]
    assert asked[0] == COMPARISON and len(set(asked)) == len(asked)  # the question first, nothing asked twice
    titles = {c.chunk.title for c in result.pack.final_evidence}
    assert {"Statins", "PCSK9 inhibitors"} <= titles
    coverage = result.coverage
    assert coverage.enabled is True and coverage.total_aspects == 3
    assert coverage.uncovered_aspects == reports[-1].uncovered_aspects


def test_each_subquestion_keeps_its_own_evidence(research_collection: Collection) -> None:
    pack = _agent(research_collection).process(COMPARISON).pack
    assert set(pack.subquery_evidence) == {r.subquestion for r in pack.retrieval_report}
    for sub, evidence in pack.subquery_evidence.items():
        assert evidence and all(sub in c.subquestions for c in evidence)
    report = pack.retrieval_report[0]
    assert report.candidates_before_fusion >= report.candidates_after_fusion > 0
    assert report.selected and report.selected[0].chunk_id
    first = pack.final_evidence[0]
    assert first.provenance[0].round == 1 and first.provenance[0].mode == "hybrid"
    assert first.selections[0].round == first.first_round == 1


def test_bridge_hop_follows_the_entity_found_in_evidence(research_collection: Collection) -> None:
    result = _agent(research_collection).process(
        "Which country was the director of The Quiet Beacon born in?"
    )
    by_title = {c.chunk.title: c for c in result.pack.final_evidence}
    assert "The Quiet Beacon" in by_title and "Tomas Reyner" in by_title
    kinds = {p.kind for p in by_title["Tomas Reyner"].provenance}
    assert "bridge" in kinds
    # a later round asks about the entity found in the first round's evidence ("What is known about …?")
    bridge_hops = [r for r in result.pack.retrieval_report[1:] if "Tomas Reyner" in r.subquestion]
    assert bridge_hops
    ranked = [c.chunk.title for c in result.pack.final_evidence]
    assert ranked.index("Tomas Reyner") < 5


def test_zero_hits_give_an_empty_pack_with_the_reason(research_collection: Collection) -> None:
    result = _agent(research_collection).process("statins", filters=Filters(year_from=3000))
    assert result.pack.final_evidence == []
    assert "no evidence found" in result.pack.stop_reason
    assert result.coverage.weighted_coverage == 0.0


def test_long_question_is_truncated_with_a_warning(research_collection: Collection) -> None:
    result = _agent(research_collection).process("statins lower LDL cholesterol " * 700)
    assert len(result.question) <= ResearchSettings().planning.max_question_chars
    assert any("characters" in w for w in result.pack.warnings)
    assert result.pack.final_evidence


def test_empty_question_is_refused(research_collection: Collection) -> None:
    with pytest.raises(InputError, match="empty"):
        _agent(research_collection).process("   ")


def test_unknown_collection_names_the_known_ones(
    research_collection: Collection, fixture_settings: Settings
) -> None:
    engine = Engine(fixture_settings, store=research_collection.store, embedder=research_collection.embedder)
    with pytest.raises(CollectionNotFoundError, match="research-fixture"):
        engine.corpus.collection("no-such-collection")


def test_failing_llm_and_missing_reranker_are_recorded_and_rounds_go_on(
    research_collection: Collection,
) -> None:
    llm = StandInLLM([ConnectionError("LLM endpoint down")] * 20)
    settings = ResearchSettings().tuned(
        retrieval={"rerank_enabled": True, "reranker_model": "/no/such/cross-encoder"}
    )
    notes: list[str] = []  # what the Engine does: load the reranker once, hand the agent what went wrong
    reranker = load_reranker(settings, notes)
    agent = ResearchAgent(
        research_collection,
        settings,
        llm_client=llm,
        reranker=reranker,
        grader=LLMCoverageGrader(llm),
        notes=notes,
    )
    result = agent.process(COMPARISON)
    errors = "\n".join(result.pack.errors)
    assert "reranker unavailable" in errors
    assert "LLM aspect extraction failed" in errors and "coverage grader failed" in errors
    assert result.hops >= 3 and result.pack.final_evidence
    assert len(result.coverage.aspects) == 3  # heuristic aspects stood in


def test_llm_steps_are_used_when_the_llm_answers(research_collection: Collection) -> None:
    grade = '{"scores": {"statin mechanism": 0.95}, "contradictions": ["trial A and B disagree"]}'
    llm = StandInLLM(
        [
            '{"aspects": [{"aspect": "statin mechanism", "type": "process", "importance": 1.0}]}',
            grade,  # hop 1 grading
            '{"subquestion": "How do statins block HMG-CoA reductase?"}',
            grade,
            '{"subquestion": "Which statins are used?"}',
            grade,
        ]
    )
    # the grade stands as the LLM gave it
    settings = ResearchSettings().tuned(coverage={"llm_may_raise": True})
    agent = ResearchAgent(research_collection, settings, llm_client=llm, grader=LLMCoverageGrader(llm))
    result = agent.process("how do statins work")
    # the LLM's sub-questions join the offline hops of rounds 2 and 3 (their labels); they take neither's place
    rounds = [r.queries for r in result.pack.retrieval_report]
    for hop, proposed in ((1, "How do statins block HMG-CoA reductase?"), (2, "Which statins are used?")):
        assert rounds[hop][-1] == proposed and len(rounds[hop]) > 1
        assert result.subquestions[hop] not in (proposed, "")
    assert result.pack.coverage.coverage_scores == {"statin mechanism": 0.95}
    assert result.pack.coverage.contradictions == ["trial A and B disagree"]
    assert result.pack.stop_reason.startswith("all core aspects covered")
