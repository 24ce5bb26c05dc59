"""Every error the API returns is JSON ``{success: false, error, message, detail?}`` with a fitting status.

DeepciteError subclasses map by their ``http_status``; validation problems are 422 naming each field;
anything unexpected is 500 with a reference id logged server-side (never a client's mistake).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from deepcite.errors import DeepciteError

log = logging.getLogger(__name__)


def error_body(error: str, message: str, detail: Any = None) -> dict[str, Any]:
    """The JSON body of an error response."""
    body: dict[str, Any] = {"success": False, "error": error, "message": message}
    if detail is not None:
        body["detail"] = detail
    return body


_LOCATIONS = frozenset({"body", "query", "path", "header", "cookie"})


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("body", "filters", "year_from")`` → ``filters.year_from``; ``("query", "max_hops")`` → ``max_hops``."""
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in _LOCATIONS:
        parts = parts[1:]
    return ".".join(parts) or "body"


def describe_validation(exc: RequestValidationError) -> tuple[str, list[dict[str, Any]]]:
    """A one-line message and a compact list of ``{field, problem}`` for a validation failure."""
    problems: list[dict[str, Any]] = []
    for err in exc.errors():
        if err.get("type") == "json_invalid":
            ctx = err.get("ctx") or {}
            problem = f"the body is not valid JSON ({ctx.get('error', 'parse error')}); send a JSON object"
            problems.append({"field": "body", "problem": problem})
        else:
            problems.append({"field": _field(err.get("loc", ())), "problem": err.get("msg", "invalid")})
    message = "; ".join(f"{p['field']}: {p['problem']}" for p in problems) or "the request is invalid"
    return message, problems


def install_error_handlers(app: FastAPI) -> None:
    """Register the JSON error handlers on ``app``."""

    @app.exception_handler(DeepciteError)
    async def _deepcite_error(request: Request, exc: DeepciteError) -> JSONResponse:
        status = exc.http_status
        if status >= 500:
            log.error("%s on %s: %s", type(exc).__name__, request.url.path, exc)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return JSONResponse(error_body(type(exc).__name__, str(exc)), status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        message, problems = describe_validation(exc)
        return JSONResponse(error_body("ValidationError", message, problems), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            error_body("HTTPError", str(exc.detail)), status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        ref = uuid.uuid4().hex[:12]
        log.exception("unexpected error %s on %s", ref, request.url.path)
        message = (
            f"internal error (reference {ref}); this is a server bug, not your request: see the server log"
        )
        return JSONResponse(error_body("InternalError", message), status_code=500)
