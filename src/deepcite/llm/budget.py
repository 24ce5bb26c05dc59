"""Token estimates and trimming evidence to a per-request token budget.

The estimate is ``ceil(characters / chars_per_token)`` (``DEEPCITE_LLM_CHARS_PER_TOKEN``, default 4: the
usual figure for English under BPE tokenizers such as OpenAI's and Llama's). It needs no tokenizer, works
for any model behind an OpenAI-compatible endpoint, and errs on the safe side for English prose; raise
or lower the setting for other languages or models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from deepcite.errors import ConfigError
from deepcite.llm.client import Message

# every chat message costs a few tokens of framing (role, separators) on OpenAI-style chat templates
MESSAGE_OVERHEAD_TOKENS = 4


def estimate_tokens(text: str, chars_per_token: float) -> int:
    """Approximate token count of ``text``."""
    if chars_per_token <= 0:
        raise ConfigError(
            f"chars_per_token must be positive, got {chars_per_token}; fix DEEPCITE_LLM_CHARS_PER_TOKEN"
        )
    return math.ceil(len(text) / chars_per_token)


def estimate_messages_tokens(messages: Sequence[Message], chars_per_token: float) -> int:
    """Approximate prompt tokens of a chat request."""
    return sum(estimate_tokens(m["content"], chars_per_token) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def fit_to_budget(
    texts: Sequence[str], budget_tokens: int, chars_per_token: float, *, separator: str = ""
) -> int:
    """How many leading ``texts`` (joined by ``separator``) fit in ``budget_tokens``; order is kept."""
    used = 0
    sep_tokens = estimate_tokens(separator, chars_per_token) if separator else 0
    for count, text in enumerate(texts):
        cost = estimate_tokens(text, chars_per_token) + (sep_tokens if count else 0)
        if used + cost > budget_tokens:
            return count
        used += cost
    return len(texts)
