"""The FastAPI dependencies every route shares: the app's :class:`~deepcite.engine.Engine` and the caller.

``create_app`` stores one Engine on ``app.state.engine``; a route asks for it with ``engine: EngineDep``
and for the authenticated caller (its ACL groups) with ``caller: CallerDep``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from deepcite.engine import Engine
from deepcite.server.auth import Caller, current_caller


def get_engine(request: Request) -> Engine:
    """The Engine of the app serving ``request``."""
    return request.app.state.engine


EngineDep = Annotated[Engine, Depends(get_engine)]
CallerDep = Annotated[Caller, Depends(current_caller)]
