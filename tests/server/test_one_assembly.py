"""One assembly: what users run is what the evaluations measure.

A small multi-hop pool (tests/fixtures/research/multihop_ircot.jsonl, fictional) is ingested through the Engine,
so the collection keeps its entity graph. Asked through ``POST /api/unified-search`` (the real app under uvicorn
on 127.0.0.1) and through ``deepcite research --json``, the round report lists the entity graph's ranked list
beside the searches; the same questions through ``deepcite eval multihop``'s default system (the ``default``
settings profile's Engine) give the same ranked documents as the served research.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app
from deepcite.config import ResearchSettings, Settings
from deepcite.engine import Engine
from deepcite.evaluation.multihop import (
    ingest_pool,
    load_questions,
    pool_collection_name,
    ranked_documents,
    systems_for,
)
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app
from deepcite.service import QuestionRequest
from server.conftest import LiveServer

POOL = Path(__file__).parents[1] / "fixtures" / "research" / "multihop_ircot.jsonl"


def pool_settings(data_dir: Path) -> Settings:
    research = ResearchSettings().tuned(
        stopping={"min_hops": 2, "max_hops": 2}, retrieval={"use_graph": True}
    )
    return Settings(data_dir=data_dir, research=research)


@pytest.fixture(scope="module")
def pooled(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> tuple[Engine, str]:
    engine = Engine(pool_settings(tmp_path_factory.mktemp("assembly-data")), embedder=minilm)
    name = ingest_pool(engine, POOL, "ircot")
    yield engine, name
    engine.close()


def graph_lists(report: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [lst for rnd in report for lst in rnd["lists"] if lst["mode"] == "graph"]


def test_the_served_research_uses_the_entity_graph(pooled: tuple[Engine, str]) -> None:
    engine, name = pooled
    served = create_app(engine.settings, store=engine.resources.store, embedder=engine.resources.embedder)
    question = load_questions(POOL).questions[0].question
    with LiveServer(served) as live, httpx.Client(base_url=live.base_url, timeout=300) as client:
        response = client.post("/api/unified-search", json={"query": question, "collection": name})
    assert response.status_code == 200, response.text
    report = response.json()["retrieval_report"]
    graph = graph_lists(report)
    assert graph and all(lst["kind"] in ("subquestion", "chain") for lst in graph)
    assert any(lst["hits"] > 0 for lst in graph)


@pytest.mark.slow
def test_the_cli_research_report_lists_the_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a data dir of its own: one process keeps one store per data dir, and the module's Engine holds its own
    monkeypatch.setenv("DEEPCITE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DEEPCITE_RESEARCH_RETRIEVAL_USE_GRAPH", "true")
    runner = CliRunner()
    scored = runner.invoke(
        app,
        [
            "eval",
            "multihop",
            "--data",
            str(POOL),
            "--data-dir",
            str(tmp_path),
            "--systems",
            "default",
            "--json",
        ],
    )
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["default"]["questions"] == 2
    name = pool_collection_name(POOL, "ircot")
    question = load_questions(POOL).questions[0].question
    result = runner.invoke(app, ["research", question, "--collection", name, "--json"])
    assert result.exit_code == 0, result.output
    assert graph_lists(json.loads(result.stdout)["pack"]["retrieval_report"])


def test_eval_multihop_default_ranks_what_the_engine_serves(pooled: tuple[Engine, str]) -> None:
    engine, name = pooled
    systems, skipped = systems_for(engine, ("default",), lambda e: name)
    assert (
        not skipped and systems[0].engine is engine
    )  # the default profile changes nothing: the Engine itself
    for question in load_questions(POOL).questions:
        evaluated, _ = ranked_documents(systems[0], question.question, 10)
        served = engine.research_sync(QuestionRequest(query=question.question, collection=name))
        assert evaluated == [c.chunk.doc_id for c in served.pack.final_evidence]
        assert evaluated and question.gold & set(evaluated[:5])
