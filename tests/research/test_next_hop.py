"""LLM-chosen next hops (node choose_next_hop, research.next_hop): the LLM's query joins the next round and the
hop log shows it; a failing or unusable LLM leaves the offline result unchanged. Real index (Edge store, real
MiniLM), the real OpenAI-compatible client; the LLM is the stand-in HTTP server of tests/llm/fake_openai_server.py."""

from __future__ import annotations

import json
import logging
from io import StringIO

import pytest
from llm.fake_openai_server import Fail, FakeOpenAIServer
from rich.console import Console

from deepcite.cli import research as research_cli
from deepcite.config import LLMSettings, NextHopSettings, ResearchSettings, Settings
from deepcite.engine import Engine
from deepcite.evaluation.multihop import MultihopQuestion, evaluate, systems_for
from deepcite.llm.openai_client import OpenAICompatClient
from deepcite.research.agent import ResearchAgent, ResearchResult
from deepcite.research.llm_adapters import LLMHopChooser
from deepcite.retrieval.collection import Collection

QUESTION = "Where was the director of The Quiet Beacon born?"
NEXT = {"answered": False, "next_query": "Tomas Reyner birthplace", "entity": "Tomas Reyner"}


def settings(max_hops: int, bridge: dict[str, object] | None = None) -> ResearchSettings:
    return ResearchSettings().tuned(
        stopping={"min_hops": max_hops, "max_hops": max_hops}, next_hop={"enabled": True}, bridge=bridge or {}
    )


def run(
    collection: Collection,
    max_hops: int,
    server: FakeOpenAIServer | None = None,
    bridge: dict[str, object] | None = None,
) -> ResearchResult:
    chooser = None
    if server is not None:
        llm = OpenAICompatClient(LLMSettings(base_url=server.base_url, model="stand-in-model", max_retries=0))
        chooser = LLMHopChooser(llm, NextHopSettings(enabled=True), chars_per_token=4.0)
    agent = ResearchAgent(collection, settings(max_hops, bridge), hop_chooser=chooser)
    return agent.process(QUESTION)


def outcome(result: ResearchResult) -> tuple[list[str], list[list[str]]]:
    """What the offline path decides: the pack's passages in order and each round's queries."""
    return [c.chunk.chunk_id for c in result.pack.final_evidence], [
        r.queries for r in result.pack.retrieval_report
    ]


def test_the_llm_query_joins_the_next_round_and_the_hop_log(
    research_collection: Collection, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeOpenAIServer(lambda body: json.dumps(NEXT)) as server, caplog.at_level(logging.INFO):
        result = run(research_collection, 2, server)
    assert len(server.requests) == 1  # after round 1; round 2 is the last the cap allows
    prompt = server.requests[0]["messages"][-1]["content"]
    assert QUESTION in prompt and "The Quiet Beacon" in prompt  # the question and the evidence's titles
    second = result.pack.retrieval_report[1]
    assert NEXT["next_query"] in second.queries
    assert "next hop (LLM, after round 1): 'Tomas Reyner birthplace' about Tomas Reyner" in caplog.text
    reached = [p for c in result.pack.final_evidence for p in c.provenance if p.kind == "next_hop"]
    assert reached and all(p.query == NEXT["next_query"] and p.focus == "Tomas Reyner" for p in reached)
    assert not result.pack.warnings


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (Fail(500), "HTTP 500"),
        ('{"answered": "maybe"}', "unusable reply"),
        ('{"answered": false, "next_query": "", "entity": ""}', "unusable reply"),
    ],
)
def test_a_failing_llm_leaves_the_offline_result_unchanged(
    research_collection: Collection, answer: str | Fail, reason: str
) -> None:
    offline = run(research_collection, 3)
    with FakeOpenAIServer(lambda body: answer) as server:
        result = run(research_collection, 3, server)
    assert len(server.requests) == 2  # after rounds 1 and 2
    assert outcome(result) == outcome(offline)
    warnings = [w for w in result.pack.warnings if "did not choose a next hop" in w]
    assert len(warnings) == 2 and all(reason in w for w in warnings)


def test_an_answered_question_adds_no_query(research_collection: Collection) -> None:
    offline = run(research_collection, 2)
    with FakeOpenAIServer(
        lambda body: json.dumps({"answered": True, "next_query": "", "entity": ""})
    ) as server:
        result = run(research_collection, 2, server)
    assert len(server.requests) == 1
    assert outcome(result) == outcome(offline) and not result.pack.warnings
    assert not any(c.llm_read_rounds for c in result.pack.final_evidence)


def test_eval_multihop_skips_the_llm_profile_without_an_llm_and_runs_it_through_the_engine_with_one(
    research_collection: Collection, fixture_settings: Settings
) -> None:
    def pool(engine: Engine) -> str:
        return research_collection.name

    shared = {"store": research_collection.store, "embedder": research_collection.embedder}
    offline = Engine(fixture_settings.model_copy(update={"llm": LLMSettings()}), **shared)
    systems, skipped = systems_for(offline, ("default", "llm_hops"), pool)
    assert [s.name for s in systems] == ["default"] and systems[0].engine is offline
    assert skipped == ["llm_hops skipped: it needs an LLM (set DEEPCITE_LLM_BASE_URL and DEEPCITE_LLM_MODEL)"]
    question = MultihopQuestion("q1", QUESTION, {"quiet-beacon", "tomas-reyner"})
    with FakeOpenAIServer(lambda body: json.dumps(NEXT)) as server:
        llm = LLMSettings(base_url=server.base_url, model="stand-in-model", max_retries=0)
        online = Engine(fixture_settings.model_copy(update={"llm": llm}), **shared)
        systems, skipped = systems_for(online, ("llm_hops",), pool)
        assert not skipped and systems[0].engine.settings.research.next_hop.enabled
        figures = evaluate(systems, [question])
        for system in systems:
            system.engine.close()
    assert figures["llm_hops"]["questions"] == 1 and server.requests


def _shown_titles(body: dict[str, object]) -> list[str]:
    """The titles of the passages a next-hop prompt shows, in their numbered order."""
    prompt = body["messages"][-1]["content"]  # type: ignore[index]
    return [line.split("] ", 1)[1].split(": ", 1)[0] for line in prompt.splitlines() if line.startswith("[")]


def test_the_passages_the_llm_read_facts_from_rise_in_the_pack(
    research_collection: Collection, caplog: pytest.LogCaptureFixture
) -> None:
    """The LLM names the director's passage and the last passage it was shown as ones that state a fact the
    answer needs: the pack's final order lifts both by ``ranking.reader_weight``, keeps every passage, marks
    the two with the round it read them after, and the hop log says which passages it read. The first reading
    weighs every passage by its rank alone (``bridge.unnamed_weight`` 1.0): with the question's names weighing
    it, the director's passage already ranks second offline, under the page the question names, and no lift
    could show."""
    by_rank = {"unnamed_weight": 1.0}
    offline = run(research_collection, 2, bridge=by_rank)
    offline_titles = [c.chunk.title for c in offline.pack.final_evidence]
    shown: list[list[str]] = []

    def reads_two(body: dict[str, object]) -> str:
        shown.append(_shown_titles(body))
        numbers = [shown[-1].index("Tomas Reyner") + 1, len(shown[-1])]
        return json.dumps({"answered": True, "next_query": "", "entity": "", "supporting": numbers})

    with FakeOpenAIServer(reads_two) as server, caplog.at_level(logging.INFO):
        result = run(research_collection, 2, server, bridge=by_rank)
    titles = [c.chunk.title for c in result.pack.final_evidence]
    assert len(shown) == 1 and shown[0].index("Tomas Reyner") + 1 < len(shown[0])
    for title in ("Tomas Reyner", shown[0][-1]):
        assert titles.index(title) < offline_titles.index(title)
    assert sorted(titles) == sorted(offline_titles)
    read = {c.chunk.title: c.llm_read_rounds for c in result.pack.final_evidence if c.llm_read_rounds}
    assert read == {"Tomas Reyner": [1], shown[0][-1]: [1]}
    assert not any(c.llm_read_rounds for c in offline.pack.final_evidence)
    facts = f"facts from passages {shown[0].index('Tomas Reyner') + 1}, {len(shown[0])}"
    assert f"the evidence answers the question; {facts}" in caplog.text


@pytest.mark.parametrize("supporting", [[99], [0], [-1], [True], []])
def test_passage_numbers_the_llm_was_not_shown_change_nothing(
    research_collection: Collection, supporting: list[object]
) -> None:
    offline = run(research_collection, 2)
    reply = {"answered": True, "next_query": "", "entity": "", "supporting": supporting}
    with FakeOpenAIServer(lambda body: json.dumps(reply)) as server:
        result = run(research_collection, 2, server)
    assert len(server.requests) == 1
    assert outcome(result) == outcome(offline) and not result.pack.warnings
    assert not any(c.llm_read_rounds for c in result.pack.final_evidence)


def test_the_cli_pack_table_says_which_passages_the_llm_read(
    research_collection: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``deepcite research`` prints, beside a passage the LLM read a fact from, the hop it read it after."""

    def reads_first(body: dict[str, object]) -> str:
        return json.dumps({"answered": True, "next_query": "", "entity": "", "supporting": [1]})

    with FakeOpenAIServer(reads_first) as server:
        pack = run(research_collection, 2, server).pack
    printed = StringIO()
    monkeypatch.setattr(research_cli, "console", Console(file=printed, width=400, color_system=None))
    research_cli._print_pack(pack)
    rows = [line for line in printed.getvalue().splitlines() if "read by the LLM" in line]
    read = [c.chunk.title for c in pack.final_evidence if c.llm_read_rounds]
    assert len(read) == 1 and len(rows) == 1 and read[0] in rows[0] and "after hop 1" in rows[0]
