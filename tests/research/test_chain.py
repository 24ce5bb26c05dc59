"""Composed questions: rule-based decomposition into a chain, answer entities from a hop's evidence, and the
whole chain run by the research engine over a real collection (Edge store, real MiniLM, real entity graph)."""

from __future__ import annotations

import logging

import pytest

from deepcite.config import ChainSettings
from deepcite.llm.deadline import request_budget
from deepcite.models import Candidate
from deepcite.research.agent import ResearchAgent
from deepcite.research.chain import decompose, fill, is_linear, rank_answers
from deepcite.retrieval.collection import Collection

from .helpers import chunk

QUESTION = "Who is the spouse of the performer of Velvet Harbor?"


@pytest.mark.parametrize(
    ("question", "chain"),
    [
        ("Who is the spouse of the performer of Green?", ["performer of Green", "spouse of #1"]),
        ("When was the director of Titanic born?", ["director of Titanic", "When was #1 born"]),
        (
            "Who was in charge of the country where the composer of Aschenbrodel was a citizen?",
            ["composer of Aschenbrodel", "country where #1 was a citizen", "Who was in charge of #2"],
        ),
        (
            "What country is Hello Love's performer from?",
            ["performer of Hello Love", "What country is #1 from"],
        ),
        (
            "What county shares a border with the county in which Johnnycake, West Virginia is located?",
            ["county in which Johnnycake, West Virginia is located", "What county shares a border with #1"],
        ),
        (
            "What currency predated the Euro in the country Signmark is from?",
            ["country Signmark is from", "What currency predated the Euro in #1"],
        ),
        (
            "What year did the company Novair International Airways is part of dissolve?",
            ["company Novair International Airways is part of", "What year did #1 dissolve"],
        ),
        (  # a name before a noun is a modifier, not the argument of "daughter of"
            "Name the mother of Edward Stafford, who was the daughter of the English nobleman Edward Stanley?",
            [
                "mother of Edward Stafford",
                "Name #1, who was the daughter of the English nobleman Edward Stanley",
            ],
        ),
        ('Who did the actor in the series "Due South" have a child with?', []),  # no "is"-clause: no step
        ("Who is the author of Brand?", []),  # one hop: nothing to chain
        ("Which magazine was started first, Arthur's Magazine or First for Women?", []),
        ("compare statins and PCSK9 inhibitors", []),
    ],
)
def test_decompose_english_relational_phrasings(question: str, chain: list[str]) -> None:
    assert decompose(question, max_hops=5) == chain


def test_a_chain_the_beam_follows_links_each_step_to_the_one_before() -> None:
    assert is_linear(["performer of Green", "spouse of #1"])
    assert is_linear(["composer of X", "country where #1 was a citizen", "Who was in charge of #2"])
    assert not is_linear(
        ["country of Y", "birth country of Z", "term in #2 and the #1"]
    )  # two parallel parts
    assert not is_linear(["performer of Green"])


def test_decompose_respects_the_hop_cap_and_fill_writes_answers_into_slots() -> None:
    question = "Who was in charge of the country where the composer of Aschenbrodel was a citizen?"
    assert len(decompose(question, max_hops=2)) == 2
    assert (
        fill("country where #1 was a citizen", {1: "Josef Bayer"})
        == "country where Josef Bayer was a citizen"
    )
    assert fill("spouse of #2", {}) == "spouse of"


def test_answers_prefer_names_near_the_relation_word_and_known_titles() -> None:
    album = Candidate(
        chunk=chunk(
            "a",
            "Velvet Harbor is an album recorded in Galway. It was performed by Orla Brennick.",
            title="Velvet Harbor",
        )
    )
    ranked = [
        name for name, _ in rank_answers("performer of Velvet Harbor", [album], settings=ChainSettings())
    ]
    assert (
        ranked[0] == "Orla Brennick" and "Velvet Harbor" not in ranked
    )  # the question's own entity is no answer
    known = rank_answers(
        "performer of Velvet Harbor",
        [album],
        known=frozenset({"galway"}),
        settings=ChainSettings(near_weight=0),
    )
    assert known[0][0] == "Galway"
    assert (
        rank_answers(
            "performer of Velvet Harbor",
            [album],
            exclude=["Orla Brennick", "Galway"],
            settings=ChainSettings(),
        )
        == []
    )


def test_the_chain_runs_hop_by_hop_and_shows_in_the_pack_and_the_hop_log(
    chain_collection: Collection, caplog: pytest.LogCaptureFixture
) -> None:
    settings = chain_collection.settings.research.tuned(chain={"enabled": True})
    agent = ResearchAgent(chain_collection, settings)
    with caplog.at_level(logging.INFO, logger="deepcite.research.agent"):
        result = agent.process(QUESTION)
    hop1, hop2 = result.pack.chain
    assert hop1.template == "performer of Velvet Harbor" and hop1.answers[0] == "Orla Brennick"
    assert hop1.passages[0] == ("velvet-harbor", "Velvet Harbor")
    assert hop2.query == "spouse of Orla Brennick" and hop2.round == hop1.round + 1
    assert hop2.passages[0] == ("orla-brennick", "Orla Brennick")
    top = [c.chunk.doc_id for c in result.pack.final_evidence[:3]]
    assert {"velvet-harbor", "orla-brennick"} <= set(top)
    assert "chain hop 2 (round 2): 'spouse of Orla Brennick'" in caplog.text
    assert "chain: performer of Velvet Harbor -> spouse of #1" in caplog.text
    # the hop's passage records the chain query that reached it
    spouse_page = next(c for c in result.pack.final_evidence if c.chunk.doc_id == "orla-brennick")
    assert any(p.kind == "chain" and p.focus == "Orla Brennick" for p in spouse_page.provenance)


def test_chains_off_by_default_run_the_question_as_before(chain_collection: Collection) -> None:
    settings = chain_collection.settings.research
    assert not settings.chain.enabled
    result = ResearchAgent(chain_collection, settings).process(QUESTION)
    assert result.pack.chain == []


def test_the_llms_decomposition_replaces_the_rules_and_a_bad_one_falls_back() -> None:
    """With an LLM (a stand-in for the remote endpoint), its chain of steps is the plan's; a reply that is no
    linked chain, or an LLM that fails, leaves the rules' chain and says so in the errors."""
    from deepcite.config import ResearchSettings
    from deepcite.research.planner import QueryPlanner

    from .helpers import StandInLLM

    question = "Who is the spouse of the singer of Velvet Harbor?"
    settings = ResearchSettings().tuned(bridge={"decompose": True, "llm_decompose": True})
    rules = decompose(question, max_hops=settings.stopping.max_hops)
    aspects_down = ConnectionError("aspects: endpoint down")  # the aspect call falls back to the heuristic
    good = StandInLLM([aspects_down, '{"steps": ["singer of Velvet Harbor", "spouse of #1"]}'])
    assert QueryPlanner(settings=settings, llm_client=good).plan(question).steps == [
        "singer of Velvet Harbor",
        "spouse of #1",
    ]
    assert "Velvet Harbor" in good.calls[-1][-1]["content"]
    for reply in ['{"steps": ["singer of Velvet Harbor", "spouse of #2"]}', ConnectionError("down")]:
        errors: list[str] = []
        plan = QueryPlanner(settings=settings, llm_client=StandInLLM([aspects_down, reply])).plan(
            question, errors=errors
        )
        assert plan.steps == rules and any("LLM decomposition failed" in e for e in errors)
    one_hop = StandInLLM([aspects_down, '{"steps": []}'])
    assert QueryPlanner(settings=settings, llm_client=one_hop).plan("Who is the author of Brand?").steps == []
    # an LLM that sees one hop where the question's structure chains two does not erase the chain
    sees_one = StandInLLM([aspects_down, '{"steps": []}'])
    with request_budget(60.0) as budget:
        assert QueryPlanner(settings=settings, llm_client=sees_one).plan(question).steps == rules
    written = {w.part: w for w in budget.written()}
    assert (written["decompose"].writer, written["decompose"].reason) == (
        "offline",
        "the LLM saw one hop where the question chains",
    )
