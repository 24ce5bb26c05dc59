"""The planner's offline sub-questions read like a person's, and bridge hops name real entities."""

from __future__ import annotations

from deepcite.models import AspectType, Candidate
from deepcite.research.planner import QueryPlanner
from research.helpers import chunk, new_state


def test_offline_subquestions_read_like_a_persons() -> None:
    plan = QueryPlanner().plan("Does atrial fibrillation increase the risk of stroke, and how is it treated?")
    assert plan.subquestions == [
        "Does atrial fibrillation increase the risk of stroke, and how is it treated?",
        "Does atrial fibrillation increase the risk of stroke?",
        "How is atrial fibrillation treated?",
    ]
    for sub in plan.subquestions:
        assert "advantages, disadvantages" not in sub and "uses and examples" not in sub
        assert sub[0].isupper() and sub.endswith("?")


def test_evaluation_and_application_aspects_are_asked_as_questions() -> None:
    from deepcite.models import QueryAspect
    from deepcite.research.aspects import subquestion_for

    def ask(text: str, kind: AspectType) -> str:
        return subquestion_for(QueryAspect(aspect=text, aspect_type=kind, importance=1.0))

    assert (
        ask("statin therapy", AspectType.EVALUATION) == "What are the benefits and risks of statin therapy?"
    )
    assert ask("advantages of robotic surgery", AspectType.EVALUATION) == (
        "What is known about the advantages of robotic surgery?"
    )
    assert ask("aspirin", AspectType.APPLICATION) == "How is aspirin used?"
    assert ask("compare statins and PCSK9 inhibitors", AspectType.COMPARISON) == (
        "How do statins and PCSK9 inhibitors compare?"
    )


def test_bridge_hops_name_real_entities_not_sentence_openers() -> None:
    state, planner = new_state("Does atrial fibrillation increase the risk of stroke?")
    state.asked.append(state.plan.question)
    text = (
        "People with atrial fibrillation have more strokes. Patients on Warfarin bled less often. "
        "Researchers at the Framingham Heart Study followed them."
    )
    state.evidence[("a", "a")] = Candidate(chunk=chunk("a", text, title=""), score=1.0)
    sub, queries = planner.next_hop(state)
    followed = [q.focus for q in queries if q.kind == "bridge"]
    assert "Warfarin" in followed and "Framingham Heart Study" in followed
    assert not {"People", "Patients", "Researchers"} & set(followed)
    assert sub == "What is known about Warfarin and Framingham Heart Study?"
