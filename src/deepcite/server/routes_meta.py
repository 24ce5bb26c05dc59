"""Health and collection listing (the UI's collection picker)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request

from deepcite.server.auth import Authenticator
from deepcite.server.resources import CallerDep, EngineDep
from deepcite.server.schemas import CollectionsResponse, HealthResponse
from deepcite.version import __version__

router = APIRouter()


@router.get("/healthz", response_model=HealthResponse, tags=["meta"])
async def healthz(request: Request, engine: EngineDep) -> HealthResponse:
    """Liveness: the version, the context store's size against its cap, whether auth is on, and whether the
    models are loaded (``ready``; the server takes requests only once they are, under ``server.warm_start``)."""
    authenticator: Authenticator = request.app.state.authenticator
    return HealthResponse(
        status="ok",
        version=__version__,
        contexts=engine.answers.context_count(),
        context_cap=engine.settings.answer.context.max_count,
        auth=authenticator.enabled,
        ready=engine.warm_s is not None or not engine.settings.server.warm_start,
        warm_s=None if engine.warm_s is None else round(engine.warm_s, 2),
    )


@router.get("/api/collections", response_model=CollectionsResponse, tags=["meta"])
async def collections(engine: EngineDep, caller: CallerDep) -> CollectionsResponse:
    """The collections this server can search, with their chunk counts (visible to the caller); one that
    cannot be read is listed with ``status: "unreadable"`` and the reason."""

    infos = await asyncio.to_thread(engine.corpus.collections, caller.groups)
    return CollectionsResponse(collections=infos, default=engine.settings.server.default_collection)
