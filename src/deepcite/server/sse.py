"""Server-Sent Events for a unified search: ``hop`` per research hop, then ``summary``, ``answer``, ``done``.

Framing, keep-alive pings and client disconnects are sse-starlette's (:class:`EventSourceResponse`); what
is deepcite's own is which events a unified search sends and what each carries. A failure after the
stream has started becomes one ``error`` event (``{error, message, status}``) and ends the stream; errors
found before it starts (bad input, unknown collection) are ordinary HTTP errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Literal

import anyio
from pydantic import BaseModel, Field, RootModel
from sse_starlette import EventSourceResponse, ServerSentEvent

from deepcite.answer.decision import AnswerDecision
from deepcite.answer.pipeline import Citation, SubAnswer
from deepcite.public_errors import public_error
from deepcite.service import AskResponse, HopCallback, HopEvent

AskRunner = Callable[[HopCallback], Awaitable[AskResponse]]


class SummaryEvent(BaseModel):
    """The ``summary`` event: the quick summary, the answer's decision (stated or not, a yes/no verdict) and
    the citations it uses."""

    request_id: str
    summary: str
    insufficient: bool
    decision: AnswerDecision | None = None
    citations: list[Citation]
    chunks_used_summary: int
    summary_latency_ms: float

    @classmethod
    def of(cls, response: AskResponse) -> SummaryEvent:
        cited = [c for c in response.citations if f"[{c.id}]" in response.summary]
        return cls(**response.model_dump(include=set(cls.model_fields) - {"citations"}), citations=cited)


class AnswerEvent(BaseModel):
    """The ``answer`` event: the long answer, the sub-answers and every citation of the context."""

    request_id: str
    answer: str
    insufficient: bool
    subanswers: list[SubAnswer]
    citations: list[Citation]
    chunks_used_answer: int
    answer_latency_ms: float

    @classmethod
    def of(cls, response: AskResponse) -> AnswerEvent:
        return cls.model_validate(response.model_dump(include=set(cls.model_fields)))


class StreamError(BaseModel):
    """The ``error`` event: a failure after the stream started, as a JSON answer would have said it."""

    error: str
    message: str
    status: int


class HopMessage(BaseModel):
    event: Literal["hop"] = "hop"
    data: HopEvent


class SummaryMessage(BaseModel):
    event: Literal["summary"] = "summary"
    data: SummaryEvent


class AnswerMessage(BaseModel):
    event: Literal["answer"] = "answer"
    data: AnswerEvent


class DoneMessage(BaseModel):
    event: Literal["done"] = "done"
    data: AskResponse


class ErrorMessage(BaseModel):
    event: Literal["error"] = "error"
    data: StreamError


Message = HopMessage | SummaryMessage | AnswerMessage | DoneMessage | ErrorMessage


class StreamEvent(RootModel[Annotated[Message, Field(discriminator="event")]]):
    """One event of the unified search stream: its SSE ``event`` name and its ``data`` (JSON); published in
    the OpenAPI schema of the streaming routes."""


class EventStream(EventSourceResponse):
    """sse-starlette's response, with its media type on the class so FastAPI documents the events under
    ``text/event-stream``."""

    media_type = "text/event-stream"


def _sent(message: Message) -> ServerSentEvent:
    return ServerSentEvent(event=message.event, data=message.data.model_dump_json())


async def ask_events(run: AskRunner) -> AsyncIterator[ServerSentEvent]:
    """Run ``run(on_hop)``; yield a ``hop`` event per hop as it happens, then the answer's events."""
    send, receive = anyio.create_memory_object_stream[HopEvent](math.inf)

    async def produce() -> AskResponse:
        with send:  # closing it ends the loop below once the last hop is read
            return await run(send.send_nowait)

    task = asyncio.ensure_future(produce())
    try:
        with receive:
            async for hop in receive:
                yield _sent(HopMessage(data=hop))
        try:
            response = await task
        except Exception as exc:  # the message a JSON answer would have had (no trace, no server path)
            err = public_error(exc, where="unified search stream")
            yield _sent(
                ErrorMessage(data=StreamError(error=err.error, message=err.message, status=err.status))
            )
            return
        yield _sent(SummaryMessage(data=SummaryEvent.of(response)))
        yield _sent(AnswerMessage(data=AnswerEvent.of(response)))
        yield _sent(DoneMessage(data=response))
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def event_stream(run: AskRunner) -> EventStream:
    """The streaming HTTP response (sse-starlette sends it uncached, with proxy buffering off)."""
    return EventStream(ask_events(run))
