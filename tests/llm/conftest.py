"""Fixtures for the LLM client tests: the stand-in OpenAI-compatible server and a client wired to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from deepcite.config import LLMSettings
from deepcite.llm.openai_client import OpenAICompatClient
from llm.fake_openai_server import FakeOpenAIServer


@pytest.fixture
def llm_server() -> Iterator[FakeOpenAIServer]:
    """The stand-in for a remote LLM: a scripted OpenAI-compatible server on 127.0.0.1."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    """Every backoff wait the client asked for, in order (recorded instead of slept)."""
    return []


@pytest.fixture
def make_client(llm_server: FakeOpenAIServer, sleeps: list[float]) -> Callable[..., OpenAICompatClient]:
    """Build a client against the stand-in server; keyword arguments override LLMSettings fields."""

    async def record_async(seconds: float) -> None:
        sleeps.append(seconds)

    def make(**overrides: Any) -> OpenAICompatClient:
        fields: dict[str, Any] = {
            "base_url": llm_server.base_url,
            "model": "stand-in-model",
            "api_key": "test-key",
            "timeout_s": 5.0,
            "max_retries": 3,
            "backoff_initial_s": 0.5,
            "backoff_max_s": 8.0,
            **overrides,
        }
        return OpenAICompatClient(LLMSettings(**fields), asleep=record_async)

    return make
