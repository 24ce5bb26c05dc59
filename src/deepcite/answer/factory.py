"""Choose the answer generator: the LLM one when a client is configured, the extractive one otherwise."""

from __future__ import annotations

from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.generators import AnswerGenerator
from deepcite.answer.llm_generator import LLMGenerator
from deepcite.config import Settings
from deepcite.llm.client import LLMClient
from deepcite.retrieval.embedders import Embedder


def build_generator(settings: Settings, embedder: Embedder, llm: LLMClient | None = None) -> AnswerGenerator:
    """An LLMGenerator over ``llm`` (extractive fallback), or the ExtractiveGenerator when ``llm`` is None."""
    extractive = ExtractiveGenerator(embedder, settings.answer)
    return extractive if llm is None else LLMGenerator(llm, settings, extractive)
