"""Work for a client that went away is cancelled.

Starlette does not cancel a handler when its client disconnects (sse-starlette does, for the streams), so
a JSON route that can run for long races its work against the client: every ``server.disconnect_poll_s``
it asks ``request.is_disconnected()``, and cancels the work when the client is gone. Cancelling the
Engine's work cancels its request budget (:mod:`deepcite.llm.deadline`): the LLM calls under way close
their connections and no further LLM call or research hop starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import TypeVar

from fastapi import Request, Response

log = logging.getLogger(__name__)

T = TypeVar("T")
CLIENT_CLOSED_REQUEST = 499  # nginx's status for a request its client abandoned; no one reads it


async def cancel_on_disconnect(request: Request, work: Awaitable[T], poll_s: float) -> T | Response:
    """``await work``, cancelled when the client disconnects first (then an empty 499 response)."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=poll_s)
            if done:
                return task.result()
            if await request.is_disconnected():
                log.info("client left %s before its answer; its work is cancelled", request.url.path)
                return Response(status_code=CLIENT_CLOSED_REQUEST)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
