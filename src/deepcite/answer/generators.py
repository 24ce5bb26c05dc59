"""The generator protocol (sync or async twins) and the choice of generator from settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.errors import InputError, InsufficientEvidenceError
from deepcite.models import QueryAspect


@runtime_checkable
class Generator(Protocol):
    """Writes the answer parts from a response context; each raises InsufficientEvidenceError when empty.

    Texts cite the context's display ids as ``[n]``; callers pass every text through
    :func:`deepcite.answer.citations.check_citations`.
    """

    def summary(self, ctx: ResponseContext) -> str:
        """A quick summary of the selected chunks."""

    def long_answer(self, ctx: ResponseContext, aspects: Sequence[QueryAspect] | None = None) -> str:
        """A detailed answer, one section per aspect (``ctx.aspects`` when None)."""

    def subanswer(self, ctx: ResponseContext, subquestion: str) -> str:
        """A short answer to one sub-question from its own evidence only."""


@runtime_checkable
class AsyncGenerator(Protocol):
    """Async twin of :class:`Generator` (for generators that wait on the network)."""

    async def summary(self, ctx: ResponseContext) -> str: ...

    async def long_answer(
        self, ctx: ResponseContext, aspects: Sequence[QueryAspect] | None = None
    ) -> str: ...

    async def subanswer(self, ctx: ResponseContext, subquestion: str) -> str: ...


AnswerGenerator = Generator | AsyncGenerator


def require_selected(ctx: ResponseContext) -> None:
    """InsufficientEvidenceError when the context has no selected chunk to answer from."""
    if not ctx.selected_chunks:
        raise InsufficientEvidenceError(
            f"request {ctx.request_id} has no selected evidence for {ctx.query!r}; "
            "nothing is answered from an empty context (broaden the query or ingest more documents)"
        )


def require_any(ctx: ResponseContext) -> None:
    """InsufficientEvidenceError when the context holds no chunk at all."""
    if ctx.is_empty():
        require_selected(ctx)


def section_titles(ctx: ResponseContext, aspects: Sequence[QueryAspect] | None) -> list[str]:
    """Long-answer sections: the aspects, else the sub-questions, else none (one untitled section)."""
    chosen = ctx.aspects if aspects is None else aspects
    if chosen:
        return [a.aspect for a in chosen]
    return list(ctx.subquery_evidence)


def subquery_chunks(ctx: ResponseContext, subquestion: str) -> list[ContextChunk]:
    """The sub-question's own evidence; InputError naming the known sub-questions when it is not one."""
    if subquestion not in ctx.subquery_evidence:
        known = "; ".join(ctx.subquery_evidence) or "none"
        raise InputError(
            f"sub-question {subquestion!r} is not part of request {ctx.request_id} (known: {known})"
        )
    return ctx.subquery_evidence[subquestion]
