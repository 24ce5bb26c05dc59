"""MCP tool errors say what the HTTP API says for the same mistake (one ``public_error``), and no tool call,
whatever its arguments (hypothesis, a bounded number of examples), crashes, hangs or leaks a trace or a
server path.

One Engine serves both surfaces: the real app under uvicorn on 127.0.0.1 and the in-process MCP server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, assume, given, reject, settings
from mcp import Client
from server.conftest import LiveServer
from server.fuzz_cases import LEAK_MARKERS, tool_arguments

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.mcp_server.server import build_server
from deepcite.server.app import create_app

pytestmark = pytest.mark.slow

TIMEOUT_S = 60  # a call that takes longer is a hang


class Surfaces:
    """The HTTP API and the MCP tools over one Engine."""

    def __init__(self, http: httpx.Client, portal: BlockingPortal, client: Client) -> None:
        self.http, self.portal, self.client = http, portal, client

    def tool(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str, Any]:
        """(is_error, text, structured content) of one tool call; a call that does not end fails the test."""

        async def call() -> Any:
            with anyio.fail_after(TIMEOUT_S):
                return await self.client.call_tool(name, arguments)

        result = self.portal.call(call)
        text = "\n".join(getattr(part, "text", "") for part in result.content)
        return result.is_error, text, result.structured_content

    def http_message(self, path: str, body: dict[str, Any]) -> tuple[int, str]:
        response = self.http.post(
            path, content=json.dumps(body), headers={"Content-Type": "application/json"}
        )
        return response.status_code, response.json().get("message", "")


@pytest.fixture(scope="module")
def surfaces(mcp_data_dir: Path) -> Iterator[Surfaces]:
    engine = Engine(Settings(data_dir=mcp_data_dir, server={"default_collection": "demo"}))
    with (
        LiveServer(create_app(engine)) as live,
        httpx.Client(base_url=live.base_url, timeout=TIMEOUT_S) as http,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(build_server(engine))) as client,
    ):
        yield Surfaces(http, portal, client)
    engine.close()


SURROGATE = "\ud800"
# (HTTP body of POST /api/search, the same mistake as MCP search arguments)
SAME_MISTAKES = [
    ({"query": "stroke", "k": 999}, {"query": "stroke", "k": 999}),
    ({"query": " \u200b "}, {"query": " \u200b "}),
    ({"query": "stroke", "collection": "nope"}, {"query": "stroke", "collection": "nope"}),
    ({"query": "stroke", "collection": "practitioners"}, {"query": "stroke", "collection": "practitioners"}),
    ({"query": "stroke", "collection": "../edge/demo"}, {"query": "stroke", "collection": "../edge/demo"}),
    ({"query": f"stroke {SURROGATE}"}, {"query": f"stroke {SURROGATE}"}),
    (
        {"query": "stroke", "filters": {"equals": {"a b": 1}}},
        {"query": "stroke", "filters": {"equals": {"a b": 1}}},
    ),
    (
        {"query": "stroke", "filters": {"year_form": 2010}},
        {"query": "stroke", "filters": {"year_form": 2010}},
    ),
    (
        {"query": "stroke", "filters": {"equals": {"year": 2**63}}},
        {"query": "stroke", "filters": {"equals": {"year": 2**63}}},
    ),
    (
        {"query": "stroke", "filters": {"equals": {"journal": "BMJ"}}},
        {"query": "stroke", "filters": {"equals": {"journal": "BMJ"}}},
    ),
]


@pytest.mark.parametrize(("body", "arguments"), SAME_MISTAKES)
def test_a_tool_error_is_the_http_message(
    surfaces: Surfaces, body: dict[str, Any], arguments: dict[str, Any]
) -> None:
    status, message = surfaces.http_message("/api/search", body)
    assert 400 <= status < 500, message
    is_error, text, _ = surfaces.tool("search", arguments)
    assert is_error and text == message
    assert not text.startswith("Error executing tool")


def test_practitioner_and_question_tools_give_the_http_messages(surfaces: Surfaces) -> None:
    _, message = surfaces.http_message("/api/practitioners/search", {"userQuery": "\u200b"})
    assert surfaces.tool("find_practitioners", {"request": "\u200b"})[1] == message
    _, message = surfaces.http_message("/api/unified-search", {"query": "stroke", "max_hops": 99})
    for tool in ("ask", "research"):
        assert surfaces.tool(tool, {"question": "stroke", "max_hops": 99})[1] == message


# tool -> examples in make test (ask and research run the research on a valid question: fewer)
TOOL_EXAMPLES = {
    "search": 30, "find_practitioners": 20, "research": 8, "ask": 8, "list_collections": 5,
    "saved_answers": 10, "saved_answer": 10, "rerun_answer": 8, "delete_saved_answer": 8,
}  # fmt: skip


def leaks(text: str) -> list[str]:
    return [m for m in LEAK_MARKERS if m in text] + (
        ["an internal error"] if "internal error" in text else []
    )


@pytest.mark.parametrize("tool", list(TOOL_EXAMPLES))
def test_no_tool_call_crashes_hangs_or_leaks(surfaces: Surfaces, tool: str) -> None:
    @settings(
        max_examples=TOOL_EXAMPLES[tool],
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(tool_arguments(tool, "demo"))
    def probe(arguments: dict[str, Any]) -> None:
        sent = json.dumps(arguments)
        assume(not any(m in sent for m in LEAK_MARKERS))
        try:
            is_error, text, structured = surfaces.tool(tool, arguments)
        except UnicodeEncodeError:  # the in-process client cannot serialise a lone surrogate in a key
            reject()
        assert not leaks(text + json.dumps(structured or {})), (arguments, text[:500])
        if is_error:
            assert text and not text.startswith("Error executing tool"), (arguments, text[:500])

    probe()
