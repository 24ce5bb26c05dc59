"""The LLM generator: grounded prompts to any OpenAI-compatible model, the extractive generator on failure.

Usage::

    gen = LLMGenerator(get_llm(settings), settings, fallback=ExtractiveGenerator(embedder, settings.answer))
    text = await gen.summary(ctx)

Passages are shown best first and trimmed so that prompt plus ``llm.max_output_tokens`` fit in
``answer.budget.tokens`` (estimate in :mod:`deepcite.llm.budget`). Any :class:`LLMError` (endpoint down
after retries, empty reply, budget too small for one passage, the call's deadline or the request's time
budget passed) logs a warning and the part is written by the fallback instead, so an answer is always
produced from the same context; the request's budget notes the part, for the response's ``degraded``.

A reply that arrives is checked before it is used (:func:`deepcite.answer.guards.structure_problem`: repeated
headings, lines or sentences, empty sections, a length far over what was asked): one that fails is written by
the fallback too, and noted with the reason. The ``*_draft`` methods return a :class:`Draft` that says who
wrote the text and why; the answer pipeline uses them to check grounding and to fill the response's
``written``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.generators import (
    Generator,
    require_any,
    require_selected,
    section_titles,
    subquery_chunks,
)
from deepcite.answer.guards import structure_problem
from deepcite.answer.prompts import (
    PASSAGE_SEPARATOR,
    UNKNOWN,
    format_passage,
    long_answer_messages,
    subanswer_messages,
    summary_messages,
)
from deepcite.config import Settings
from deepcite.errors import LLMError
from deepcite.llm.budget import estimate_messages_tokens, fit_to_budget
from deepcite.llm.client import LLMClient, Message
from deepcite.llm.deadline import LLMUnavailableError, ReplyRejectedError, current_budget, failure_reason
from deepcite.models import QueryAspect

log = logging.getLogger(__name__)

BuildMessages = Callable[[Sequence[ContextChunk]], list[Message]]


@dataclass(frozen=True)
class Draft:
    """An answer part's text before the citation check, who wrote it, and why the offline writer did."""

    text: str
    writer: Literal["llm", "offline"]
    reason: str | None = None


class LLMGenerator:
    """Async :class:`deepcite.answer.generators.AsyncGenerator` over an :class:`LLMClient`."""

    def __init__(self, llm: LLMClient, settings: Settings, fallback: Generator) -> None:
        self._llm = llm
        self._answer = settings.answer
        self._llm_settings = settings.llm
        self._fallback = fallback

    @property
    def offline(self) -> Generator:
        """The offline writer each part falls back to."""
        return self._fallback

    async def summary(self, ctx: ResponseContext) -> str:
        return (await self.summary_draft(ctx)).text

    async def long_answer(self, ctx: ResponseContext, aspects: Sequence[QueryAspect] | None = None) -> str:
        return (await self.long_answer_draft(ctx, aspects)).text

    async def subanswer(self, ctx: ResponseContext, subquestion: str) -> str:
        return (await self.subanswer_draft(ctx, subquestion)).text

    async def summary_draft(self, ctx: ResponseContext) -> Draft:
        """The quick summary, and who wrote it."""
        require_selected(ctx)
        a = self._answer

        def build(chunks: Sequence[ContextChunk]) -> list[Message]:
            return summary_messages(
                ctx.query,
                chunks,
                a.length.summary_min_sentences,
                a.length.summary_max_sentences,
            )

        return await self._generate(
            "summary",
            ctx.selected_chunks,
            build,
            lambda: self._fallback.summary(ctx),
            a.length.summary_max_sentences,
        )

    async def long_answer_draft(
        self, ctx: ResponseContext, aspects: Sequence[QueryAspect] | None = None
    ) -> Draft:
        """The long answer, and who wrote it."""
        require_selected(ctx)
        titles = section_titles(ctx, aspects)
        per_section = self._answer.length.long_answer_sentences_per_aspect

        def build(chunks: Sequence[ContextChunk]) -> list[Message]:
            return long_answer_messages(ctx.query, chunks, titles, per_section)

        return await self._generate(
            "long answer",
            ctx.selected_chunks,
            build,
            lambda: self._fallback.long_answer(ctx, aspects),
            per_section * max(1, len(titles)),
        )

    async def subanswer_draft(self, ctx: ResponseContext, subquestion: str) -> Draft:
        """One sub-answer, and who wrote it."""
        require_any(ctx)
        chunks = subquery_chunks(ctx, subquestion)
        if not chunks:
            return Draft(UNKNOWN, "offline", "no evidence for the sub-question")
        limit = self._answer.length.subanswer_max_sentences

        def build(shown: Sequence[ContextChunk]) -> list[Message]:
            return subanswer_messages(ctx.query, subquestion, shown, limit)

        return await self._generate(
            "sub-answer", chunks, build, lambda: self._fallback.subanswer(ctx, subquestion), limit
        )

    def fit_messages(self, chunks: Sequence[ContextChunk], build: BuildMessages) -> list[Message]:
        """The prompt with as many leading chunks as the token budget allows; LLMError when none fit."""
        cpt = self._llm_settings.chars_per_token
        output = self._llm_settings.max_output_tokens
        available = self._answer.budget.tokens - output - estimate_messages_tokens(build([]), cpt)
        count = fit_to_budget(
            [format_passage(c) for c in chunks], available, cpt, separator=PASSAGE_SEPARATOR
        )
        if count == 0:
            raise LLMError(
                f"DEEPCITE_ANSWER_BUDGET_TOKENS={self._answer.budget.tokens} leaves no room for one passage "
                f"after the prompt and {output} output tokens; raise the budget"
            )
        if count < len(chunks):
            log.info("token budget: %d of %d passages shown to the LLM", count, len(chunks))
        return build(chunks[:count])

    async def _generate(
        self,
        part: str,
        chunks: Sequence[ContextChunk],
        build: BuildMessages,
        fallback: Callable[[], str],
        max_sentences: int,
    ) -> Draft:
        guards = self._answer.guards
        try:
            messages = self.fit_messages(chunks, build)
            text = await self._llm.achat(messages, max_tokens=self._llm_settings.max_output_tokens)
            problem = (
                structure_problem(text, max_sentences=max_sentences, settings=guards)
                if guards.enabled
                else None
            )
            if problem is not None:
                raise ReplyRejectedError(problem)
        except LLMError as exc:
            # a server found unreachable was said once, by the client's breaker
            level = logging.INFO if isinstance(exc, LLMUnavailableError) else logging.WARNING
            log.log(level, "LLM %s not used (%s); writing it with the extractive generator", part, exc)
            budget = current_budget()
            if budget is not None:
                budget.note_fallback(part, exc)
            return Draft(await asyncio.to_thread(fallback), "offline", failure_reason(exc))
        return Draft(text, "llm")
