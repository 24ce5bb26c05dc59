"""The research-and-answer routes: unified search (JSON or SSE) and regeneration from a stored context."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import ValidationError

from deepcite import service
from deepcite.config import Settings
from deepcite.models import Filters
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedder import Embedder
from deepcite.server.auth import Caller, current_caller
from deepcite.server.errors import ApiInputError
from deepcite.server.resources import ServerResources
from deepcite.server.schemas import RequestIdRequest, UnifiedSearchRequest
from deepcite.server.sse import AskRunner, event_stream
from deepcite.service import AskResponse, HopCallback, PartResponse

router = APIRouter(prefix="/api", tags=["answer"])

CallerDep = Annotated[Caller, Depends(current_caller)]


def _resources(request: Request) -> ServerResources:
    return request.app.state.resources


async def _embedder(resources: ServerResources) -> Embedder:
    """The app's embedder, loaded off the event loop the first time."""
    return await asyncio.to_thread(lambda: resources.embedder)


def _check_query(query: str, max_hops: int | None, settings: Settings) -> str:
    """The query stripped; 422 when it is empty, too long, or ``max_hops`` is out of range."""
    text = query.strip()
    if not text:
        raise ApiInputError('query is empty; send a question, e.g. {"query": "does aspirin prevent stroke?"}')
    limit = settings.server.max_query_chars
    if len(text) > limit:
        raise ApiInputError(
            f"query is {len(text)} characters; the limit is {limit} (setting server.max_query_chars): "
            "shorten the question"
        )
    cap = settings.research.max_hops
    if max_hops is not None and not 1 <= max_hops <= cap:
        raise ApiInputError(
            f"max_hops must be between 1 and {cap} (setting research.max_hops), not {max_hops}"
        )
    return text


def _parse_filters(raw: str | None) -> Filters | None:
    if not raw:
        return None
    try:
        return Filters.model_validate(json.loads(raw))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ApiInputError(f"filters must be a JSON object of Filters fields: {exc}") from exc


def _runner(
    query: str,
    col: Collection,
    filters: Filters | None,
    max_hops: int | None,
    caller: Caller,
    settings: Settings,
) -> AskRunner:
    async def run(on_hop: HopCallback | None = None) -> AskResponse:
        return await service.ask(
            query,
            collection=col,
            filters=filters,
            max_hops=max_hops,
            groups=caller.groups,
            settings=settings,
            on_hop=on_hop,
        )

    return run


@router.post(
    "/unified-search",
    response_model=AskResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "JSON, or SSE when stream is true"}
    },
)
async def unified_search(
    body: UnifiedSearchRequest, request: Request, caller: CallerDep
) -> AskResponse | StreamingResponse:
    """Research the question, then answer it: cited sub-answers, quick summary and long answer."""
    resources = _resources(request)
    settings = resources.settings
    query = _check_query(body.query, body.max_hops, settings)
    col = await asyncio.to_thread(resources.collection, body.collection)  # may load the model once
    run = _runner(query, col, body.filters, body.max_hops, caller, settings)
    if body.stream:
        service.prepare_filters(body.filters, caller.groups)  # bad filters: an HTTP error, not a stream event
        return event_stream(run)
    return await run()


@router.get("/unified-search/stream", response_class=StreamingResponse)
async def unified_search_stream(
    request: Request,
    caller: CallerDep,
    query: Annotated[str, Query(description="The question.")],
    collection: Annotated[str | None, Query(description="Collection to search.")] = None,
    max_hops: Annotated[int | None, Query(description="At most this many research hops.")] = None,
    filters: Annotated[str | None, Query(description="Filters as a JSON object.")] = None,
) -> StreamingResponse:
    """The unified search as Server-Sent Events: ``hop`` per hop, then ``summary``, ``answer``, ``done``."""
    resources = _resources(request)
    settings = resources.settings
    text = _check_query(query, max_hops, settings)
    parsed = _parse_filters(filters)
    col = await asyncio.to_thread(resources.collection, collection)  # may load the model once
    service.prepare_filters(parsed, caller.groups)  # bad filters: an HTTP error, not a stream event
    return event_stream(_runner(text, col, parsed, max_hops, caller, settings))


@router.post("/quick-summary", response_model=PartResponse)
async def quick_summary(body: RequestIdRequest, request: Request, caller: CallerDep) -> PartResponse:
    """Regenerate the quick summary of an earlier request from its stored context."""
    resources = _resources(request)
    return await service.regenerate_summary(
        body.request_id,
        groups=caller.groups,
        embedder=await _embedder(resources),
        settings=resources.settings,
    )


@router.post("/detailed-answer", response_model=PartResponse)
async def detailed_answer(body: RequestIdRequest, request: Request, caller: CallerDep) -> PartResponse:
    """Regenerate the long answer of an earlier request from its stored context."""
    resources = _resources(request)
    return await service.regenerate_answer(
        body.request_id,
        groups=caller.groups,
        embedder=await _embedder(resources),
        settings=resources.settings,
    )
