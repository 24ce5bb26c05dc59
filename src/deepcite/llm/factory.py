"""Build the configured LLM client, or none: every LLM step has an offline fallback."""

from __future__ import annotations

from deepcite.config import Settings
from deepcite.errors import ConfigError
from deepcite.llm.client import LLMClient
from deepcite.llm.modes import StructuredOutputMemory


def get_llm(settings: Settings) -> LLMClient | None:
    """The OpenAI-compatible client when DEEPCITE_LLM_BASE_URL and DEEPCITE_LLM_MODEL are set, else None."""
    llm = settings.llm
    if not llm.base_url and not llm.model:
        return None
    if not llm.configured:
        missing = "DEEPCITE_LLM_MODEL" if llm.base_url else "DEEPCITE_LLM_BASE_URL"
        raise ConfigError(f"the LLM is half-configured: set {missing} too, or unset both to run offline")
    memory = (
        StructuredOutputMemory(settings.data_dir / "llm" / "structured_output.json")
        if llm.remember_structured_output
        else None
    )
    from deepcite.llm.openai_client import OpenAICompatClient  # the SDK loads only when an LLM is configured

    return OpenAICompatClient(llm, memory=memory)
