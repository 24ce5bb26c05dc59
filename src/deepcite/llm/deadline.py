"""Time limits: each LLM call's deadline (``llm.call_deadline_s``) and each request's budget.

A request's budget (``answer.budget.request_s``) lives in a context variable, set by the Engine around a
question or a regeneration with :func:`request_budget`. Every LLM call of that request sees it, in any
thread or task (``asyncio.to_thread`` and ``asyncio`` tasks copy the context), and ends at whichever
comes first: its own deadline, or the budget less ``answer.budget.offline_reserve_s`` (kept back so the offline
writer can finish what the LLM did not). The parts written offline are noted on the budget, and the
response's ``degraded`` field says why. A cancelled request (a client that went away) cancels its budget:
later LLM calls of that request end at once.

Stages: research runs first and may not spend the answer's time. A call made outside :func:`answer_stage`
(planning, coverage grading, next hops, HyDE) ends once ``research_share`` of the request's LLM time is spent;
calls inside it (the answer's parts, the citation judge) may use all of it.

Who wrote each part: every LLM step notes on the budget whether its result came from the LLM or from the
offline path, and why (:class:`PartWriter`); the response lists them (``written``). A server found unreachable
is noted too (:meth:`RequestBudget.note_unreachable`): later calls of the request end at once.

Stage names and ends: a step runs inside :func:`in_stage` with the name ``written`` gives it ("plan", "summary",
"sub-answer: …"), so the client applies that stage's output cap (``llm.stages``); :func:`stage_until` ends the
calls inside it earlier than the request's budget would (the sub-answers' share of the answer's time).

Usage::

    with request_budget(20.0, reserve_s=3.0) as budget:
        ...  # every LLM call in here ends by budget.llm_deadline
    budget.degraded()  # Degraded(reason="LLM did not answer within 17 s; offline answer", parts=[...]) or None
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from deepcite.errors import LLMError, LLMTimeoutError
from deepcite.llm.speed import ModelTooSlowError


class Degraded(BaseModel):
    """Why (some of) an answer was written by the offline path instead of the LLM."""

    reason: str
    parts: list[str] = Field(default_factory=list)  # summary, long answer, sub-answer … written offline


class PartWriter(BaseModel):
    """Who wrote one part of a response (plan, coverage grade, next sub-question, summary, answer, a
    sub-answer, the citation judge): the LLM, or the offline path and why."""

    part: str
    writer: Literal["llm", "offline"]
    reason: str | None = None  # why offline: "timeout", "HTTP 500", "unusable reply", a guard that fired …


class ReplyRejectedError(LLMError):
    """The LLM answered, but a guard refused what it wrote (repeated headings, mostly unsupported …)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the LLM's reply was not used: {reason}")
        self.reason = reason


class LLMUnavailableError(LLMError):
    """The LLM server could not be reached; the breaker keeps later calls from trying (llm/breaker.py)."""


@dataclass
class RequestBudget:
    """One request's time budget, who wrote each part, and the parts that fell back to the offline writer."""

    seconds: float
    reserve_s: float = 0.0
    research_share: float = 1.0
    started: float = field(default_factory=time.monotonic)
    cancelled: bool = False
    unreachable: str | None = None  # why the server could not be reached, once it could not
    # calls of this request that timed out: (prompt tokens, reply cap, seconds), a lower bound of the model's
    # pace for the request's later calls (llm/speed.py)
    timed_out: list[tuple[int, int, float]] = field(default_factory=list)
    _fallbacks: list[tuple[str, LLMError]] = field(default_factory=list)
    _written: list[PartWriter] = field(default_factory=list)

    @property
    def llm_deadline(self) -> float:
        """The monotonic time by which every LLM call of the request must have ended."""
        return self.started + max(0.0, self.seconds - self.reserve_s)

    @property
    def llm_seconds(self) -> float:
        """How long LLM calls of this request may run in all, from its start."""
        return max(0.0, self.seconds - self.reserve_s)

    @property
    def research_seconds(self) -> float:
        """How long the research stage's LLM calls may run, from the request's start."""
        return self.llm_seconds * self.research_share

    def cancel(self) -> None:
        """The request was cancelled: its remaining LLM calls end at once."""
        self.cancelled = True

    def note_unreachable(self, reason: str) -> None:
        """The server could not be reached: the request's later LLM calls end at once."""
        self.unreachable = self.unreachable or reason

    def note_fallback(self, part: str, error: LLMError) -> None:
        """Record that ``part`` was written offline because of ``error``."""
        self._fallbacks.append((part, error))

    def note_written(self, part: str, writer: Literal["llm", "offline"], reason: str | None = None) -> None:
        """Record who wrote ``part`` (the last note of a part wins: a guard may overrule the LLM's reply)."""
        self._written = [w for w in self._written if w.part != part]
        self._written.append(PartWriter(part=part, writer=writer, reason=reason))

    def written(self) -> list[PartWriter]:
        """Who wrote each part noted so far, in the order they were first finished."""
        return list(self._written)

    def degraded(self) -> Degraded | None:
        """What the response says about its offline parts, or None when the LLM wrote everything."""
        if not self._fallbacks:
            return None
        parts = list(dict.fromkeys(part for part, _ in self._fallbacks))
        timeouts = [e for _, e in self._fallbacks if isinstance(e, LLMTimeoutError)]
        if timeouts:
            seconds = min(e.seconds for e in timeouts)
            return Degraded(reason=f"LLM did not answer within {seconds:g} s; offline answer", parts=parts)
        return Degraded(
            reason=f"LLM failed ({failure_kind(self._fallbacks[0][1])}); offline answer", parts=parts
        )


def failure_kind(error: LLMError) -> str:
    """A short, address-free name of what went wrong (the full message, with the endpoint, is logged)."""
    cause = error.__cause__
    status = getattr(cause, "status_code", None)
    if isinstance(error, ReplyRejectedError):
        return f"reply rejected: {error.reason}"
    if isinstance(error, ModelTooSlowError):
        return error.reason
    if isinstance(error, LLMUnavailableError):
        return "server unreachable"
    if status is not None:
        return f"HTTP {status}"
    if cause is not None:
        return type(cause).__name__
    return "unusable reply"


def failure_reason(error: Exception) -> str:
    """A short, address-free reason for any failed LLM step: ``timeout``, :func:`failure_kind` for an
    :class:`LLMError`, else the exception's type name."""
    if isinstance(error, ModelTooSlowError):
        return error.reason
    if isinstance(error, LLMTimeoutError):
        return "timeout"
    if isinstance(error, LLMError):
        return failure_kind(error)
    return type(error).__name__


_budget: ContextVar[RequestBudget | None] = ContextVar("deepcite_request_budget", default=None)
_answering: ContextVar[bool] = ContextVar("deepcite_answer_stage", default=False)
_stage: ContextVar[str | None] = ContextVar("deepcite_stage", default=None)
_stage_end: ContextVar[float | None] = ContextVar("deepcite_stage_end", default=None)


@contextmanager
def request_budget(
    seconds: float, *, reserve_s: float = 0.0, research_share: float = 1.0
) -> Iterator[RequestBudget]:
    """Run the block under a budget of ``seconds``; LLM calls inside end ``reserve_s`` before it runs out,
    and those outside :func:`answer_stage` once ``research_share`` of the LLM time is spent."""
    budget = RequestBudget(seconds=seconds, reserve_s=reserve_s, research_share=research_share)
    token = _budget.set(budget)
    try:
        yield budget
    except asyncio.CancelledError:  # the caller went away: work still running for it stops
        budget.cancel()
        raise
    finally:
        _budget.reset(token)


def current_budget() -> RequestBudget | None:
    """The budget of the request being served in this context, if any."""
    return _budget.get()


@contextmanager
def answer_stage() -> Iterator[None]:
    """LLM calls inside are the answer's: they may use the request's whole LLM time."""
    token = _answering.set(True)
    try:
        yield
    finally:
        _answering.reset(token)


@contextmanager
def in_stage(part: str) -> Iterator[None]:
    """LLM calls inside write ``part`` (the name ``written`` gives it): its output cap applies."""
    token = _stage.set(part)
    try:
        yield
    finally:
        _stage.reset(token)


def current_stage() -> str | None:
    """The part the LLM call being made writes, if a step named it (:func:`in_stage`)."""
    return _stage.get()


@contextmanager
def stage_until(end: float) -> Iterator[None]:
    """LLM calls inside end by ``end`` (monotonic time) at the latest, as well as by the request's budget."""
    token = _stage_end.set(end)
    try:
        yield
    finally:
        _stage_end.reset(token)


def note_written(part: str, writer: Literal["llm", "offline"], reason: str | None = None) -> None:
    """Note on the current request's budget (if any) who wrote ``part``."""
    budget = _budget.get()
    if budget is not None:
        budget.note_written(part, writer, reason)


def note_fallback(part: str, error: Exception) -> None:
    """Note on the current request's budget (if any) that ``part``, a research step, ran offline because of
    ``error`` (in ``written``; the response's ``degraded`` is about the answer's parts)."""
    note_written(part, "offline", failure_reason(error))


def call_deadline(call_deadline_s: float) -> tuple[float, float]:
    """The monotonic deadline of an LLM call starting now, and the seconds that bound it.

    The call's own ``call_deadline_s`` or the request budget's LLM deadline, whichever comes first; raises
    LLMTimeoutError when the request's budget is already spent or the request was cancelled.
    """
    now = time.monotonic()
    deadline, seconds = now + call_deadline_s, call_deadline_s
    budget = _budget.get()
    if budget is not None:
        if budget.cancelled:
            raise LLMTimeoutError("the request was cancelled; no further LLM calls", budget.llm_seconds)
        if budget.unreachable is not None:
            raise LLMUnavailableError(f"no further LLM calls in this request: {budget.unreachable}")
        stage_end, stage_seconds, what = budget.llm_deadline, budget.llm_seconds, ""
        if not _answering.get() and budget.research_share < 1.0:
            stage_end, stage_seconds = budget.started + budget.research_seconds, budget.research_seconds
            what = f"research's share (answer.budget.research_share={budget.research_share:g}) of "
        own_end = _stage_end.get()
        if (
            own_end is not None and own_end < stage_end
        ):  # a share of the answer's time: the request's bound it
            stage_end, what = own_end, "its part's share of "
        if stage_end < deadline:
            deadline, seconds = stage_end, stage_seconds
        if deadline <= now:
            raise LLMTimeoutError(
                f"{what}the request's LLM time ({seconds:g} s of answer.budget.request_s={budget.seconds:g}) "
                "is spent",
                seconds,
            )
    return deadline, seconds


class RequestCancelled(Exception):  # noqa: N818 - a signal, not an error a user sees
    """Raised inside a request's worker thread to stop its work once the request was cancelled."""
