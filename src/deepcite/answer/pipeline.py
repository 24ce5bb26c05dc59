"""The answer stage: one shared context, sub-answers, then quick summary and long answer in parallel.

Usage::

    result = await answer(pack, aspects, ExtractiveGenerator(embedder, settings.answer), settings.answer)
    result.summary, result.answer, result.citations

Every generated text passes :func:`deepcite.answer.citations.check_citations`: the summary and the long
answer against the selected chunks' ids, each sub-answer against its own evidence's ids; with ``support``
(:class:`deepcite.answer.support.CitationSupport`) each cited chunk must also support its sentence. A part whose
context is empty gets the insufficient-evidence template with no citations, and ``success`` stays true.

Time: a question runs under :func:`answer_budget` (``answer.budget.request_s``); the LLM writer's calls end
``answer.budget.offline_reserve_s`` before it runs out, the parts they did not write come from the offline writer,
and the result's ``degraded`` says which and why. Research's LLM calls may use only
``answer.budget.research_share`` of that time; the answer's parts run in :func:`~deepcite.llm.deadline.answer_stage`.

Guards: an LLM-written part whose sentences mostly lose their citations in the check
(:func:`deepcite.answer.guards.grounding_problem`) is replaced by the offline writer's part when that keeps a
larger share. ``written`` says, per part (the research steps' too, and the citation judge), whether the LLM or
the offline path wrote it, and why.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from functools import partial
from typing import Any

from pydantic import BaseModel, Field, model_validator

from deepcite.answer.citations import CitationCheck, ClaimCheck, check_citations
from deepcite.answer.context import ContextChunk, ResponseContext, ResponseContextManager
from deepcite.answer.contract import bounded_long_answer, bounded_summary
from deepcite.answer.decision import AnswerDecision
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.generators import AnswerGenerator
from deepcite.answer.guards import grounding_problem, kept_share
from deepcite.answer.llm_generator import Draft, LLMGenerator
from deepcite.answer.prompts import INSUFFICIENT, UNKNOWN
from deepcite.answer.support import CitationSupport
from deepcite.config import AnswerSettings
from deepcite.errors import InsufficientEvidenceError
from deepcite.llm.deadline import (
    Degraded,
    PartWriter,
    ReplyRejectedError,
    RequestBudget,
    answer_stage,
    current_budget,
    request_budget,
)
from deepcite.models import AspectCoverage, EvidencePack, QueryAspect, RoundReport


class Citation(ContextChunk):
    """A numbered source of the response: the cited chunk with every Chunk field (file, page, page_end,
    section, title, authors, doi, pmid, year, url, …), its display ``id`` and its ``score``, and the quote:
    the sentence(s) of its text that support the claim citing it best (``text[quote_start:quote_end] ==
    quote``; empty when no kept sentence cites it) and ``quote_page``, the page a citation opens at: the page
    the quote starts on (the chunk's first page without a quote, or for chunks stored without sentence pages).
    """

    quote: str = ""
    quote_start: int = 0
    quote_end: int = 0
    quote_page: int | None = None

    @model_validator(mode="after")
    def _opens_at_a_page(self) -> Citation:
        """A citation saved before quote pages were recorded opens at its chunk's first page."""
        if self.quote_page is None:
            self.quote_page = self.page
        return self

    @classmethod
    def from_chunk(cls, chunk: ContextChunk, claims: Sequence[ClaimCheck] = ()) -> Citation:
        """The citation of ``chunk``, quoting the best-scoring supported claim among ``claims`` citing it."""
        citation = cls.model_validate(chunk, from_attributes=True)
        best = max(
            (c for c in claims if c.id == chunk.id and c.supported),
            key=lambda c: c.score if c.score is not None else 0.0,
            default=None,
        )
        if best is not None:
            citation.quote_start, citation.quote_end = best.quote_start, best.quote_end
            citation.quote = chunk.text[best.quote_start : best.quote_end]
            citation.quote_page = chunk.page_at(best.quote_start)
        return citation


class SubAnswer(BaseModel):
    subquestion: str
    answer: str
    citations: list[int] = Field(default_factory=list)
    evidence: list[int] = Field(default_factory=list)  # ids of exactly this sub-question's own evidence


class PartResult(BaseModel):
    """One checked text (summary, long answer or sub-answer) and how long it took."""

    text: str
    check: CitationCheck
    latency_ms: float
    degraded: Degraded | None = None  # set when the LLM writer fell back to the offline one
    insufficient: bool = False  # no evidence to write from: the text is the insufficient-evidence template
    written: PartWriter | None = None  # with an LLM writer: whether it or the offline writer wrote the text


class AnswerResult(BaseModel):
    """The answer stage's response; its fields map onto the ``/api/unified-search`` JSON."""

    success: bool = True
    request_id: str
    query: str
    summary: str
    answer: str
    # no evidence to answer from: summary and answer are the insufficient-evidence template (clients show a
    # notice instead of an answer)
    insufficient: bool = False
    # what the answer stage decided before writing: stated or not, the stating sentence, a yes/no verdict
    # (answer/decision.py); None without evidence or when the offline writer is not the decider
    decision: AnswerDecision | None = None
    subanswers: list[SubAnswer] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)  # every chunk of the context, by id
    coverage: AspectCoverage | None = None  # filled by the caller
    retrieval_report: list[RoundReport] = Field(default_factory=list)  # filled by the caller
    citation_check: CitationCheck = Field(default_factory=CitationCheck)  # totals over every part
    degraded: Degraded | None = None  # parts written offline because the LLM failed or ran out of time
    # with an LLM configured: per part (plan, coverage grade, next sub-question, sub-answers, summary, long
    # answer, citation judge), whether the LLM or the offline path wrote it, and why
    written: list[PartWriter] = Field(default_factory=list)
    retrieval_latency_ms: float | None = None  # filled by the caller
    summary_latency_ms: float = 0.0
    answer_latency_ms: float = 0.0
    total_chunks: int = 0  # chunks in the context (selected plus sub-question extras)
    chunks_used_summary: int = 0  # distinct chunks the summary cites
    chunks_used_answer: int = 0  # distinct chunks the long answer cites


def answer_budget(settings: AnswerSettings) -> AbstractContextManager[RequestBudget]:
    """The time budget of one question or regeneration (``answer.budget.request_s``)."""
    return request_budget(
        settings.budget.request_s,
        reserve_s=settings.budget.offline_reserve_s,
        research_share=settings.budget.research_share,
    )


def _degraded() -> Degraded | None:
    budget = current_budget()
    return budget.degraded() if budget is not None else None


async def _call(method: Callable[..., Any], *args: Any) -> str:
    """Await an async generator method; run a sync one in a worker thread."""
    if inspect.iscoroutinefunction(method):
        return await method(*args)
    return await asyncio.to_thread(method, *args)


async def _check(
    raw: str, chunks: Sequence[ContextChunk], settings: AnswerSettings, support: CitationSupport | None
) -> tuple[str, CitationCheck]:
    by_id = {c.id: c for c in chunks}
    supports = None if support is None else (lambda sentence, i: support.match(sentence, by_id[i]))
    return await asyncio.to_thread(
        check_citations,
        raw,
        list(by_id),
        settings.citations.unsupported_policy,
        max_range_width=settings.citations.max_range_width,
        supports=supports,
    )


Shape = Callable[[str, bool], str]  # a part's text, and whether the LLM wrote it -> the text to check


def _as_is(text: str, by_llm: bool) -> str:
    return text


async def _checked(
    part: str,
    label: str,
    produce: Callable[[], Any],
    offline: Callable[[], str] | None,
    chunks: Sequence[ContextChunk],
    settings: AnswerSettings,
    support: CitationSupport | None,
    shape: Shape = _as_is,
) -> PartResult:
    """Write one part (``produce`` gives a :class:`Draft`, or the text of a writer without one), ``shape`` it
    (the length contract), check its citations, and ship the offline writer's part instead when the LLM's is
    mostly unsupported (module doc). ``part`` labels the claims, ``label`` the part in ``written``."""
    start = time.perf_counter()
    insufficient = False
    with answer_stage():
        try:
            made = await produce()
        except InsufficientEvidenceError:
            made, insufficient = INSUFFICIENT, True
        draft = made if isinstance(made, Draft) else None
        raw = (
            shape(made.text, made.writer == "llm") if draft else made if insufficient else shape(made, False)
        )
        text, check = await _check(raw, chunks, settings, support)
        if draft is not None and draft.writer == "llm" and offline is not None and settings.guards.enabled:
            problem = grounding_problem(check, settings.guards)
            if problem is not None:
                written = shape(await asyncio.to_thread(offline), False)
                other, other_check = await _check(written, chunks, settings, support)
                if kept_share(other_check) > kept_share(check):
                    text, check = other, other_check
                    error = ReplyRejectedError(problem)
                    draft = Draft(draft.text, "offline", f"reply rejected: {problem}")
                    budget = current_budget()
                    if budget is not None:
                        budget.note_fallback(label, error)
    if not insufficient:  # the check may put the unknown phrase for a sentence: the contract holds after it
        text = shape(text, False)
    written = None
    if draft is not None:
        written = PartWriter(part=label, writer=draft.writer, reason=draft.reason)
        budget = current_budget()
        if budget is not None:
            budget.note_written(label, draft.writer, draft.reason)
    latency_ms = (time.perf_counter() - start) * 1000.0
    return PartResult(
        text=text,
        check=check.for_part(part),
        latency_ms=latency_ms,
        degraded=_degraded(),
        insufficient=insufficient,
        written=written,
    )


def _producers(
    generator: AnswerGenerator, name: str, *args: Any
) -> tuple[Callable[[], Any], Callable[[], str] | None]:
    """How to write a part with ``generator`` (a Draft from an LLM writer) and with its offline writer."""
    if isinstance(generator, LLMGenerator):
        offline = generator.offline
        return partial(getattr(generator, f"{name}_draft"), *args), partial(getattr(offline, name), *args)
    return partial(_call, getattr(generator, name), *args), None


def decider(generator: AnswerGenerator) -> ExtractiveGenerator | None:
    """The writer whose decision the response carries: the offline writer (an LLM writer's fallback)."""
    offline = generator.offline if isinstance(generator, LLMGenerator) else generator
    return offline if isinstance(offline, ExtractiveGenerator) else None


def _summary_shape(decision: AnswerDecision | None, settings: AnswerSettings) -> Shape:
    """The summary's contract (:mod:`deepcite.answer.contract`); an LLM's summary of evidence that does not
    state the answer opens with the decision's not-stated line, and a not-stated line whose closest evidence
    the citation check left unsupported stands alone ("… do not state …." not "… the closest passages say:
    Unknown based on provided sources.")."""

    def shape(text: str, by_llm: bool) -> str:
        if decision is not None and not decision.stated and settings.decision.enabled:
            line = decision.not_stated_line()
            if by_llm and not text.startswith(line):
                text = f"{line}\n{text}"
            if text.startswith(line) and text[len(line) :].strip() in ("", UNKNOWN):
                text = decision.not_stated_line(closest=False)
        return bounded_summary(
            text, settings.length.summary_max_sentences, settings.decision.summary_max_words
        )

    return shape


async def generate_summary(
    ctx: ResponseContext,
    generator: AnswerGenerator,
    settings: AnswerSettings,
    support: CitationSupport | None = None,
    decision: AnswerDecision | None = None,
) -> PartResult:
    """The quick summary, within its contract, citation-checked against the selected chunks."""
    produce, offline = _producers(generator, "summary", ctx)
    shape = _summary_shape(decision, settings)
    return await _checked(
        "summary", "summary", produce, offline, ctx.selected_chunks, settings, support, shape
    )


async def generate_long_answer(
    ctx: ResponseContext,
    generator: AnswerGenerator,
    settings: AnswerSettings,
    support: CitationSupport | None = None,
) -> PartResult:
    """The long answer by aspect (``ctx.aspects``), within its word limit, citation-checked against the
    selected chunks."""
    produce, offline = _producers(generator, "long_answer", ctx, ctx.aspects)

    def shape(text: str, by_llm: bool) -> str:
        return bounded_long_answer(text, settings.decision.long_answer_max_words)

    return await _checked(
        "answer", "long answer", produce, offline, ctx.selected_chunks, settings, support, shape
    )


async def generate_subanswer(
    ctx: ResponseContext,
    subquestion: str,
    generator: AnswerGenerator,
    settings: AnswerSettings,
    support: CitationSupport | None = None,
) -> PartResult:
    """One sub-answer, citation-checked against that sub-question's own evidence."""
    produce, offline = _producers(generator, "subanswer", ctx, subquestion)
    chunks = ctx.subquery_evidence.get(subquestion, [])
    label = f"sub-answer: {subquestion}"
    return await _checked(subquestion, label, produce, offline, chunks, settings, support)


def _written(parts: Sequence[PartResult], support: CitationSupport | None) -> list[PartWriter]:
    """Who wrote each part of the request: what the budget noted (research steps first), else the parts'
    own notes, then the citation judge's standing."""
    budget = current_budget()
    noted = budget.written() if budget is not None else [p.written for p in parts if p.written is not None]
    judge = support.judge_standing() if support is not None else None
    return [*noted, *([judge] if judge is not None else [])]


async def answer_context(
    ctx: ResponseContext,
    generator: AnswerGenerator,
    settings: AnswerSettings,
    support: CitationSupport | None = None,
) -> AnswerResult:
    """Sub-answers (concurrently), then quick summary and long answer in parallel, from one context."""
    subquestions = list(ctx.subquery_evidence)
    if support is not None:
        with answer_stage():  # the judge answers its control pairs (once) before any verdict counts
            await asyncio.to_thread(support.judge_standing)
    writer = decider(generator)
    if writer is not None:
        # every evidence sentence in one batch before the parts run in parallel: a text's vector depends a little on
        # the batch it is encoded in (bf16), and the parts share the cache, so which part embedded it first changed
        # an answer near a threshold from one run to the next
        with answer_stage():
            await asyncio.to_thread(writer.prime, ctx.all_chunks())
    sub_parts = await asyncio.gather(
        *(generate_subanswer(ctx, q, generator, settings, support) for q in subquestions)
    )
    decision = None
    if writer is not None and ctx.selected_chunks:
        with answer_stage():
            decision = await asyncio.to_thread(writer.decide, ctx)
    summary, long_answer = await asyncio.gather(
        generate_summary(ctx, generator, settings, support, decision),
        generate_long_answer(ctx, generator, settings, support),
    )
    total = summary.check.merge(long_answer.check)
    for part in sub_parts:
        total = total.merge(part.check)
    return AnswerResult(
        request_id=ctx.request_id,
        query=ctx.query,
        summary=summary.text,
        answer=long_answer.text,
        insufficient=summary.insufficient and long_answer.insufficient,
        decision=None if summary.insufficient else decision,
        subanswers=[
            SubAnswer(
                subquestion=q,
                answer=p.text,
                citations=p.check.cited_ids,
                evidence=[c.id for c in ctx.subquery_evidence.get(q, [])],
            )
            for q, p in zip(subquestions, sub_parts, strict=True)
        ],
        citations=[Citation.from_chunk(c, total.claims) for c in ctx.all_chunks()],
        citation_check=total,
        degraded=_degraded(),
        written=_written([*sub_parts, summary, long_answer], support),
        summary_latency_ms=summary.latency_ms,
        answer_latency_ms=long_answer.latency_ms,
        total_chunks=len(ctx.all_chunks()),
        chunks_used_summary=len(summary.check.cited_ids),
        chunks_used_answer=len(long_answer.check.cited_ids),
    )


async def answer(
    pack: EvidencePack,
    aspects: Sequence[QueryAspect] | None,
    generator: AnswerGenerator,
    settings: AnswerSettings,
    *,
    contexts: ResponseContextManager | None = None,
    request_id: str | None = None,
    support: CitationSupport | None = None,
) -> AnswerResult:
    """Answer an evidence pack: build (and store, when ``contexts`` is given) its context, then answer it.

    ``aspects`` None takes the pack's coverage aspects.
    """
    ctx = ResponseContext.from_pack(pack, settings, aspects=aspects, request_id=request_id)
    if contexts is not None:
        contexts.put(ctx)
    return await answer_context(ctx, generator, settings, support)
