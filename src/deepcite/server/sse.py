"""Server-Sent Events for a unified search: ``hop`` per research hop, then ``summary``, ``answer``, ``done``.

Framing, keep-alive pings and client disconnects are sse-starlette's (:class:`EventSourceResponse`); what
is deepcite's own is which events a unified search sends and what each carries. A failure after the
stream has started becomes one ``error`` event (``{error, message, status}``) and ends the stream; errors
found before it starts (bad input, unknown collection) are ordinary HTTP errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent

from deepcite.public_errors import public_error
from deepcite.service import AskResponse, HopCallback, HopEvent

AskRunner = Callable[[HopCallback], Awaitable[AskResponse]]


def _event(name: str, data: Any) -> ServerSentEvent:
    return ServerSentEvent(event=name, data=json.dumps(data, ensure_ascii=False, default=str))


def _parts(response: AskResponse) -> list[tuple[str, dict[str, Any]]]:
    body = response.model_dump(mode="json")
    summary_ids = {c["id"] for c in body["citations"] if f"[{c['id']}]" in response.summary}
    summary = {
        "request_id": body["request_id"],
        "summary": body["summary"],
        "citations": [c for c in body["citations"] if c["id"] in summary_ids],
        "chunks_used_summary": body["chunks_used_summary"],
        "summary_latency_ms": body["summary_latency_ms"],
    }
    answer = {
        "request_id": body["request_id"],
        "answer": body["answer"],
        "subanswers": body["subanswers"],
        "citations": body["citations"],
        "chunks_used_answer": body["chunks_used_answer"],
        "answer_latency_ms": body["answer_latency_ms"],
    }
    return [("summary", summary), ("answer", answer), ("done", body)]


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
                yield _event("hop", hop.model_dump(mode="json"))
        try:
            response = await task
        except Exception as exc:  # the message a JSON answer would have had (no trace, no server path)
            err = public_error(exc, where="unified search stream")
            yield _event("error", {"error": err.error, "message": err.message, "status": err.status})
            return
        for name, payload in _parts(response):
            yield _event(name, payload)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def event_stream(run: AskRunner) -> EventSourceResponse:
    """The streaming HTTP response (sse-starlette sends it uncached, with proxy buffering off)."""
    return EventSourceResponse(ask_events(run))
