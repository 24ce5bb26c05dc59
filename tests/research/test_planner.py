"""QueryPlanner: plans and next hops (aspects, bridges, LLM)."""

from __future__ import annotations

from deepcite.config import ResearchSettings
from deepcite.models import AspectCoverage, AspectType, Candidate
from deepcite.research.planner import QueryPlanner
from deepcite.research.state import BeamEntry, ExecutorState
from research.helpers import StandInLLM, chunk, new_state

S = ResearchSettings()


def test_plan_lists_the_question_first_then_aspect_subquestions() -> None:
    plan = QueryPlanner().plan("compare statins and PCSK9 inhibitors")
    assert plan.subquestions == [
        "compare statins and PCSK9 inhibitors",
        "What are statins?",
        "What are PCSK9 inhibitors?",
    ]
    assert plan.intake.must_preserve_terms == ["PCSK9"]


def test_later_hops_target_uncovered_aspects_by_importance() -> None:
    state, planner = new_state("compare statins and PCSK9 inhibitors")
    state.asked.append(state.plan.question)
    state.coverage.coverage_scores = {"statins": 0.9, "PCSK9 inhibitors": 0.1}
    sub, queries = planner.next_hop(state)
    assert sub == "What are PCSK9 inhibitors?" and queries[0].kind == "aspect"


def test_a_question_of_several_parts_asks_each_part_before_following_the_beam() -> None:
    """Both parts are asked before any candidate the beam read, covered or not: a person asks what they asked
    before following a name met in the evidence."""
    state, planner = new_state("How many Upworkers took part in the study, and what were they paid?")
    state.asked.append(state.plan.question)
    state.beam = [BeamEntry("Jay Bartot", 1.0, ("p", "p"))]
    state.coverage = AspectCoverage(
        aspects=state.plan.aspects, coverage_scores={a.aspect: 1.0 for a in state.plan.aspects}
    )
    asked = []
    for _ in range(3):
        sub, queries = planner.next_hop(state)
        state.asked.append(sub)
        asked.append((sub, queries[0].kind))
        if queries[0].kind == "aspect":
            continue
        break
    assert [kind for _, kind in asked] == ["aspect", "aspect", "bridge"] and "Jay Bartot" in asked[2][0]
    assert asked[0][0] == "How many Upworkers took part in the study?"


def test_a_question_of_one_part_follows_the_beam_first() -> None:
    state, planner = new_state("Where was the director of The Quiet Beacon born?")
    state.asked.append(state.plan.question)
    state.beam = [BeamEntry("Tomas Reyner", 1.0, ("f", "f"))]
    sub, queries = planner.next_hop(state)
    assert queries[0].kind == "bridge" and "Tomas Reyner" in sub


def test_bridge_hop_follows_entities_of_the_best_evidence() -> None:
    state, planner = new_state("Which country was the director of The Quiet Beacon born in?")
    state.asked.append(state.plan.question)
    film = chunk(
        "f",
        "The Quiet Beacon is a 1998 drama film. It was directed by Tomas Reyner.",
        title="The Quiet Beacon",
    )
    state.evidence[("f", "f")] = Candidate(chunk=film, score=1.0)
    state.coverage = AspectCoverage(
        aspects=state.plan.aspects, coverage_scores={a.aspect: 1.0 for a in state.plan.aspects}
    )
    sub, queries = planner.next_hop(state)
    bridges = [q for q in queries if q.kind == "bridge"]
    assert [q.text for q in bridges] == ["Tomas Reyner"]
    assert all(q.parent == ("f", "f") and q.modes == ["bm25"] for q in bridges)
    residual = [q for q in queries if q.kind == "residual"]
    assert residual and "country" in residual[0].text and "beacon" not in residual[0].text.lower()
    assert "Tomas Reyner" in sub
    assert planner.next_hop(state) is None  # the parent is used up and nothing else is known


def test_llm_plans_aspects_and_proposes_the_next_hop() -> None:
    llm = StandInLLM(
        [
            '```json\n{"aspects": [{"aspect": "statin mechanism", "type": "process", "importance": 0.9}]}\n```',
            '{"subquestion": "Which enzyme do statins block?"}',
        ]
    )
    planner = QueryPlanner(llm_client=llm)
    plan = planner.plan("how do statins work")
    assert [(a.aspect, a.aspect_type) for a in plan.aspects] == [("statin mechanism", AspectType.PROCESS)]
    state = ExecutorState(plan=plan, asked=[plan.question])
    sub, queries = planner.next_hop(state)
    # the LLM's sub-question joins the offline hop (the planned aspect's), which keeps its label
    assert sub == "Statin mechanism?" and [q.text for q in queries] == [sub, "Which enzyme do statins block?"]
    assert all(q.subquestion == sub for q in queries)


def test_an_llm_plan_of_a_few_of_the_questions_words_falls_back_to_the_heuristic_plan() -> None:
    """Each aspect shares a term with the question, but together they name 1 of its 7 terms: no plan of it."""
    question = (
        "Who was the first president of the association which published Journal of Psychotherapy Integration?"
    )
    llm = StandInLLM(['{"aspects": [{"aspect": "first", "type": "definition", "importance": 1.0}]}'])
    errors: list[str] = []
    plan = QueryPlanner(llm_client=llm).plan(question, errors=errors)
    assert plan.aspects == QueryPlanner().plan(question).aspects
    assert "name 1 of the question's 7 terms, fewer than 50%" in errors[0]


def test_an_llm_sub_question_off_the_questions_topic_is_not_asked() -> None:
    llm = StandInLLM(['{"aspects": []}', '{"subquestion": "Where was Tomas Reyner born?"}'])
    planner = QueryPlanner(llm_client=llm)
    plan = planner.plan("how do statins work")
    state = ExecutorState(plan=plan, asked=[plan.question])
    hop = planner.next_hop(state)
    assert hop is None or hop[0] != "Where was Tomas Reyner born?"
    assert any("off the question's topic" in e for e in state.errors), state.errors


def test_llm_failures_fall_back_to_heuristics_and_are_recorded() -> None:
    llm = StandInLLM([ConnectionError("LLM down"), "not json at all"])
    planner = QueryPlanner(llm_client=llm)
    errors: list[str] = []
    plan = planner.plan("compare statins and PCSK9 inhibitors", errors=errors)
    assert len(plan.aspects) == 3 and "LLM aspect extraction failed" in errors[0]
    state = ExecutorState(plan=plan, asked=[plan.question])
    sub, _ = planner.next_hop(state)
    assert sub == "What are statins?"
    assert "LLM next sub-question failed" in state.errors[0]
