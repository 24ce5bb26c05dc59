"""The search, research-and-answer routes: plain search, unified search (JSON or SSE) and regeneration
from a stored context. Every limit is checked by the request models (:mod:`deepcite.service`), once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from sse_starlette import EventSourceResponse

from deepcite.errors import RequestError
from deepcite.models import Filters
from deepcite.server.auth import Caller
from deepcite.server.disconnect import cancel_on_disconnect
from deepcite.server.resources import CallerDep, EngineDep
from deepcite.server.schemas import RequestIdRequest, UnifiedSearchRequest
from deepcite.server.sse import EventStream, StreamEvent, event_stream
from deepcite.service import (
    AskResponse,
    HopCallback,
    PartResponse,
    QuestionRequest,
    SearchRequest,
    SearchResponse,
)

router = APIRouter(prefix="/api", tags=["answer"])


def _parse_filters(raw: str | None) -> Filters | None:
    """The ``filters`` query parameter: a JSON object of :class:`Filters` fields (422 naming the problem)."""
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise RequestError(f"filters: not a JSON object of filters ({reason})") from None
    try:
        return Filters.model_validate(data)
    except ValidationError as exc:
        errors = [{**e, "loc": ("query", "filters", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from None


@router.post("/search", response_model=SearchResponse)
async def search(body: SearchRequest, engine: EngineDep, caller: CallerDep) -> SearchResponse:
    """One ranked search of a collection (bm25, dense or hybrid), without planning or answering."""
    return await asyncio.to_thread(engine.search, body, caller.groups)


async def _stream(request: QuestionRequest, engine: EngineDep, caller: Caller) -> EventSourceResponse:
    """The unified search as SSE; the whole request is checked first (limits, collection, filter fields), so
    bad input and an unknown collection are HTTP errors before the first byte of the stream."""
    checked = await asyncio.to_thread(
        engine.answers.check, request, caller.groups
    )  # 404/422 now, not as an event

    async def run(on_hop: HopCallback) -> AskResponse:
        return await engine.ask(checked, caller.groups, on_hop)

    return event_stream(run)


@router.post(
    "/unified-search",
    response_model=AskResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/StreamEvent"}}},
            "description": "JSON, or Server-Sent Events (hop..., summary, answer, done) when stream is true",
        }
    },
)
async def unified_search(
    body: UnifiedSearchRequest, engine: EngineDep, caller: CallerDep, http: Request
) -> AskResponse | EventSourceResponse | Response:
    """Research the question, then answer it: cited sub-answers, quick summary and long answer."""
    request = QuestionRequest.model_validate(body.model_dump(exclude={"stream"}))
    if body.stream:
        return await _stream(request, engine, caller)
    poll_s = engine.settings.server.disconnect_poll_s
    return await cancel_on_disconnect(http, engine.ask(request, caller.groups), poll_s)


@router.get(
    "/unified-search/stream",
    response_class=EventStream,
    responses={
        200: {"model": StreamEvent, "description": "Server-Sent Events: hop..., summary, answer, done"}
    },
)
async def unified_search_stream(
    engine: EngineDep,
    caller: CallerDep,
    query: Annotated[str, Query(description="The question.")],
    collection: Annotated[str | None, Query(description="Collection to search.")] = None,
    max_hops: Annotated[int | None, Query(description="At most this many research hops.")] = None,
    filters: Annotated[str | None, Query(description="Filters as a JSON object.")] = None,
) -> EventSourceResponse:
    """The unified search as Server-Sent Events: ``hop`` per hop, then ``summary``, ``answer``, ``done``."""
    request = QuestionRequest(
        query=query, collection=collection, max_hops=max_hops, filters=_parse_filters(filters)
    )
    return await _stream(request, engine, caller)


def _regeneration(part: str, what: str) -> Callable[..., Awaitable[PartResponse | Response]]:
    """The route regenerating ``part`` of an earlier request from its stored context (``what`` names it)."""

    async def regenerate(
        body: RequestIdRequest, engine: EngineDep, caller: CallerDep, http: Request
    ) -> PartResponse | Response:
        work = engine.answers.regenerate(body.request_id, part, caller.groups)
        return await cancel_on_disconnect(http, work, engine.settings.server.disconnect_poll_s)

    regenerate.__doc__ = f"Regenerate the {what} of an earlier request from its stored context."
    return regenerate


# (path, operation name, part regenerated, what it is called in the docs)
for _path, _name, _part, _what in (
    ("/quick-summary", "quick_summary", "summary", "quick summary"),
    ("/detailed-answer", "detailed_answer", "answer", "long answer"),
):
    router.post(_path, response_model=PartResponse, name=_name)(_regeneration(_part, _what))
