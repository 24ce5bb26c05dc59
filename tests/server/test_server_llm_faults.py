"""A misbehaving LLM through the real server: every request ends within its budget, with an offline answer
that says so, and a client that goes away cancels the LLM calls made for it.

No real LLM runs here: tests/llm/fake_openai_server.py (an OpenAI-compatible HTTP server on 127.0.0.1)
stands in for one, in a fault mode chosen per test: it hangs, or drips its answer one byte at a time.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from llm.fake_openai_server import Action, Drip, FakeOpenAIServer, Hang

from deepcite.answer.prompts import SYSTEM_PROMPT
from deepcite.config import AnswerSettings
from server.conftest import (
    ADMIN,
    CITATION,
    Index,
    LiveServer,
    assert_citations_resolve,
    headers,
    llm_settings,
)

pytestmark = pytest.mark.slow

QUESTION = "Does atrial fibrillation raise stroke risk?"
BUDGET_S, RESERVE_S = 4.0, 1.5  # LLM calls of a request end 2.5 s in


class Faults:
    """What the stand-in does with each request: ``mode`` for every request, or only for answer prompts."""

    def __init__(self) -> None:
        self.mode: Action | None = None
        self.answers_only = False
        self.answer = "Stroke risk rises [1]."

    def __call__(self, body: dict[str, Any]) -> str | Action:
        is_answer = body["messages"][0]["content"] == SYSTEM_PROMPT
        if self.mode is not None and (is_answer or not self.answers_only):
            return self.mode
        return "not the JSON you asked for" if body.get("response_format") else self.answer


@pytest.fixture(scope="module")
def faults() -> Faults:
    return Faults()


@pytest.fixture(scope="module")
def llm_server(faults: Faults) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(faults) as server:
        yield server


def _live(index: Index, llm_server: FakeOpenAIServer, budget_s: float) -> LiveServer:
    from deepcite.server.app import create_app

    llm = llm_settings(llm_server.base_url).model_copy(update={"timeout_s": 60.0, "call_deadline_s": 120.0})
    answer = AnswerSettings().tuned(
        context={"max_count": 50}, budget={"request_s": budget_s, "offline_reserve_s": RESERVE_S}
    )
    settings = index.settings.model_copy(update={"llm": llm, "answer": answer})
    return LiveServer(create_app(settings, store=index.store, embedder=index.embedder))


@pytest.fixture(scope="module")
def budgeted(index: Index, llm_server: FakeOpenAIServer) -> Iterator[LiveServer]:
    with _live(index, llm_server, BUDGET_S) as server:
        yield server


@pytest.fixture(scope="module")
def patient(index: Index, llm_server: FakeOpenAIServer) -> Iterator[LiveServer]:
    """A server whose budget is long: only a cancellation ends its LLM calls early."""
    with _live(index, llm_server, 300.0) as server:
        yield server


@pytest.mark.parametrize(
    "mode", [Hang(60.0), Drip("Stroke risk rises [1].", interval_s=0.5)], ids=["hang", "drip"]
)
def test_spent_budget_answers_offline_and_says_so(budgeted: LiveServer, faults: Faults, mode: Action) -> None:
    faults.mode, faults.answers_only = mode, False
    with httpx.Client(base_url=budgeted.base_url, headers=headers(ADMIN), timeout=120) as c:
        body = c.post("/api/unified-search", json={"query": QUESTION}).json()
        regenerated = c.post("/api/quick-summary", json={"request_id": body["request_id"]}).json()
    assert body["degraded"]["reason"] == "LLM did not answer within 2.5 s; offline answer"
    assert {"summary", "long answer"} <= set(body["degraded"]["parts"])
    assert CITATION.search(body["summary"]) and CITATION.search(body["answer"])  # the extractive writer's
    assert_citations_resolve(body)
    assert regenerated["degraded"]["reason"] == "LLM did not answer within 2.5 s; offline answer"
    assert CITATION.search(regenerated["text"])


def test_answer_without_faults_is_not_degraded(budgeted: LiveServer, faults: Faults) -> None:
    faults.mode = None
    with httpx.Client(base_url=budgeted.base_url, headers=headers(ADMIN), timeout=120) as c:
        body = c.post("/api/unified-search", json={"query": QUESTION}).json()
    assert body["degraded"] is None
    assert body["summary"].startswith("Stroke risk rises [1].")


def test_llm_citations_must_support_their_sentences(budgeted: LiveServer, faults: Faults) -> None:
    faults.mode = None
    faults.answer = (
        "Fabricated claim about everything [0-500]. "
        "Kidney transplant rejection is prevented by tacrolimus [1]. "
        "Stroke risk rises [1]."
    )
    try:
        with httpx.Client(base_url=budgeted.base_url, headers=headers(ADMIN), timeout=120) as c:
            body = c.post("/api/unified-search", json={"query": QUESTION}).json()
    finally:
        faults.answer = "Stroke risk rises [1]."
    # the check removes the range and the unsupported citation, which leaves one sentence of three cited: under
    # answer.guards.min_kept_share, so the offline writer's parts are shipped instead, and the response says so
    assert "Fabricated" not in body["summary"] and "tacrolimus" not in body["summary"]
    assert "Unknown based on provided sources." not in body["summary"]
    written = {w["part"]: w for w in body["written"]}
    assert written["summary"]["writer"] == written["long answer"]["writer"] == "offline"
    assert "1 of 3 sentences kept a citation" in written["summary"]["reason"]
    assert body["degraded"]["reason"].startswith("LLM failed (reply rejected: 1 of 3 sentences")
    assert body["citation_check"]["cited"] == body["citation_check"]["sentences"]


def poll(condition: Callable[[], object], tries: int) -> None:
    """Wait until ``condition()`` is true, checking every 50 ms, at most ``tries`` times."""
    for _ in range(tries):
        if condition():
            return
        time.sleep(0.05)


@dataclass
class AnswerCalls:
    """The answer stage's calls to the stand-in LLM from one point on: how many were asked, how many dropped."""

    llm_server: FakeOpenAIServer
    dropped_before: int
    asked_before: int

    def asked(self) -> int:
        return sum(
            r["messages"][0]["content"] == SYSTEM_PROMPT
            for r in self.llm_server.requests[self.asked_before :]
        )

    def dropped(self) -> int:
        return self.llm_server.dropped - self.dropped_before


def hanging_answer_calls(faults: Faults, llm_server: FakeOpenAIServer) -> AnswerCalls:
    """Make the stand-in LLM hang on answer-stage calls, and count those calls from now on."""
    faults.mode, faults.answers_only = Hang(120.0), True
    return AnswerCalls(llm_server, llm_server.dropped, len(llm_server.requests))


def test_stream_client_that_goes_away_cancels_its_llm_calls(
    patient: LiveServer, faults: Faults, llm_server: FakeOpenAIServer
) -> None:
    calls = hanging_answer_calls(faults, llm_server)
    with (
        httpx.Client(base_url=patient.base_url, headers=headers(ADMIN), timeout=120) as c,
        c.stream("GET", "/api/unified-search/stream", params={"query": QUESTION}) as response,
    ):
        assert response.status_code == 200
        poll(calls.asked, tries=600)  # the answer stage has asked the (hanging) LLM
        assert calls.asked()
    # the client closed the stream; the server cancels the request, and with it the hanging LLM calls
    poll(lambda: calls.dropped() >= calls.asked(), tries=200)
    assert calls.dropped() >= calls.asked() >= 1


def test_json_client_that_goes_away_cancels_its_llm_calls(
    patient: LiveServer, faults: Faults, llm_server: FakeOpenAIServer
) -> None:
    calls = hanging_answer_calls(faults, llm_server)
    payload = json.dumps({"query": QUESTION}).encode()
    request = (
        f"POST /api/unified-search HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {ADMIN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload
    with socket.create_connection(("127.0.0.1", patient.port)) as sock:  # a client that will hang up
        sock.sendall(request)
        poll(calls.asked, tries=600)
        assert calls.asked()
    poll(lambda: calls.dropped() >= calls.asked(), tries=200)
    assert calls.dropped() >= calls.asked() >= 1


def test_cli_ask_says_when_the_answer_was_written_offline(
    tmp_path_factory: pytest.TempPathFactory, faults: Faults, llm_server: FakeOpenAIServer
) -> None:
    from typer.testing import CliRunner

    from deepcite.cli.main import app
    from server.conftest import COLLECTION, CORPUS

    faults.mode, faults.answers_only = Hang(60.0), False
    env = {
        "DEEPCITE_DATA_DIR": str(tmp_path_factory.mktemp("cli-faults")),
        "DEEPCITE_RESEARCH_STOPPING_MIN_HOPS": "1",
        "DEEPCITE_LLM_BASE_URL": llm_server.base_url,
        "DEEPCITE_LLM_MODEL": "stand-in-model",
        "DEEPCITE_ANSWER_BUDGET_REQUEST_S": "4",
        "DEEPCITE_ANSWER_BUDGET_OFFLINE_RESERVE_S": "2",
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        runner = CliRunner()
        ingest = runner.invoke(app, ["ingest", str(CORPUS), "--collection", COLLECTION, "--json"])
        assert ingest.exit_code == 0, ingest.output
        result = runner.invoke(app, ["ask", QUESTION, "-c", COLLECTION, "--max-hops", "1"])
    assert result.exit_code == 0, result.output
    assert "degraded: LLM did not answer within 2 s; offline answer" in " ".join(result.stdout.split())
