"""The research engine's LLM steps against the real llama.cpp server (SmolLM2): planning (aspects, the next
sub-question), HyDE, coverage grading and the next hop each send one request the server accepts, and what they
return is the model's own reply, fitted to its schema and checked (a step that fell back offline, or never
asked, fails here). The planner's and the grader's guards are shown firing on what the model really writes,
and a whole research run with the model in the loop says which steps the model wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepcite.config import NextHopSettings, ResearchSettings, Settings, StoppingSettings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.llm.deadline import request_budget
from deepcite.llm.json import extract_json
from deepcite.models import AspectType, EvidencePack, QueryAspect
from deepcite.research import llm_adapters
from deepcite.research.agent import ResearchAgent
from deepcite.research.chain import STEPS_SCHEMA, decompose, is_linear
from deepcite.research.planner import QueryPlanner
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder
from llm_real.conftest import CountingClient

pytestmark = pytest.mark.real_llm

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "research" / "chain_corpus.jsonl"
QUESTION = "Who is the spouse of the performer of Velvet Harbor?"
MED_QUESTION = "Does warfarin prevent stroke in atrial fibrillation?"
GLUCOSE_QUESTION = "Does metformin lower blood glucose in type 2 diabetes?"
PASSAGES = [
    "Velvet Harbor is the third studio album performed by Orla Brennick, released in 2004.",
    "Orla Brennick (born 1971) is an Irish folk singer. She has been married to the sculptor Tomas Vell since 1999.",
]


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Collection:
    settings = Settings(data_dir=tmp_path_factory.mktemp("real-llm-research"))
    collection = open_collection("chain", settings, embedder=minilm)
    IngestPipeline(collection).ingest(CORPUS, fmt="jsonl")
    return collection


def only_reply(client: CountingClient) -> dict:
    """The one JSON reply the model sent (the step asked exactly once)."""
    assert len(client.calls) == 1, [c.reply for c in client.calls]
    return extract_json(client.calls[0].reply)


def proposed_aspects(client: CountingClient) -> list[dict]:
    return list(extract_json(client.calls[-1].reply)["aspects"])


# the model's plans name few of a question's terms: the tests of how its aspects are fitted set the share
# guard aside, which test_a_plan_of_one_of_the_questions_terms_falls_back_to_the_heuristic_one shows firing
ANY_SHARE = ResearchSettings().tuned(planning={"llm_min_question_share": 0.0})


def test_planning_aspects_are_the_models_typed_and_bounded(make_client) -> None:
    client = make_client()
    settings = ANY_SHARE
    aspects = llm_adapters.llm_aspects(client, MED_QUESTION, settings)
    proposed = [str(a.get("aspect", "")).strip() for a in only_reply(client)["aspects"]]
    assert aspects and {a.aspect for a in aspects} <= set(proposed)
    assert len(aspects) <= settings.planning.llm_max_aspects
    for aspect in aspects:
        assert (
            isinstance(aspect.aspect_type, AspectType) and 0.0 <= aspect.importance <= 1.0 and aspect.keywords
        )
        assert llm_adapters.shares_terms(aspect.aspect, MED_QUESTION, at_least=1)


def test_the_models_repeated_aspects_with_importances_above_one_are_merged_and_clamped(make_client) -> None:
    """What SmolLM2 really plans for this question: "blood glucose" three times, importances 1.5, 2 and 3. The
    schema refused that whole plan before; now it is one aspect of importance 1."""
    client = make_client()
    aspects = llm_adapters.llm_aspects(client, GLUCOSE_QUESTION, ANY_SHARE)
    raw = proposed_aspects(client)
    assert len(raw) > len({a["aspect"] for a in raw}) and max(float(a["importance"]) for a in raw) > 1
    assert [a.aspect for a in aspects] == list(dict.fromkeys(a["aspect"] for a in raw))
    assert all(0.0 <= a.importance <= 1.0 for a in aspects)


def test_the_planner_plans_with_the_models_aspects_and_says_so(make_client) -> None:
    client = make_client()
    with request_budget(1800.0) as budget:
        plan = QueryPlanner(settings=ANY_SHARE, llm_client=client).plan(MED_QUESTION)
    assert len(client.calls) == 1
    assert [(w.part, w.writer) for w in budget.written()] == [("plan", "llm")]
    proposed = {str(a.get("aspect", "")).strip() for a in proposed_aspects(client)}
    assert {a.aspect for a in plan.aspects} <= proposed and plan.subquestions[0] == MED_QUESTION


def test_a_plan_of_one_of_the_questions_terms_falls_back_to_the_heuristic_one(make_client) -> None:
    """The guard on the model's real reply: for this question SmolLM2 plans "stroke", 1 of the question's 5
    terms; the planner plans offline and says why."""
    client = make_client()
    errors: list[str] = []
    with request_budget(1800.0) as budget:
        plan = QueryPlanner(settings=ResearchSettings(), llm_client=client).plan(MED_QUESTION, errors=errors)
    assert len(client.calls) == 1
    assert errors and "of the question's 5 terms, fewer than 50%" in errors[0], errors
    assert [(w.part, w.writer) for w in budget.written()] == [("plan", "offline")]
    assert plan.aspects == QueryPlanner().plan(MED_QUESTION).aspects


def test_an_off_topic_plan_from_the_model_falls_back_to_the_heuristic_one(make_client) -> None:
    """The guard on the model's real reply: for this question SmolLM2 plans "description" twice, which shares no
    term with the question; the planner plans offline and says why."""
    client = make_client()
    errors: list[str] = []
    with request_budget(1800.0) as budget:
        plan = QueryPlanner(settings=ResearchSettings(), llm_client=client).plan(QUESTION, errors=errors)
    assert len(client.calls) == 1  # the model answered; its reply was refused, not never asked for
    assert errors and "on the question's topic" in errors[0], errors
    (written,) = budget.written()
    assert written.part == "plan" and written.writer == "offline" and written.reason == "unusable reply"
    proposed = {str(a.get("aspect", "")).strip() for a in proposed_aspects(client)}
    assert plan.aspects and not {a.aspect for a in plan.aspects} & proposed


def test_next_subquestion_is_the_models(make_client) -> None:
    client = make_client()
    sub = llm_adapters.llm_next_subquestion(client, QUESTION, ["spouse"], PASSAGES, [QUESTION])
    assert sub and sub == str(only_reply(client)["subquestion"]).strip()


def test_hyde_writes_the_models_passage(make_client) -> None:
    client = make_client()
    passage = llm_adapters.LLMHyde(client).generate("What do statins inhibit?")
    assert len(passage.split()) >= 3 and passage == str(only_reply(client)["passage"]).strip()


ASPECTS = [
    QueryAspect(aspect="performer of Velvet Harbor", aspect_type=AspectType.DEFINITION, importance=1.0),
    QueryAspect(aspect="spouse of the performer", aspect_type=AspectType.DEFINITION, importance=1.0),
]


def test_coverage_grading_scores_every_aspect_with_the_models_scores(make_client) -> None:
    """The schema names each aspect, so the grammar makes the model score exactly those; a score out of
    [0, 1] is clamped, not the grade refused."""
    client = make_client()
    scores, contradictions = llm_adapters.llm_coverage(client, ASPECTS, PASSAGES)
    raw = only_reply(client)["scores"]
    assert set(scores) == {a.aspect for a in ASPECTS}
    assert scores == {a: min(1.0, max(0.0, float(raw[a]))) for a in scores}
    assert all(isinstance(c, str) for c in contradictions)
    assert client.calls[0].schema is not None
    assert json.dumps(client.calls[0].schema).count("performer of Velvet Harbor") >= 2  # key and required


def test_next_hop_choice_is_the_models(make_client) -> None:
    client = make_client()
    chooser = llm_adapters.LLMHopChooser(
        client, NextHopSettings(enabled=True), chars_per_token=4.0, min_shared_terms=1
    )
    choice = chooser.choose(QUESTION, [("Velvet Harbor", PASSAGES[0])], [QUESTION])
    reply = only_reply(client)
    assert (choice.answered, choice.next_query) == (bool(reply["answered"]), str(reply["next_query"]).strip())
    # the one passage shown is number 1: any other number the model names is dropped
    named = [n for n in reply.get("supporting") or [] if isinstance(n, int) and not isinstance(n, bool)]
    assert choice.supporting == ((0,) if 1 in named else ())


def test_research_with_the_model_in_the_loop_says_which_steps_it_wrote(
    chain: Collection, make_client
) -> None:
    """The plan is refused (off topic, as above) and planned offline; the coverage grade is the model's where
    it is below the offline grade of the same evidence, which it cannot raise (coverage.llm_may_raise off)."""
    client = make_client()
    settings = ResearchSettings(stopping=StoppingSettings(min_hops=1, max_hops=1))
    agent = ResearchAgent(chain, settings, llm_client=client, grader=llm_adapters.LLMCoverageGrader(client))
    with request_budget(1800.0) as budget:
        result = agent.process(QUESTION)
    assert result.pack.final_evidence and result.hops >= 1 and result.subquestions
    written = {w.part: w for w in budget.written()}
    assert (written["plan"].writer, written["plan"].reason) == ("offline", "unusable reply")
    assert written["coverage grade"].writer == "llm", written
    grades = [c for c in client.calls if "how fully the passages support" in c.messages[0]["content"]]
    assert len(grades) == 1 and len(client.calls) >= 2
    offline = ResearchAgent(chain, settings).process(QUESTION).pack.coverage.coverage_scores
    graded = {a: min(1.0, max(0.0, float(v))) for a, v in extract_json(grades[0].reply)["scores"].items()}
    kept = result.pack.coverage.coverage_scores
    assert kept == {a: min(graded[a], offline[a]) if a in graded else offline[a] for a in offline}


def test_the_models_decomposition_is_asked_and_used_or_refused_for_a_reason(make_client) -> None:
    """The plan of a composed question asks the model for its chain of steps (the schema the server enforces).
    A linked chain from the model is the plan's; a verdict of one hop leaves the rules' chain, noted as written
    offline; an unusable reply leaves the rules' chain with the failure in the plan's errors."""
    client = make_client()
    settings = ResearchSettings().tuned(bridge={"decompose": True, "llm_decompose": True})
    errors: list[str] = []
    with request_budget(1800.0) as budget:
        plan = QueryPlanner(settings=settings, llm_client=client).plan(QUESTION, errors=errors)
    asked = [c for c in client.calls if c.schema == STEPS_SCHEMA]
    assert len(asked) == 1 and QUESTION in asked[0].messages[-1]["content"]
    rules = decompose(QUESTION, max_hops=settings.stopping.max_hops)
    written = {w.part: w for w in budget.written()}["decompose"]
    try:
        steps = [str(s).strip() for s in extract_json(asked[0].reply)["steps"] if str(s).strip()]
    except (ValueError, KeyError, TypeError):
        steps = None
    if steps and is_linear(steps):
        assert (plan.steps, written.writer) == (steps, "llm")
    elif steps == []:
        assert (plan.steps, written.writer) == (rules, "offline")
        assert written.reason == "the LLM saw one hop where the question chains"
    else:
        assert plan.steps == rules and any("LLM decomposition failed" in e for e in errors)


def test_the_models_next_hop_entity_is_a_branch_of_the_beam(chain: Collection, make_client) -> None:
    """With the model choosing next hops, an entity it names after the first round joins the beam that round
    and is followed by name in the next. A verdict that the question is answered (what SmolLM2 says here), or a
    reply the chooser refuses, changes no branch: the beam is the one read without the model."""
    settings = chain.settings.research.tuned(
        next_hop={"enabled": True}, stopping={"min_hops": 2, "max_hops": 2}
    )

    def run(chooser: llm_adapters.LLMHopChooser | None) -> tuple[list[list[str]], EvidencePack]:
        beams: list[list[str]] = []
        with request_budget(1800.0):
            result = ResearchAgent(chain, settings, hop_chooser=chooser).process(
                QUESTION, on_round=lambda state, _: beams.append([e.name for e in state.beam])
            )
        return beams, result.pack

    offline_beams, _ = run(None)
    client = make_client()
    chooser = llm_adapters.LLMHopChooser(client, settings.next_hop, chars_per_token=4.0, min_shared_terms=1)
    beams, pack = run(chooser)
    assert len(client.calls) == 1 and client.calls[0].schema == llm_adapters.NEXT_HOP_SCHEMA
    reply = extract_json(client.calls[0].reply)
    entity = str(reply.get("entity") or "").strip()
    refused = any("did not choose a next hop" in w for w in pack.warnings)
    if refused or reply.get("answered") or not entity or entity in offline_beams[0]:
        assert beams == offline_beams
    else:
        assert beams[0] == [*offline_beams[0], entity]
        assert entity in pack.retrieval_report[1].queries  # followed by name in the round after
