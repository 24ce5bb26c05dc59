"""Nothing heavy is built per request: one Engine serves 20 HTTP searches, 20 HTTP asks and 20 MCP searches
with one embedder, one LLM client, one reranker, one collection and one research agent, and never opens a
second store.

The servers are real (uvicorn on 127.0.0.1; the MCP server through the SDK's client); the constructors are
wrapped to count. The LLM is the stand-in OpenAI-compatible server (no real LLM runs here), and the
reranker is a stand-in scorer (no cross-encoder weights can be installed offline).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import httpx
import pytest
from llm.fake_openai_server import FakeOpenAIServer
from mcp import Client

import deepcite.engine as engine_module
import deepcite.llm.factory as llm_factory
import deepcite.retrieval.rerankers as rerankers
from deepcite.config import LLMSettings
from deepcite.engine import Engine
from deepcite.mcp_server import build_server
from deepcite.server.app import create_app
from server.conftest import ADMIN, COLLECTION, Index, LiveServer, headers

pytestmark = pytest.mark.slow

REQUESTS = 20


class StandInReranker:
    """A stand-in for a cross-encoder: scores a passage by the query words it shares."""

    def __init__(self, model: str, *, batch_size: int = 32) -> None:
        self.model = model

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        words = set(query.lower().split())
        return [float(len(words & set(p.lower().split()))) for p in passages]


def _counting(counts: Counter[str], name: str, build: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return build(*args, **kwargs)

    return wrapped


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every construction of a shared object, by kind."""
    counts: Counter[str] = Counter()
    monkeypatch.setattr(
        engine_module, "get_embedder", _counting(counts, "embedder", engine_module.get_embedder)
    )
    monkeypatch.setattr(
        llm_factory, "OpenAICompatClient", _counting(counts, "llm client", llm_factory.OpenAICompatClient)
    )
    monkeypatch.setattr(rerankers, "CrossEncoderReranker", _counting(counts, "reranker", StandInReranker))
    monkeypatch.setattr(engine_module, "open_store", _counting(counts, "store", engine_module.open_store))
    monkeypatch.setattr(
        engine_module, "Collection", _counting(counts, "collection", engine_module.Collection)
    )
    monkeypatch.setattr(
        engine_module, "ResearchAgent", _counting(counts, "research agent", engine_module.ResearchAgent)
    )
    return counts


def test_twenty_requests_of_each_kind_build_everything_once(index: Index, counts: Counter[str]) -> None:
    with FakeOpenAIServer() as llm:
        research = index.settings.research.tuned(
            retrieval={"rerank_enabled": True, "reranker_model": "stand-in-cross-encoder"}
        )
        settings = index.settings.model_copy(
            update={
                "llm": LLMSettings(base_url=llm.base_url, model="stand-in", max_retries=0),
                "research": research,
            }
        )
        # the session's store is handed in (an Edge shard is opened by one store at a time): the Engine
        # must never open another; the embedder it builds itself, once
        engine = Engine(settings, store=index.store)
        try:
            with (
                LiveServer(create_app(engine)) as server,
                httpx.Client(base_url=server.base_url, headers=headers(ADMIN), timeout=300) as client,
            ):
                for i in range(REQUESTS):
                    found = client.post("/api/search", json={"query": f"statins muscle pain {i}", "k": 3})
                    assert found.status_code == 200, found.text
                    assert len(found.json()["hits"]) == 3
                for i in range(REQUESTS):
                    asked = client.post(
                        "/api/unified-search",
                        json={"query": f"Do statins cause muscle pain? ({i})", "max_hops": 1},
                    )
                    assert asked.status_code == 200, asked.text

            async def mcp_searches() -> None:
                async with Client(build_server(engine)) as mcp_client:
                    for i in range(REQUESTS):
                        result = await mcp_client.call_tool(
                            "search", {"query": f"atrial fibrillation stroke {i}", "collection": COLLECTION}
                        )
                        assert not result.is_error, result.content
                        assert result.structured_content["hits"]

            anyio.run(mcp_searches)
        finally:
            engine.close()
    assert llm.requests, "the LLM stand-in was never asked: the LLM steps did not run"
    assert counts == {
        "embedder": 1,
        "llm client": 1,
        "reranker": 1,
        "collection": 1,
        "research agent": 1,
    }
