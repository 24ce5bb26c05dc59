"""The HTTP API's bearer-token dependency over :mod:`deepcite.access` (tokens, groups, the caller)."""

from __future__ import annotations

from fastapi import Request

from deepcite.access import (
    ALL_GROUPS,
    OPEN_ACCESS,
    Authenticator,
    Caller,
    UnauthorizedError,
    parse_api_keys,
)

__all__ = [
    "ALL_GROUPS",
    "OPEN_ACCESS",
    "Authenticator",
    "Caller",
    "UnauthorizedError",
    "current_caller",
    "parse_api_keys",
]


def current_caller(request: Request) -> Caller:
    """FastAPI dependency: the authenticated caller of this request."""
    authenticator: Authenticator = request.app.state.authenticator
    return authenticator.caller(request.headers.get("authorization"))
