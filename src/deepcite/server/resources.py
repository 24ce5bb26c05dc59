"""The FastAPI dependency that hands each route the app's :class:`~deepcite.engine.Engine`.

``create_app`` stores one Engine on ``app.state.engine``; a route asks for it with ``engine: EngineDep``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from deepcite.engine import Engine


def get_engine(request: Request) -> Engine:
    """The Engine of the app serving ``request``."""
    return request.app.state.engine


EngineDep = Annotated[Engine, Depends(get_engine)]
