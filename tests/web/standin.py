"""Stand-ins for the public web, which tests cannot reach: fixture pages served over HTTP on 127.0.0.1 and
a real MCP server (the official SDK, streamable HTTP) whose ``web_search`` tool searches those pages."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from pydantic import Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

from deepcite.config import WebSearchSettings
from deepcite.text import tokenize

PAGES = Path(__file__).parent / "pages"
SLOW_PAGE_CAP_S = 60.0  # the slow page gives up after this long, so the server can always shut down


@dataclass
class StandinWeb:
    """A running stand-in: the MCP endpoint, the page base URL, and the queries the tool received."""

    mcp_url: str
    base_url: str
    port: int
    queries: list[str]

    def settings(self, base: WebSearchSettings, page_timeout_s: float) -> WebSearchSettings:
        """``base`` with web search on through this stand-in (its pages allowed, each within the timeout)."""
        return base.model_copy(
            update={
                "enabled": True,
                "mcp_url": self.mcp_url,
                "allowed_domains": ["127.0.0.1"],
                "page_timeout_s": page_timeout_s,
            }
        )


def _search(entries: list[dict[str, Any]], query: str, port: int, count: int) -> list[dict[str, str]]:
    wanted = set(tokenize(query))
    scored = []
    for order, entry in enumerate(entries):
        overlap = len(wanted & set(tokenize(entry["keywords"])))
        if overlap:
            scored.append((-overlap, order, entry))
    return [
        {"url": f"http://{e['host']}:{port}/pages/{e['page']}", "title": e["title"], "snippet": e["snippet"]}
        for _, _, e in sorted(scored, key=lambda item: item[:2])[:count]
    ]


def build_app(port: int, queries: list[str]) -> Starlette:
    """The stand-in server: ``/mcp`` (MCP, tool ``web_search``) and ``/pages/…`` (the fixture pages)."""
    entries = json.loads((PAGES / "index.json").read_text(encoding="utf-8"))
    server = MCPServer(
        "stand-in web search", instructions="Searches a fixed set of test pages.", log_level="WARNING"
    )

    @server.tool(name="web_search", description="Search the web; returns links with titles and snippets.")
    def web_search(
        query: Annotated[str, Field(description="What to search for.")],
        count: Annotated[int, Field(ge=1, le=20, description="How many links.")] = 10,
    ) -> dict[str, Any]:
        queries.append(query)
        return {"results": _search(entries, query, port, count)}

    @server.custom_route("/pages/slow/{name}", methods=["GET"])
    async def slow_page(request: Request) -> Response:
        await asyncio.sleep(SLOW_PAGE_CAP_S)
        return PlainTextResponse("too late")

    @server.custom_route("/pages/{name}", methods=["GET"])
    async def page(request: Request) -> Response:
        path = PAGES / request.path_params["name"]
        if path.suffix != ".html" or not path.is_file():
            return PlainTextResponse("not found", status_code=404)
        return FileResponse(path, media_type="text/html")

    return server.streamable_http_app(streamable_http_path="/mcp")


@contextmanager
def serve_app(make_app: Callable[[int], Any]) -> Iterator[int]:
    """Run ``make_app(port)`` with uvicorn on 127.0.0.1 (a free port) in a thread; yields the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(make_app(port), log_level="warning", timeout_graceful_shutdown=1, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the test server did not start; see the log above")
        thread.join(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


@contextmanager
def standin_web() -> Iterator[StandinWeb]:
    """Start the stand-in web on 127.0.0.1 and stop it afterwards."""
    queries: list[str] = []
    with serve_app(lambda port: build_app(port, queries)) as port:
        base = f"http://127.0.0.1:{port}"
        yield StandinWeb(mcp_url=f"{base}/mcp", base_url=base, port=port, queries=queries)
