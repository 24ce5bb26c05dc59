"""``llm.max_concurrent_calls``: the cap on chat calls in flight, against the stand-in for a remote LLM
(tests/llm/fake_openai_server.py, a real HTTP server on 127.0.0.1 that counts the requests it answers at once).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from pydantic import ValidationError

from deepcite.config import LLMSettings
from deepcite.errors import LLMTimeoutError
from deepcite.llm.deadline import request_budget
from llm.fake_openai_server import FakeOpenAIServer, Hang, Reply

HELLO = [{"role": "user", "content": "Say hello"}]
CALLS = 4


def wait_until(check: Any) -> bool:
    """Whether ``check()`` came true within a generous 10 s (polled)."""
    for _ in range(200):
        if check():
            return True
        time.sleep(0.05)
    return False


async def run_parallel(client: Any) -> list[str]:
    """``CALLS`` calls at once: half ``chat`` from worker threads (the background loop), half ``achat`` on
    this loop, so the cap must hold across threads and event loops."""
    sync = [asyncio.to_thread(client.chat, HELLO) for _ in range(CALLS // 2)]
    native = [client.achat(HELLO) for _ in range(CALLS - CALLS // 2)]
    return list(await asyncio.gather(*sync, *native))


async def test_one_slot_sends_one_call_at_a_time_and_all_complete(
    llm_server: FakeOpenAIServer, make_client
) -> None:
    llm_server.responder = lambda body: Reply("ok", delay_s=0.2)
    client = make_client(max_concurrent_calls=1, call_deadline_s=60.0)
    assert await run_parallel(client) == ["ok"] * CALLS
    assert llm_server.peak_in_flight == 1
    assert len(llm_server.requests) == CALLS
    client.close()


async def test_unbounded_calls_overlap(llm_server: FakeOpenAIServer, make_client) -> None:
    overlapped = threading.Event()

    def answer_once_two_overlap(body: dict[str, Any]) -> str:
        if llm_server.in_flight >= 2:
            overlapped.set()
        overlapped.wait(10.0)  # generous: without a cap the second request arrives at once
        return "ok"

    llm_server.responder = answer_once_two_overlap
    client = make_client(call_deadline_s=60.0)
    assert await run_parallel(client) == ["ok"] * CALLS
    assert llm_server.peak_in_flight > 1
    client.close()


async def test_a_cancelled_call_releases_its_slot(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Hang(60.0))
    client = make_client(max_concurrent_calls=1, call_deadline_s=60.0)
    hung = asyncio.create_task(client.achat(HELLO))
    assert await asyncio.to_thread(wait_until, lambda: llm_server.in_flight == 1)
    hung.cancel()
    with pytest.raises(asyncio.CancelledError):
        await hung
    # the slot is free again: a sync call (another thread, another loop) gets it
    assert await asyncio.to_thread(client.chat, HELLO) == "ok"
    client.close()


async def test_a_call_that_gets_no_slot_before_its_deadline_times_out(
    llm_server: FakeOpenAIServer, make_client
) -> None:
    llm_server.script(Hang(60.0))
    client = make_client(max_concurrent_calls=1, call_deadline_s=60.0)
    holder = asyncio.create_task(client.achat(HELLO))
    assert await asyncio.to_thread(wait_until, lambda: llm_server.in_flight == 1)
    with request_budget(1.0), pytest.raises(LLMTimeoutError, match="max_concurrent_calls=1") as caught:
        await client.achat(HELLO)
    assert caught.value.seconds == 1.0
    assert len(llm_server.requests) == 1  # the waiting call never reached the server
    holder.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holder
    client.close()


def test_the_setting_defaults_to_no_cap_and_refuses_zero() -> None:
    assert LLMSettings().max_concurrent_calls is None
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        LLMSettings(max_concurrent_calls=0)
