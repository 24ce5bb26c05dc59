"""Choose the answer generator (the LLM one when a client is configured, the extractive one otherwise) and
the citation support check."""

from __future__ import annotations

from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.generators import AnswerGenerator
from deepcite.answer.llm_generator import LLMGenerator
from deepcite.answer.support import CONTROL_PAIRS, CitationSupport, LLMSupportJudge
from deepcite.config import Settings
from deepcite.llm.client import LLMClient
from deepcite.retrieval.embedders import Embedder


def build_generator(settings: Settings, embedder: Embedder, llm: LLMClient | None = None) -> AnswerGenerator:
    """An LLMGenerator over ``llm`` (extractive fallback), or the ExtractiveGenerator when ``llm`` is None."""
    extractive = ExtractiveGenerator(embedder, settings.answer)
    return extractive if llm is None else LLMGenerator(llm, settings, extractive)


def build_support(settings: Settings, embedder: Embedder, llm: LLMClient | None = None) -> CitationSupport:
    """The citation support check over ``embedder``, with the LLM judge when ``answer.citations.judge`` is
    "llm" and an LLM is configured."""
    citations = settings.answer.citations
    controls = CONTROL_PAIRS if citations.judge_controls else None
    judge = LLMSupportJudge(llm, controls=controls) if llm is not None and citations.judge == "llm" else None
    return CitationSupport(embedder, settings.answer, judge)
