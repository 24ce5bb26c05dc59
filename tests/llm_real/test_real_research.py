"""The research engine's LLM steps against the real llama.cpp server (SmolLM2): planning (aspects, the next
sub-question), HyDE, coverage grading and the next hop each send a request the server accepts and get back JSON
that passes their schema, and a whole research run with the model in the loop still returns its evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config import NextHopSettings, ResearchSettings, Settings, StoppingSettings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import AspectType, QueryAspect
from deepcite.research import llm_adapters
from deepcite.research.agent import ResearchAgent
from deepcite.research.planner import QueryPlanner
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder
from llm_real.conftest import parsed_or_caught

pytestmark = pytest.mark.real_llm

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "research" / "chain_corpus.jsonl"
QUESTION = "Who is the spouse of the performer of Velvet Harbor?"
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


def test_planning_aspects_come_back_typed_and_bounded(make_client) -> None:
    settings = ResearchSettings()
    aspects = parsed_or_caught(lambda: llm_adapters.llm_aspects(make_client(), QUESTION, settings))
    for aspect in aspects or []:
        assert aspect.aspect.strip() and isinstance(aspect.aspect_type, AspectType)
        assert 0.0 <= aspect.importance <= 1.0 and aspect.keywords


def test_planner_uses_the_model_or_falls_back_on_an_unfit_reply(make_client) -> None:
    errors: list[str] = []
    plan = QueryPlanner(settings=ResearchSettings(), llm_client=make_client()).plan(QUESTION, errors=errors)
    assert plan.aspects and plan.subquestions[0] == QUESTION
    assert all("does not match the schema" in e or "proposed no aspects" in e for e in errors), errors


def test_next_subquestion_is_a_string_the_planner_can_run(make_client) -> None:
    sub = parsed_or_caught(
        lambda: llm_adapters.llm_next_subquestion(make_client(), QUESTION, ["spouse"], PASSAGES, [QUESTION])
    )
    assert sub is None or isinstance(sub, str)


def test_hyde_writes_a_passage(make_client) -> None:
    passage = parsed_or_caught(
        lambda: llm_adapters.LLMHyde(make_client()).generate("What do statins inhibit?")
    )
    assert passage is None or len(passage.split()) >= 3


def test_coverage_grading_scores_the_aspects_or_says_why_not(make_client) -> None:
    """The schema lets the model pick its own keys: it either scores the aspects named (in [0, 1]) or the
    grader raises LLMError, which the research engine answers with its heuristic grade."""
    aspects = [
        QueryAspect(aspect="performer of Velvet Harbor", aspect_type=AspectType.DEFINITION, importance=1.0),
        QueryAspect(aspect="spouse of the performer", aspect_type=AspectType.DEFINITION, importance=1.0),
    ]
    graded = parsed_or_caught(lambda: llm_adapters.llm_coverage(make_client(), aspects, PASSAGES))
    if graded is not None:
        scores, contradictions = graded
        assert set(scores) <= {a.aspect for a in aspects} and scores
        assert all(0.0 <= s <= 1.0 for s in scores.values())
        assert all(isinstance(c, str) for c in contradictions)


def test_next_hop_choice_is_parsed(make_client) -> None:
    chooser = llm_adapters.LLMHopChooser(make_client(), NextHopSettings(enabled=True), chars_per_token=4.0)
    choice = parsed_or_caught(lambda: chooser.choose(QUESTION, [("Velvet Harbor", PASSAGES[0])], [QUESTION]))
    assert choice is None or choice.answered or choice.next_query


def test_research_with_the_model_in_the_loop_returns_evidence(chain: Collection, make_client) -> None:
    settings = ResearchSettings(stopping=StoppingSettings(min_hops=1, max_hops=1))
    agent = ResearchAgent(chain, settings, llm_client=make_client())
    result = agent.process(QUESTION)
    assert result.pack.final_evidence
    assert result.hops >= 1 and result.subquestions
