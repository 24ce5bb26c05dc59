"""How the MCP server is served: stdio, or streamable HTTP behind the API's bearer tokens (``api_keys``)."""

from __future__ import annotations

import ipaddress

import uvicorn
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from deepcite.access import Authenticator, UnauthorizedError
from deepcite.engine import Engine
from deepcite.errors import ConfigError
from deepcite.mcp_server.server import build_server


class _BearerGate:
    """ASGI middleware of the MCP server's HTTP app: with ``api_keys``, a request without a known bearer token
    gets the HTTP API's ``401`` before the MCP SDK reads it."""

    def __init__(self, app: ASGIApp, authenticator: Authenticator) -> None:
        self.app = app
        self.authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.authenticator.enabled:
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            try:
                self.authenticator.caller(header or None)
            except UnauthorizedError as exc:
                body = {"success": False, "error": type(exc).__name__, "message": str(exc)}
                refusal = JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "Bearer"})
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(engine: Engine) -> ASGIApp:
    """The MCP server's streamable HTTP app (at ``mcp.path``) behind the API's bearer tokens (``api_keys``).
    ConfigError when ``mcp.host`` is not a loopback address and no token is configured: every group's
    documents would be open to the network."""
    settings = engine.settings
    authenticator = Authenticator(settings.api_keys)
    if not authenticator.enabled and not _loopback(settings.mcp.host):
        raise ConfigError(
            f"deepcite mcp --http would listen on {settings.mcp.host} with no bearer tokens; set "
            "DEEPCITE_API_KEYS (token:group1|group2, as for deepcite serve) or DEEPCITE_MCP_HOST=127.0.0.1"
        )
    server = build_server(engine)
    app = server.streamable_http_app(streamable_http_path=settings.mcp.path, host=settings.mcp.host)
    return _BearerGate(app, authenticator)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run(engine: Engine, *, http: bool = False, port: int | None = None) -> None:
    """Serve over stdio, or over streamable HTTP (:func:`http_app`) on ``settings.mcp.host`` (127.0.0.1) and
    ``port``.

    One Engine serves every session; it is closed when the server stops.
    """
    try:
        if not http:
            build_server(engine).run("stdio")
            return
        settings = engine.settings
        uvicorn.run(
            http_app(engine),
            host=settings.mcp.host,
            port=port or settings.mcp.port,
            log_level=settings.mcp.log_level.lower(),
        )
    finally:
        engine.close()
