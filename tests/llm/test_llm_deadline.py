"""Every LLM call ends by its deadline, against the stand-in for a remote LLM in its fault modes.

The stand-in (tests/llm/fake_openai_server.py on 127.0.0.1) drips its answer one byte at a time or hangs;
a per-read timeout never fires on the first and the SDK's timeout is per read, so only a deadline over the
whole call ends them. The stand-in counts the connections its client dropped: a call that gave up closes
its connection instead of leaving the server working.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from deepcite.errors import LLMTimeoutError
from deepcite.llm.deadline import request_budget
from llm.fake_openai_server import Drip, Fail, FakeOpenAIServer, Hang, Reply

HELLO = [{"role": "user", "content": "Say hello"}]


def wait_for_drop(server: FakeOpenAIServer, count: int = 1) -> int:
    """The stand-in's dropped-connection count once it reaches ``count`` (it notices within a poll)."""
    for _ in range(100):
        if server.dropped >= count:
            break
        time.sleep(0.05)
    return server.dropped


def test_slow_drip_ends_at_the_call_deadline(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Drip("a long answer", interval_s=0.2))
    client = make_client(timeout_s=5.0, call_deadline_s=1.0)
    with pytest.raises(LLMTimeoutError, match=r"within 1 s") as caught:
        client.chat(HELLO)
    assert caught.value.seconds == 1.0
    assert wait_for_drop(llm_server) == 1
    client.close()


async def test_slow_drip_ends_at_the_call_deadline_async(llm_server: FakeOpenAIServer, make_client) -> None:
    llm_server.script(Drip("a long answer", interval_s=0.2))
    with pytest.raises(LLMTimeoutError):
        await make_client(timeout_s=5.0, call_deadline_s=1.0).achat(HELLO)
    assert wait_for_drop(llm_server) == 1


def test_hang_ends_at_the_call_deadline_with_retries_inside(
    llm_server: FakeOpenAIServer, make_client
) -> None:
    # per-read timeouts of 0.4 s are retried, but all attempts together stop at the 1.5 s deadline
    llm_server.script(*[Hang(30.0)] * 10)
    with pytest.raises(LLMTimeoutError, match=r"within 1.5 s"):
        make_client(timeout_s=0.4, call_deadline_s=1.5, max_retries=9).chat(HELLO)
    assert 1 <= len(llm_server.requests) < 10


def test_retry_wait_past_the_deadline_gives_up_at_once(
    llm_server: FakeOpenAIServer, make_client, sleeps
) -> None:
    llm_server.script(Fail(503, retry_after="5"), Reply("too late"))
    with pytest.raises(LLMTimeoutError, match="1 attempts"):
        make_client(call_deadline_s=2.0, backoff_max_s=10.0).chat(HELLO)
    assert len(llm_server.requests) == 1
    assert sleeps == []


async def test_budget_reaches_calls_in_worker_threads_and_cancel_stops_them(
    llm_server: FakeOpenAIServer, make_client
) -> None:
    client = make_client()
    with request_budget(60.0) as budget:
        assert await asyncio.to_thread(client.chat, HELLO) == "ok"
        budget.cancel()
        with pytest.raises(LLMTimeoutError, match="cancelled"):
            await asyncio.to_thread(client.chat, HELLO)
    assert len(llm_server.requests) == 1


def test_a_process_that_never_closes_its_client_still_exits(llm_server: FakeOpenAIServer) -> None:
    # the synchronous calls' background loop runs in a daemon thread: exit does not wait for it
    script = (
        "from deepcite.config import LLMSettings\n"
        "from deepcite.llm.openai_client import OpenAICompatClient\n"
        f"client = OpenAICompatClient(LLMSettings(base_url={llm_server.base_url!r}, model='m'))\n"
        "print(client.chat([{'role': 'user', 'content': 'hi'}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
