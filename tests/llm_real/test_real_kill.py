"""The real llama.cpp server (SmolLM2) killed in the middle of a question asked through the Engine: the answer still
comes, written offline from the same research, with one message about the dead server and at most one retry in
all (the breaker); the parts after the kill say the server was unreachable. How long the answer takes after the
kill is measured by benchmarks/llm_kill.py, not asserted here.

Bypasses are noticed: the model must have been asked (counted requests) before the kill, and the parts written
after it must name the dead server as their reason (not a silent offline path).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from server.conftest import COLLECTION, Index

from deepcite.engine import Engine
from deepcite.llm.openai_client import OpenAICompatClient
from deepcite.service import QuestionRequest
from llm_real.conftest import CountingClient, llama_server

pytestmark = pytest.mark.real_llm

QUESTION = "Does atrial fibrillation raise stroke risk, and how is it prevented?"


def test_a_server_killed_mid_question_gives_one_message_and_an_offline_answer(
    tmp_path: Path, index: Index, caplog: pytest.LogCaptureFixture
) -> None:
    with llama_server(tmp_path) as (server, process):
        client = CountingClient(OpenAICompatClient(server.settings(max_retries=4, breaker_open_s=60.0)))
        settings = index.settings.model_copy(
            update={
                "llm": server.settings(),
                # time enough that only the breaker ends the question early
                "answer": index.settings.answer.tuned(budget={"request_s": 1800.0}),
            }
        )
        engine = Engine(settings, store=index.store, embedder=index.embedder, llm=client)
        answered: list[object] = []

        def ask() -> None:
            answered.append(engine.ask_sync(QuestionRequest(query=QUESTION, collection=COLLECTION)))

        with caplog.at_level(logging.INFO):
            asking = threading.Thread(target=ask)
            asking.start()
            while not client.calls and asking.is_alive():  # the first request is on its way
                time.sleep(0.05)
            time.sleep(0.5)
            process.kill()
            process.wait()
            asking.join(timeout=600)
        engine.close()
    assert not asking.is_alive() and answered, "no answer after the kill"
    response = answered[0]
    assert client.calls, "the model was never asked"
    assert response.summary and response.answer
    written = {w.part: w for w in response.written}
    after = [w for w in written.values() if w.reason == "server unreachable"]
    assert after, written  # the parts after the kill say why they were written offline
    assert written["summary"].writer == "offline" and written["summary"].reason == "server unreachable"
    retries = [r for r in caplog.records if "retry" in r.getMessage()]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    unreachable = [m for m in warnings if "unreachable" in m]
    assert len(unreachable) == 1, unreachable
    assert not [m for m in warnings if "Connection error" in m and "unreachable" not in m]  # said once
    assert len(retries) <= 1, [r.getMessage() for r in retries]
