"""The FastAPI app: JSON API, SSE stream, optional web UI; run it with ``deepcite serve``.

Usage::

    import uvicorn
    from deepcite.server.app import create_app

    uvicorn.run(create_app(), host="127.0.0.1", port=8000)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from deepcite import __version__, service
from deepcite.config import Settings, get_settings
from deepcite.retrieval.embedder import Embedder
from deepcite.retrieval.store import SearchStore
from deepcite.server import routes_answer, routes_meta, routes_practitioners, ui
from deepcite.server.errors import install_error_handlers
from deepcite.server.limits import BodySizeLimit
from deepcite.server.resources import ServerResources


def create_app(
    settings: Settings | None = None, *, store: SearchStore | None = None, embedder: Embedder | None = None
) -> FastAPI:
    """A new app over ``settings`` (default: the process settings); ``store``/``embedder`` are shared
    when given, else opened on first use and closed at shutdown."""
    settings = settings or get_settings()
    resources = ServerResources(settings, store=store, embedder=embedder)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.context_store(settings)  # starts the background cleanup of expired contexts
        yield
        resources.close()

    app = FastAPI(
        title="deepcite",
        version=__version__,
        summary="Grounded answers from your own corpus: every sentence cites a passage you can check.",
        lifespan=lifespan,
    )
    app.state.resources = resources
    app.state.settings = settings
    app.state.authenticator = resources.authenticator
    install_error_handlers(app)
    app.include_router(routes_meta.router)
    app.include_router(routes_answer.router)
    app.include_router(routes_practitioners.router)
    app.include_router(ui.router)
    app.add_middleware(BodySizeLimit, max_bytes=settings.server.max_request_bytes)
    return app
