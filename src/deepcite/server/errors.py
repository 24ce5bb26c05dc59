"""Every error the API returns is JSON ``{success: false, error, message, detail?}`` with a fitting status.

The status and message come from :func:`deepcite.public_errors.public_error`, which the MCP tools share:
DeepciteError subclasses map by their ``http_status``; validation problems are 422 naming each field;
anything unexpected is 500 with a reference id logged server-side (never a client's mistake). No message
holds a server path.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from deepcite.errors import DeepciteError
from deepcite.public_errors import public_error


def error_body(error: str, message: str, detail: Any = None) -> dict[str, Any]:
    """The JSON body of an error response."""
    body: dict[str, Any] = {"success": False, "error": error, "message": message}
    if detail is not None:
        body["detail"] = detail
    return body


def install_error_handlers(app: FastAPI) -> None:
    """Register the JSON error handlers on ``app``."""

    async def _public(request: Request, exc: Exception) -> JSONResponse:
        data_dir = request.app.state.engine.settings.data_dir
        err = public_error(exc, where=request.url.path, data_dir=data_dir)
        headers = {"WWW-Authenticate": "Bearer"} if err.status == 401 else None
        body = error_body(err.error, err.message, err.detail)
        return JSONResponse(body, status_code=err.status, headers=headers)

    app.add_exception_handler(DeepciteError, _public)
    app.add_exception_handler(RequestValidationError, _public)
    app.add_exception_handler(Exception, _public)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            error_body("HTTPError", str(exc.detail)), status_code=exc.status_code, headers=exc.headers
        )
