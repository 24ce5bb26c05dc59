"""Token estimates, trimming to a budget, and building the configured client."""

from __future__ import annotations

import pytest

from deepcite.config import LLMSettings, Settings
from deepcite.errors import ConfigError
from deepcite.llm.budget import estimate_messages_tokens, estimate_tokens, fit_to_budget
from deepcite.llm.factory import get_llm
from deepcite.llm.openai_client import OpenAICompatClient


def test_estimate_tokens_is_chars_over_ratio_rounded_up() -> None:
    assert estimate_tokens("", 4.0) == 0
    assert estimate_tokens("abcd", 4.0) == 1
    assert estimate_tokens("abcde", 4.0) == 2
    assert estimate_tokens("abcdef", 2.0) == 3
    with pytest.raises(ConfigError, match="CHARS_PER_TOKEN"):
        estimate_tokens("abc", 0.0)


def test_message_estimate_counts_framing() -> None:
    messages = [{"role": "system", "content": "a" * 40}, {"role": "user", "content": "b" * 8}]
    assert estimate_messages_tokens(messages, 4.0) == 10 + 2 + 2 * 4


def test_fit_to_budget_keeps_the_leading_texts_that_fit() -> None:
    texts = ["a" * 40, "b" * 40, "c" * 40]  # 10 tokens each at 4 chars/token
    assert fit_to_budget(texts, 30, 4.0) == 3
    assert fit_to_budget(texts, 29, 4.0) == 2
    assert fit_to_budget(texts, 9, 4.0) == 0
    assert fit_to_budget(texts, 31, 4.0, separator="\n\n\n\n\n") == 2  # two separators of 2 tokens
    assert fit_to_budget([], 5, 4.0) == 0


def test_get_llm_is_none_when_not_configured() -> None:
    assert get_llm(Settings(llm=LLMSettings(base_url=None, model=None))) is None


def test_get_llm_refuses_half_configuration() -> None:
    with pytest.raises(ConfigError, match="DEEPCITE_LLM_MODEL"):
        get_llm(Settings(llm=LLMSettings(base_url="http://127.0.0.1:9/v1", model=None)))
    with pytest.raises(ConfigError, match="DEEPCITE_LLM_BASE_URL"):
        get_llm(Settings(llm=LLMSettings(base_url=None, model="m")))


def test_get_llm_builds_the_openai_compatible_client() -> None:
    client = get_llm(Settings(llm=LLMSettings(base_url="http://127.0.0.1:9/v1", model="m")))
    assert isinstance(client, OpenAICompatClient)
    assert client.model == "m"


def test_get_llm_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCITE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DEEPCITE_LLM_MODEL", "env-model")
    client = get_llm(Settings())
    assert client is not None and client.model == "env-model"
