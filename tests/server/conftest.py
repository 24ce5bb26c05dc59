"""Fixtures for the HTTP API tests: a real index of the fixture corpus and real uvicorn servers on 127.0.0.1.

The index is an Edge store on a session tmp dir with the real MiniLM embedder (loaded once). Each server
is the real app under uvicorn in a thread, on a free loopback port. The only stand-in is the LLM
(tests/llm/fake_openai_server.py), for the LLM-backed path.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from deepcite.config import (
    AnswerSettings,
    LLMSettings,
    ResearchSettings,
    ServerSettings,
    Settings,
)
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Document
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.store import SearchStore, open_store
from deepcite.server.app import create_app

CORPUS = Path(__file__).parents[1] / "fixtures" / "server" / "corpus.jsonl"
COLLECTION = "fixture"
# tokens: unrestricted, one group, public only
ADMIN, CARDIO, PUBLIC = "admin-token", "cardio-token", "public-token"
API_KEYS = f"{ADMIN}:*,{CARDIO}:cardiology,{PUBLIC}"
MAX_REQUEST_BYTES = 4096
MAX_QUERY_CHARS = 300
# marker words of the ACL-restricted passages (see tests/fixtures/server/README.md)
ONCOLOGY_MARKER = "zelvatinib"
CARDIOLOGY_MARKER = "quorvane"
CITATION = re.compile(r"\[(\d+)\]")


def server_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Small, fast settings for the tests: few hops, tight limits, auth on."""
    fields: dict[str, Any] = {
        "data_dir": data_dir,
        "api_keys": API_KEYS,
        "research": ResearchSettings().tuned(
            stopping={"min_hops": 1, "max_hops": 3}, planning={"max_question_chars": MAX_QUERY_CHARS}
        ),
        "answer": AnswerSettings().tuned(context={"max_count": 50}),
        "server": ServerSettings(
            max_request_bytes=MAX_REQUEST_BYTES,
            default_collection=COLLECTION,
        ),
        **overrides,
    }
    return Settings(**fields)


@dataclass
class Index:
    settings: Settings
    store: SearchStore
    embedder: Embedder


@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[Index]:
    """The fixture corpus ingested once into an Edge store with the real embedder."""
    settings = server_settings(tmp_path_factory.mktemp("server-data"))
    store = open_store(settings)
    embedder = minilm
    docs = [
        Document.model_validate(json.loads(line)) for line in CORPUS.read_text().splitlines() if line.strip()
    ]
    IngestPipeline(open_collection(COLLECTION, settings, store=store, embedder=embedder)).ingest(docs)
    yield Index(settings, store, embedder)
    store.close()


class LiveServer:
    """A uvicorn server in a thread on a free 127.0.0.1 port."""

    def __init__(self, app: Any) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()


@pytest.fixture(scope="session")
def live(index: Index) -> Iterator[LiveServer]:
    """The app with auth on, over the fixture index."""
    app = create_app(index.settings, store=index.store, embedder=index.embedder)
    with LiveServer(app) as server:
        yield server


@pytest.fixture(scope="session")
def open_live(index: Index) -> Iterator[LiveServer]:
    """The same app with auth off (no API keys): a local single-user server."""
    settings = index.settings.model_copy(update={"api_keys": ""})
    app = create_app(settings, store=index.store, embedder=index.embedder)
    with LiveServer(app) as server:
        yield server


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(live: LiveServer) -> Iterator[httpx.Client]:
    """An httpx client of the auth-on server, as the unrestricted admin token."""
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=300) as c:
        yield c


@pytest.fixture(scope="session")
def af_answer(live: LiveServer) -> dict[str, Any]:
    """One unified search as admin, shared by the tests that only read its response."""
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=300) as c:
        response = c.post(
            "/api/unified-search",
            json={"query": "Does atrial fibrillation increase the risk of stroke, and how is it treated?"},
        )
    assert response.status_code == 200, response.text
    return response.json()


def assert_citations_resolve(body: dict[str, Any]) -> None:
    """Every [n] in the summary, the answer and each sub-answer is the id of a returned citation."""
    ids = {c["id"] for c in body["citations"]}
    texts = [body["summary"], body["answer"]] + [s["answer"] for s in body["subanswers"]]
    for text in texts:
        for found in CITATION.findall(text):
            assert int(found) in ids, f"[{found}] does not resolve to a returned citation in {text!r}"
    for sub in body["subanswers"]:
        assert set(sub["citations"]) <= set(sub.get("evidence", ids)) <= ids  # its own evidence only
        assert set(sub["citations"]) == {int(n) for n in CITATION.findall(sub["answer"])}


def llm_settings(base_url: str) -> LLMSettings:
    return LLMSettings(
        base_url=base_url, model="stand-in-model", api_key="test-key", timeout_s=10, max_retries=0
    )
