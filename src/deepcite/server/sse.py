"""Server-Sent Events for a unified search: ``hop`` per research hop, then ``summary``, ``answer``, ``done``.

A failure after the stream has started becomes one ``error`` event (``{error, message, status}``) and
ends the stream; errors found before it starts (bad input, unknown collection) are ordinary HTTP errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi.responses import StreamingResponse

from deepcite.errors import DeepciteError
from deepcite.service import AskResponse, HopCallback, HopEvent

log = logging.getLogger(__name__)

AskRunner = Callable[[HopCallback], Awaitable[AskResponse]]


def format_event(name: str, data: Any) -> str:
    """One SSE frame: ``event: name`` and the JSON payload on one ``data:`` line."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def _parts(response: AskResponse) -> list[tuple[str, dict[str, Any]]]:
    body = response.model_dump(mode="json")
    summary_ids = set(_cited(response.summary, body["citations"]))
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


def _cited(text: str, citations: list[dict[str, Any]]) -> list[int]:
    return [c["id"] for c in citations if f"[{c['id']}]" in text]


async def ask_events(run: AskRunner) -> AsyncIterator[str]:
    """Run ``run(on_hop)`` and yield its events as they happen."""
    hops: asyncio.Queue[HopEvent] = asyncio.Queue()
    task = asyncio.ensure_future(run(hops.put_nowait))
    try:
        while not task.done():
            getter = asyncio.ensure_future(hops.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield format_event("hop", getter.result().model_dump(mode="json"))
            else:
                getter.cancel()
        while not hops.empty():
            yield format_event("hop", hops.get_nowait().model_dump(mode="json"))
        try:
            response = task.result()
        except DeepciteError as exc:
            yield format_event(
                "error", {"error": type(exc).__name__, "message": str(exc), "status": exc.http_status}
            )
            return
        except Exception:
            log.exception("unified search stream failed")
            message = "internal error while answering; this is a server bug, see the server log"
            yield format_event("error", {"error": "InternalError", "message": message, "status": 500})
            return
        for name, payload in _parts(response):
            yield format_event(name, payload)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def event_stream(run: AskRunner) -> StreamingResponse:
    """The streaming HTTP response (no caching, no proxy buffering)."""
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(ask_events(run), media_type="text/event-stream", headers=headers)
