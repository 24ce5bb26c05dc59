"""Request size limits: a body larger than ``ServerSettings.max_request_bytes`` is answered 413 unread;
uploads (``POST /api/collections/{collection}/documents``) get ``max_upload_request_bytes`` instead."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deepcite.errors import DeepciteError


class RequestTooLarge(DeepciteError):
    """The request body is larger than the server accepts for that route: 413."""

    http_status = 413


class StreamedLimit:
    """A route whose body may be larger than the default limit: ``method`` and a ``path`` pattern, at most
    ``max_bytes``, named after its ``setting``. Such a body is passed on as it arrives (never buffered) and
    counted; :class:`RequestTooLarge` is raised from ``receive`` once the count passes the limit."""

    def __init__(self, method: str, path: str, max_bytes: int, setting: str) -> None:
        self.method = method
        self.path = re.compile(path)
        self.max_bytes = max_bytes
        self.setting = setting

    def matches(self, scope: Scope) -> bool:
        return scope.get("method") == self.method and bool(self.path.fullmatch(scope.get("path", "")))

    def message(self) -> str:
        return (
            f"the request body is larger than {self.max_bytes} bytes (setting {self.setting}); "
            "send fewer or smaller files"
        )


class BodySizeLimit:
    """ASGI middleware: reads at most ``max_bytes`` of a request body, then answers 413 instead of the app.

    Checks ``Content-Length`` first and counts the bytes actually received as well (chunked uploads).
    A request matching one of ``streamed`` gets that route's limit, and its body is streamed through.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, streamed: Sequence[StreamedLimit] = ()) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.streamed = tuple(streamed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        size_declared = int(declared) if declared is not None and declared.isdigit() else None
        route = next((r for r in self.streamed if r.matches(scope)), None)
        if route is not None:
            if size_declared is not None and size_declared > route.max_bytes:
                await _reject(send, route.message())
                return
            await self.app(scope, _counting(receive, route), send)
            return
        if size_declared is not None and size_declared > self.max_bytes:
            await _reject(send, self._message())
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await _reject(send, self._message())
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    def _message(self) -> str:
        return (
            f"the request body is larger than {self.max_bytes} bytes "
            f"(setting server.max_request_bytes); send a shorter request"
        )


def _counting(receive: Receive, route: StreamedLimit) -> Receive:
    """``receive`` that raises :class:`RequestTooLarge` once more than ``route.max_bytes`` have arrived."""
    size = 0

    async def counted() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > route.max_bytes:
                raise RequestTooLarge(route.message())
        return message

    return counted


async def _reject(send: Send, message: str) -> None:
    body = json.dumps({"success": False, "error": "RequestTooLarge", "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
