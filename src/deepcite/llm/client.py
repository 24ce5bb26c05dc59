"""The LLM client protocol shared by the planner, HyDE, coverage grader, answer stage and practitioners."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypedDict, runtime_checkable


class Message(TypedDict):
    role: str  # "system" | "user" | "assistant"
    content: str


@runtime_checkable
class LLMClient(Protocol):
    """A chat model. ``schema`` asks for JSON output matching a JSON Schema where the server supports it."""

    @property
    def model(self) -> str: ...

    def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """The assistant's reply text; raises LLMError after retries are exhausted."""

    async def achat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Async twin of :meth:`chat`."""
