"""A stand-in for a remote OpenAI-compatible LLM endpoint, for tests only.

No real LLM can run on the test machine, so tests start this small HTTP server on 127.0.0.1 (a real
socket, a real HTTP exchange with the ``openai`` SDK) and script what it answers (other test folders
import it as ``from llm.fake_openai_server import FakeOpenAIServer``; ``tests/`` is on the path)::

    with FakeOpenAIServer() as server:
        server.script(Fail(429, retry_after="2"), Reply("hello"))
        client = OpenAICompatClient(LLMSettings(base_url=server.base_url, model="stand-in"))
        client.chat([{"role": "user", "content": "hi"}])   # -> "hello" after one retry

It serves ``POST /v1/chat/completions``, ``POST /v1/embeddings`` (a :class:`Reply` answers with
:func:`stand_in_embedding` of each input, in reverse order) and ``GET /v1/models``. Each request takes the
next scripted action; when the script is empty, ``responder(request_body)`` writes the reply (default: ``"ok"``), or
returns the action to take.
``reject_json_schema`` / ``reject_json_object`` make it answer 400 to that ``response_format`` type,
like servers that do not support structured output. Every request body is kept in ``requests``.

Fault modes for deadline tests: :class:`Drip` sends the headers, then the body one byte at a time (a
per-read timeout never fires); :class:`Hang` reads the request and never answers; :class:`Malformed` is a
body that is not JSON. ``dropped`` counts the requests whose client closed the connection before the
answer was complete (a client that gave up, or whose work was cancelled). ``in_flight`` counts the
requests being answered now and ``peak_in_flight`` the most there ever were at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A 200 completion whose message content is ``content``, sent after ``delay_s`` seconds."""

    content: str
    delay_s: float = 0.0


@dataclass(frozen=True)
class Fail:
    """An error status (429, 500, 503, 401 …) with an optional ``Retry-After`` header value."""

    status: int
    retry_after: str | None = None


@dataclass(frozen=True)
class Malformed:
    """A 200 whose body is not JSON at all (a broken proxy or server)."""

    body: str = '{"choices": [{"message": '


@dataclass(frozen=True)
class Drip:
    """A 200 whose headers come at once and whose body then comes one byte every ``interval_s`` seconds."""

    content: str = "ok"
    interval_s: float = 1.0


@dataclass(frozen=True)
class Hang:
    """Read the request, then send nothing for ``seconds`` (or until the client closes the connection)."""

    seconds: float = 600.0


Action = Reply | Fail | Malformed | Drip | Hang


def completion_body(content: str, model: str) -> dict[str, Any]:
    """An OpenAI chat.completion object carrying ``content``."""
    return {
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


EMBEDDING_DIM = 6


def stand_in_embedding(text: str) -> list[float]:
    """A deterministic vector of ``text`` (from its SHA-256), what the stand-in embeddings endpoint returns."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [float(b) - 127.5 for b in digest[:EMBEDDING_DIM]]


def embeddings_body(texts: list[str], model: str) -> dict[str, Any]:
    """An OpenAI embeddings list for ``texts``, rows in reverse order (clients must sort by ``index``)."""
    data = [
        {"object": "embedding", "index": i, "embedding": stand_in_embedding(t)} for i, t in enumerate(texts)
    ]
    return {
        "object": "list",
        "data": data[::-1],
        "model": model,
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


class FakeOpenAIServer:
    """Scripted OpenAI-compatible HTTP server on 127.0.0.1 (the stand-in for a remote LLM)."""

    def __init__(
        self,
        responder: Callable[[dict[str, Any]], str | Action] | None = None,
        *,
        reject_json_schema: bool = False,
        reject_json_object: bool = False,
    ) -> None:
        self.responder = responder or (lambda body: "ok")
        self.reject_json_schema = reject_json_schema
        self.reject_json_object = reject_json_object
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.dropped = 0  # requests whose client closed the connection before the answer was complete
        self.in_flight = 0  # requests being answered now
        self.peak_in_flight = 0  # the most requests answered at once
        self._stopping = threading.Event()
        self._script: deque[Action] = deque()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *actions: Action) -> None:
        """Queue actions; each chat request consumes one, in order."""
        with self._lock:
            self._script.extend(actions)

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends hanging and dripping answers
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_action(self, body: dict[str, Any]) -> Action:
        fmt = (body.get("response_format") or {}).get("type")
        if (fmt == "json_schema" and self.reject_json_schema) or (
            fmt == "json_object" and self.reject_json_object
        ):
            return Fail(400)
        with self._lock:
            if self._script:
                return self._script.popleft()
        answer = self.responder(body)
        return Reply(answer) if isinstance(answer, str) else answer

    def _enter_flight(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _leave_flight(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _note_dropped(self) -> None:
        with self._lock:
            self.dropped += 1

    def _client_closed(self, connection: socket.socket, wait_s: float) -> bool:
        """Whether the client closed ``connection`` within ``wait_s`` seconds."""
        readable, _, _ = select.select([connection], [], [], wait_s)
        if not readable:
            return False
        try:
            return connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def _send(self, status: int, payload: str, headers: dict[str, str] | None = None) -> None:
                data = payload.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                # the client may have given up (timeout): expected in timeout tests
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def do_GET(self) -> None:  # http.server's naming
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [{"id": "stand-in"}]}))
                else:
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))

            def do_POST(self) -> None:  # http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                embeddings = self.path.rstrip("/").endswith("/embeddings")
                if not embeddings and not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                    return
                body = json.loads(raw or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                server._enter_flight()
                try:
                    self._answer(body, embeddings)
                finally:
                    server._leave_flight()

            def _answer(self, body: dict[str, Any], embeddings: bool) -> None:
                action = server._next_action(body)
                if isinstance(action, Fail):
                    extra = {"Retry-After": action.retry_after} if action.retry_after is not None else {}
                    error = {"error": {"message": f"stand-in error {action.status}", "type": "stand_in"}}
                    self._send(action.status, json.dumps(error), extra)
                elif isinstance(action, Malformed):
                    self._send(200, action.body)
                elif isinstance(action, Hang):
                    self._hang(action)
                elif isinstance(action, Drip):
                    self._drip(action, str(body.get("model", "stand-in")))
                else:
                    if action.delay_s:
                        time.sleep(action.delay_s)
                    model = str(body.get("model", "stand-in"))
                    if embeddings:
                        texts = body.get("input") or []
                        self._send(
                            200,
                            json.dumps(embeddings_body([texts] if isinstance(texts, str) else texts, model)),
                        )
                    else:
                        self._send(200, json.dumps(completion_body(action.content, model)))

            def _hang(self, action: Hang) -> None:
                deadline = time.monotonic() + action.seconds
                while time.monotonic() < deadline and not server._stopping.is_set():
                    if server._client_closed(self.connection, 0.05):
                        server._note_dropped()
                        return
                self.close_connection = True

            def _drip(self, action: Drip, model: str) -> None:
                data = json.dumps(completion_body(action.content, model)).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.close_connection = True
                try:
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        if i + 1 < len(data) and server._client_closed(self.connection, action.interval_s):
                            raise ConnectionResetError
                        if server._stopping.is_set():
                            return
                except (BrokenPipeError, ConnectionResetError):
                    server._note_dropped()

        return Handler
