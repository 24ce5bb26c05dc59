"""One owner: every shared object is built once per Engine, whatever surface the requests come through.

Five requests of each kind go through each surface: HTTP (the real app under uvicorn on 127.0.0.1), MCP
(the SDK's client against the server), the CLI (in-process with Typer's CliRunner and ``--config``: one
Engine per invocation, as one process per command) and the Python API (one ``Engine``). Every shared
object's constructor is wrapped to count: the store, the embedder, the LLM client, the reranker, HyDE, the
coverage grader, the next-hop chooser, the web source, the citation support check, the answer generator,
the response contexts, the practitioner finder, the ingest jobs, the saved answers, the collection and the
research agent.

Stand-ins, for what cannot run here: the LLM is the stand-in OpenAI-compatible server, the reranker a
stand-in scorer (no cross-encoder weights can be installed offline), the web the stand-in web server of
tests/web (pages and an MCP web_search tool on 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from llm.fake_openai_server import FakeOpenAIServer
from mcp import Client
from typer.testing import CliRunner
from web.standin import StandinWeb, standin_web

import deepcite.retrieval.rerankers as rerankers
from deepcite.answer.context import ResponseContextManager
from deepcite.answer.llm_generator import LLMGenerator
from deepcite.answer.support import CitationSupport
from deepcite.cli.main import app as cli_app
from deepcite.config import LLMSettings, Settings
from deepcite.engine import Engine
from deepcite.ingest.jobs import IngestJobs
from deepcite.llm.openai_client import OpenAICompatClient
from deepcite.mcp_server.server import build_server
from deepcite.models import Document
from deepcite.practitioners.api import PractitionerQuery
from deepcite.practitioners.finder import PractitionerFinder
from deepcite.research.agent import ResearchAgent
from deepcite.research.llm_adapters import LLMCoverageGrader, LLMHopChooser, LLMHyde
from deepcite.research.web.source import WebSearchSource
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.edge_store import EdgeStore
from deepcite.retrieval.embedders import Embedder, SentenceTransformerEmbedder
from deepcite.saved_answers import SavedAnswers
from deepcite.server.app import create_app
from deepcite.service import QuestionRequest, SearchRequest
from server.conftest import ADMIN, COLLECTION, CORPUS, LiveServer, headers, server_settings

pytestmark = pytest.mark.slow

# a shared object built per request, or again on a later one, counts more than 1 by the second request; five
# also take the CLI through each of its four commands and one of them again
REQUESTS = 5
DIRECTORY = Path(__file__).parents[1] / "fixtures" / "server" / "practitioners.jsonl"
PATIENT = "my heart races and I was told I have atrial fibrillation"


class StandInReranker:
    """A stand-in for a cross-encoder: scores a passage by the query words it shares."""

    def __init__(self, model: str, *, batch_size: int = 32) -> None:
        self.model = model

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        words = set(query.lower().split())
        return [float(len(words & set(p.lower().split()))) for p in passages]


SHARED: dict[str, type] = {
    "store": EdgeStore,
    "embedder": SentenceTransformerEmbedder,
    "llm client": OpenAICompatClient,
    "reranker": StandInReranker,
    "hyde": LLMHyde,
    "coverage grader": LLMCoverageGrader,
    "next-hop chooser": LLMHopChooser,
    "web source": WebSearchSource,
    "support check": CitationSupport,
    "answer generator": LLMGenerator,
    "response contexts": ResponseContextManager,
    "practitioner finder": PractitionerFinder,
    "ingest jobs": IngestJobs,
    "saved answers": SavedAnswers,
    "collection": Collection,
    "research agent": ResearchAgent,
}
ASKING = set(SHARED) - {"ingest jobs"}  # what questions and practitioner searches use


@dataclass
class Setup:
    settings: Settings
    config: Path  # the same settings as a TOML file, for the CLI's --config
    llm: FakeOpenAIServer
    web: StandinWeb


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[Setup]:
    """A data dir with the fixture corpus and the practitioner directory, the LLM and web stand-ins, and
    settings that turn every shared object on."""
    data = tmp_path_factory.mktemp("owner-data")
    with FakeOpenAIServer() as llm, standin_web() as web:
        base = server_settings(data)
        research = base.research.tuned(
            retrieval={"rerank_enabled": True, "reranker_model": "stand-in-cross-encoder"},
            next_hop={"enabled": True},
        )
        web_settings = web.settings(base.web, page_timeout_s=1.0)
        llm_settings = LLMSettings(base_url=llm.base_url, model="stand-in", max_retries=0)
        settings = base.model_copy(update={"llm": llm_settings, "research": research, "web": web_settings})
        config = data / "deepcite.toml"
        config.write_text(
            f"data_dir = {json.dumps(str(data))}\n"
            "[server]\n"
            f"default_collection = {json.dumps(COLLECTION)}\n"
            "[llm]\n"
            f"base_url = {json.dumps(llm.base_url)}\nmodel = 'stand-in'\nmax_retries = 0\n"
            "[research.stopping]\nmin_hops = 1\nmax_hops = 3\n"
            "[research.retrieval]\nrerank_enabled = true\nreranker_model = 'stand-in-cross-encoder'\n"
            "[research.next_hop]\nenabled = true\n"
            "[web]\n"
            f"enabled = true\nmcp_url = {json.dumps(web.mcp_url)}\nallowed_domains = ['127.0.0.1']\n"
            "page_timeout_s = 1.0\n"
        )
        with Engine(settings, embedder=minilm) as engine:  # the tests' Engines build their own
            engine.ingest(COLLECTION, CORPUS)
            engine.practitioners.finder.import_file(DIRECTORY, "jsonl")
        yield Setup(settings, config, llm, web)


def _counting(counts: Counter[str], name: str, init: Callable[..., None]) -> Callable[..., None]:
    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        counts[name] += 1
        init(self, *args, **kwargs)

    return counted


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every construction of a shared object, by kind."""
    counts: Counter[str] = Counter()
    monkeypatch.setattr(rerankers, "CrossEncoderReranker", StandInReranker)
    for name, cls in SHARED.items():
        monkeypatch.setattr(cls, "__init__", _counting(counts, name, cls.__init__))
    return counts


def test_http_builds_each_shared_object_once(setup: Setup, counts: Counter[str], tmp_path: Path) -> None:
    note = tmp_path / "owner-note.md"
    note.write_text("# Owner note\n\nQuorvane lowers the resting heart rate in atrial fibrillation.\n")
    engine = Engine(setup.settings)
    try:
        with (
            LiveServer(create_app(engine)) as server,
            httpx.Client(base_url=server.base_url, headers=headers(ADMIN), timeout=300) as client,
        ):
            with note.open("rb") as fh:
                upload = client.post(f"/api/collections/{COLLECTION}/documents", files={"files": fh})
            assert upload.status_code == 202, upload.text
            job = upload.json()["job_id"]
            for i in range(REQUESTS):
                found = client.post("/api/search", json={"query": f"statins muscle pain {i}", "k": 3})
                assert found.status_code == 200, found.text
                assert len(found.json()["hits"]) == 3
                asked = client.post(
                    "/api/unified-search",
                    json={"query": f"Do statins cause muscle pain? ({i})", "max_hops": 1},
                )
                assert asked.status_code == 200, asked.text
                finds = client.post("/api/practitioners/search", json={"userQuery": PATIENT})
                assert finds.status_code == 200, finds.text
                assert client.get("/api/collections").status_code == 200
                assert client.get(f"/api/jobs/{job}").status_code == 200
            deadline = time.monotonic() + 120
            while client.get(f"/api/jobs/{job}").json()["state"] not in ("done", "failed"):
                assert time.monotonic() < deadline, "the upload job did not finish"
                time.sleep(0.2)
            assert client.get(f"/api/jobs/{job}").json()["state"] == "done"
    finally:
        engine.close()
    assert setup.llm.requests and setup.web.queries, "the LLM and web stand-ins were never asked"
    assert dict(counts) == dict.fromkeys(SHARED, 1)


def test_mcp_builds_each_shared_object_once(setup: Setup, counts: Counter[str]) -> None:
    engine = Engine(setup.settings)

    async def calls() -> None:
        async with Client(build_server(engine)) as mcp:
            for i in range(REQUESTS):
                for tool, arguments in (
                    ("search", {"query": f"atrial fibrillation stroke {i}", "collection": COLLECTION}),
                    ("research", {"question": f"Does quorvane help? ({i})", "max_hops": 1}),
                    ("ask", {"question": f"Do statins cause muscle pain? ({i})", "max_hops": 1}),
                    ("find_practitioners", {"request": PATIENT}),
                    ("list_collections", {}),
                ):
                    result = await mcp.call_tool(tool, arguments)
                    assert not result.is_error, (tool, result.content)

    try:
        anyio.run(calls)
    finally:
        engine.close()
    assert dict(counts) == dict.fromkeys(ASKING, 1)


def test_python_api_builds_each_shared_object_once(setup: Setup, counts: Counter[str]) -> None:
    note = Document(id="owner-note", title="Owner note", text="Quorvane and atrial fibrillation.")
    with Engine(setup.settings) as engine:
        for i in range(REQUESTS):
            assert engine.search(SearchRequest(query=f"statins {i}", collection=COLLECTION)).hits
            question = QuestionRequest(query=f"Do statins cause muscle pain? ({i})", max_hops=1)
            assert engine.ask_sync(question).success
            assert asyncio.run(engine.research(question)).pack.final_evidence
            assert asyncio.run(engine.practitioners.find(PractitionerQuery(user_query=PATIENT))).results
            job = engine.resources.jobs.submit(
                COLLECTION,
                lambda on_progress: engine.ingest(COLLECTION, [note], on_progress=on_progress),
                files=[note.id],
                owner=None,
                cleanup=lambda: None,
            )
            deadline = time.monotonic() + 120
            while not engine.resources.jobs.get(job.job_id, None).finished:
                assert time.monotonic() < deadline, "the ingest job did not finish"
                time.sleep(0.05)
            assert engine.resources.jobs.get(job.job_id, None).state == "done"
    assert dict(counts) == dict.fromkeys(SHARED, 1)


def test_each_cli_invocation_builds_each_shared_object_once(setup: Setup, counts: Counter[str]) -> None:
    """A CLI command is a process of its own: each invocation builds what it uses once, from --config."""
    commands = [
        ["search", "statins muscle pain", "-c", COLLECTION, "--json"],
        ["ask", "Do statins cause muscle pain?", "-c", COLLECTION, "--max-hops", "1", "--json"],
        ["research", "Does quorvane help?", "-c", COLLECTION, "--max-hops", "1", "--json"],
        ["practitioners", "search", PATIENT, "--json"],
    ]
    runner = CliRunner()
    used: set[str] = set()
    for i in range(REQUESTS):
        counts.clear()
        argv = ["--config", str(setup.config), *commands[i % len(commands)]]
        result = runner.invoke(cli_app, argv)
        assert result.exit_code == 0, result.output
        assert set(counts.values()) == {1}, (argv, counts)
        used |= set(counts)
    assert used == ASKING
