"""The LLM generator: grounded prompts to any OpenAI-compatible model, the extractive generator on failure.

Usage::

    gen = LLMGenerator(get_llm(settings), settings, fallback=ExtractiveGenerator(embedder, settings.answer))
    text = await gen.summary(ctx)

Passages are shown best first, at most ``answer.budget.{summary,long_answer,subanswer}_passages`` of them,
each cut to ``answer.budget.passage_chars``, and trimmed so that prompt plus the part's output cap
(``llm.stages``) fit in ``answer.budget.tokens`` (estimate in :mod:`deepcite.llm.budget`) and, once the model's
pace is measured (:mod:`deepcite.llm.speed`), in the time the part has left after the calls in flight. A part
the model cannot write in time (not even one passage) runs offline at once, the prediction its reason. The
sub-answers end once ``answer.budget.subanswer_share`` of the answer's time left is spent, so the summary keeps
the rest. Any :class:`LLMError` (endpoint down
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
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
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
from deepcite.llm.budget import estimate_messages_tokens, estimate_tokens, fit_to_budget
from deepcite.llm.client import LLMClient, Message
from deepcite.llm.deadline import (
    LLMUnavailableError,
    ReplyRejectedError,
    call_deadline,
    current_budget,
    failure_reason,
    in_stage,
    stage_until,
)
from deepcite.llm.speed import ModelTooSlowError, SpeedMeter
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
                a.decision.summary_max_words,
            )

        return await self._generate(
            "summary",
            ctx.selected_chunks[: a.budget.summary_passages],
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
            ctx.selected_chunks[: self._answer.budget.long_answer_passages],
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

        budget = current_budget()
        end = None
        if budget is not None:  # the sub-answers' share of the answer's LLM time left
            now = time.monotonic()
            end = now + max(0.0, budget.llm_deadline - now) * self._answer.budget.subanswer_share
        with stage_until(end) if end is not None else nullcontext():
            return await self._generate(
                "sub-answer",
                chunks[: self._answer.budget.subanswer_passages],
                build,
                lambda: self._fallback.subanswer(ctx, subquestion),
                limit,
            )

    def reply_cap(self) -> int:
        """The output cap of the part being written (the client's, by stage; ``llm.max_output_tokens`` else)."""
        cap = getattr(self._llm, "reply_cap", None)
        return int(cap()) if callable(cap) else self._llm_settings.max_output_tokens

    def fit_messages(self, chunks: Sequence[ContextChunk], build: BuildMessages) -> list[Message]:
        """The prompt of :meth:`fit_request`."""
        return self.fit_request(chunks, build)[0]

    def fit_request(self, chunks: Sequence[ContextChunk], build: BuildMessages) -> tuple[list[Message], int]:
        """The prompt with as many leading chunks (each cut to ``answer.budget.passage_chars``) as the token
        budget and, once the model's pace is known, the time left allow, and the reply's output cap: the part's,
        or when not even one passage fits with it, what the pace can write after one passage (down to
        ``llm.stages.min_reply_tokens``). LLMError when none fit (:class:`ModelTooSlowError` when the time is
        what is short)."""
        cpt = self._llm_settings.chars_per_token
        output = self.reply_cap()
        shown = [cut_passage(c, self._answer.budget.passage_chars) for c in chunks]
        frame = estimate_messages_tokens(build([]), cpt)
        available = self._answer.budget.tokens - output - frame
        passages = [format_passage(c) for c in shown]
        count = fit_to_budget(passages, available, cpt, separator=PASSAGE_SEPARATOR)
        if count == 0:
            raise LLMError(
                f"DEEPCITE_ANSWER_BUDGET_TOKENS={self._answer.budget.tokens} leaves no room for one passage "
                f"after the prompt and {output} output tokens; raise the budget"
            )
        meter: SpeedMeter | None = getattr(self._llm, "speed", None)
        if isinstance(meter, SpeedMeter):
            deadline, bound = call_deadline(self._llm_settings.call_deadline_s)
            budget = current_budget()
            timed_out = list(budget.timed_out) if budget is not None else []
            left = deadline - time.monotonic() - meter.queued_s()
            readable = meter.prompt_tokens_within(left, output, timed_out)
            if readable is not None:
                by_time = fit_to_budget(passages, readable - frame, cpt, separator=PASSAGE_SEPARATOR)
                if by_time == 0:
                    one = frame + fit_tokens(passages[:1], cpt)
                    shorter = meter.cap_within(left, one, timed_out) or 0
                    floor = self._llm_settings.stages.min_reply_tokens
                    if shorter >= floor:  # one passage and a shorter reply
                        log.info(
                            "model pace: one passage and %d of %d reply tokens in %.0f s",
                            shorter,
                            output,
                            left,
                        )
                        return build(shown[:1]), min(output, shorter)
                    pace = meter.pace(timed_out)
                    assert pace is not None
                    predicted = pace.seconds(one, meter.reply_tokens(floor)) + meter.queued_s()
                    raise ModelTooSlowError(predicted, left, pace, bound)
                if by_time < count:
                    log.info("model pace: %d of %d passages readable in %.0f s", by_time, count, left)
                count = min(count, by_time)
        if count < len(chunks):
            log.info("token budget: %d of %d passages shown to the LLM", count, len(chunks))
        return build(shown[:count]), output

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
            with in_stage(part):
                messages, cap = self.fit_request(chunks, build)
                text = await self._llm.achat(messages, max_tokens=cap)
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


def fit_tokens(texts: Sequence[str], chars_per_token: float) -> int:
    """Estimated tokens of ``texts`` joined as passages."""
    return estimate_tokens(PASSAGE_SEPARATOR.join(texts), chars_per_token)


def cut_passage(chunk: ContextChunk, max_chars: int) -> ContextChunk:
    """``chunk`` with its text cut to ``max_chars`` characters, at the last sentence end in the second half of
    that span when there is one (the citation check still reads the whole chunk)."""
    text = chunk.text.strip()
    if len(text) <= max_chars:
        return chunk
    cut = text[:max_chars]
    end = max(cut.rfind(". "), cut.rfind("? "), cut.rfind("! "))
    cut = cut[: end + 1] if end >= max_chars // 2 else cut.rstrip() + " …"
    return chunk.model_copy(update={"text": cut})
