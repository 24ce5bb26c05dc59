"""Health and collection listing (the UI's collection picker)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from deepcite import __version__, service
from deepcite.server.auth import Caller, current_caller
from deepcite.server.resources import ServerResources
from deepcite.server.schemas import CollectionInfo, CollectionsResponse, HealthResponse

router = APIRouter()


@router.get("/healthz", response_model=HealthResponse, tags=["meta"])
async def healthz(request: Request) -> HealthResponse:
    """Liveness: the version, the context store's size against its cap, and whether auth is on."""
    resources: ServerResources = request.app.state.resources
    store = service.context_store(resources.settings)
    return HealthResponse(
        status="ok",
        version=__version__,
        contexts=store.size(),
        context_cap=resources.settings.answer.context_max_count,
        auth=resources.authenticator.enabled,
    )


@router.get("/api/collections", response_model=CollectionsResponse, tags=["meta"])
async def collections(request: Request, caller: Caller = Depends(current_caller)) -> CollectionsResponse:
    """The collections this server can search, with their chunk counts (visible to the caller)."""
    resources: ServerResources = request.app.state.resources
    store = resources.store
    filters = service.restrict_filters(None, caller.groups)
    infos = [
        CollectionInfo(name=name, chunks=store.count(name, filters)) for name in resources.collection_names()
    ]
    return CollectionsResponse(collections=infos, default=resources.settings.server.default_collection)
