"""The FastAPI app: JSON API, SSE stream, optional web UI; run it with ``deepcite serve``.

Usage::

    import uvicorn
    from deepcite import Engine, Settings
    from deepcite.server.app import create_app

    uvicorn.run(create_app(Engine(Settings.load())), host="127.0.0.1", port=8000)

The app holds one :class:`~deepcite.engine.Engine` on ``app.state.engine``; routes receive it through the
``EngineDep`` dependency (:mod:`deepcite.server.resources`) and keep no state of their own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.store import SearchStore
from deepcite.server import (
    routes_answer,
    routes_files,
    routes_meta,
    routes_practitioners,
    routes_report,
    routes_saved,
    routes_upload,
    routes_view,
    ui,
)
from deepcite.server.auth import Authenticator
from deepcite.server.errors import install_error_handlers
from deepcite.server.limits import BodySizeLimit
from deepcite.version import __version__

log = logging.getLogger(__name__)


def create_app(
    engine: Engine | Settings,
    *,
    store: SearchStore | None = None,
    embedder: Embedder | None = None,
) -> FastAPI:
    """A new app over ``engine``, or over a new Engine of these settings sharing ``store``/``embedder`` when
    given.

    The app starts the Engine when it starts; it closes the Engine at shutdown only when it built it.
    """
    owned = not isinstance(engine, Engine)
    if not isinstance(engine, Engine):
        engine = Engine(engine, store=store, embedder=embedder)
    settings = engine.settings

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine.start()  # the background cleanup of expired contexts
        removed = await asyncio.to_thread(
            routes_upload.remove_abandoned_uploads, settings
        )  # a killed server's uploads
        if removed:
            log.info("removed %d upload folders left by servers that had stopped", removed)
        if settings.server.warm_start:  # the models loaded before the first request, not by it
            seconds = await asyncio.to_thread(engine.warm)
            log.info("warm start: models and the default collection ready in %.1f s", seconds)
        try:
            yield
        finally:
            if owned:
                engine.close()

    app = FastAPI(
        title="deepcite",
        version=__version__,
        summary="Grounded answers from your own corpus: every sentence cites a passage you can check.",
        lifespan=lifespan,
    )
    app.state.engine = engine
    app.state.authenticator = Authenticator(settings.api_keys)
    install_error_handlers(app)
    app.include_router(routes_meta.router)
    app.include_router(routes_answer.router)
    app.include_router(routes_report.router)
    app.include_router(routes_saved.router)
    app.include_router(routes_practitioners.router)
    app.include_router(routes_files.router)
    app.include_router(routes_upload.router)
    app.include_router(routes_view.router)
    app.include_router(ui.router)
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.server.max_request_bytes,
        streamed=[routes_upload.upload_limit(settings)],
    )
    return app
