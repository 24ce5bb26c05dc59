"""`deepcite mcp` over stdio and streamable HTTP, driven by the official MCP SDK client."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

QUESTION = "Does atrial fibrillation increase the risk of stroke, and how is it treated?"
DEEPCITE = str(Path(sys.executable).parent / "deepcite")
TOOLS = {
    "search", "research", "ask", "find_practitioners", "list_collections",
    "saved_answers", "saved_answer", "rerun_answer", "delete_saved_answer",
}  # fmt: skip

pytestmark = pytest.mark.slow


def _env(data_dir: Path) -> dict[str, str]:
    return {
        "DEEPCITE_DATA_DIR": str(data_dir),
        "DEEPCITE_SERVER_DEFAULT_COLLECTION": "demo",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


@asynccontextmanager
async def stdio_session(data_dir: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=DEEPCITE, args=["mcp"], env=_env(data_dir))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


TOKEN = "mcp-test-token"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@asynccontextmanager
async def http_session(data_dir: Path) -> AsyncIterator[ClientSession]:
    port = _free_port()
    env = {**os.environ, **_env(data_dir), "DEEPCITE_API_KEYS": f"{TOKEN}:*"}  # HTTP takes the API's tokens
    process = subprocess.Popen([DEEPCITE, "mcp", "--http", "--port", str(port)], env=env)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        while True:  # wait until it listens (or fail if it died)
            if process.poll() is not None:
                raise RuntimeError(f"deepcite mcp --http exited with {process.returncode}")
            try:
                httpx.get(url, timeout=1.0)
                break
            except httpx.TransportError:
                continue
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    finally:
        process.terminate()
        process.wait()


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def exercise(session: ClientSession) -> None:
    """List the tools and call each one, checking what a model would rely on."""
    listed = (await session.list_tools()).tools
    assert {t.name for t in listed} == TOOLS
    for tool in listed:
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.input_schema["type"] == "object"
    schemas = {t.name: t.input_schema for t in listed}
    assert schemas["search"]["required"] == ["query"]
    assert set(schemas["search"]["properties"]) == {"query", "collection", "mode", "k", "filters"}
    assert schemas["search"]["properties"]["mode"]["enum"] == ["bm25", "dense", "hybrid"]
    assert schemas["ask"]["required"] == ["question"]
    assert schemas["find_practitioners"]["required"] == ["request"]
    for name in ("search", "ask", "research", "find_practitioners"):
        assert all("description" in p for p in schemas[name]["properties"].values()), name

    collections = _data(await session.call_tool("list_collections", {}))
    assert [(c["name"], c["chunks"], c["status"]) for c in collections["collections"]] == [("demo", 22, "ok")]

    found = _data(
        await session.call_tool(
            "search", {"query": "stroke risk in atrial fibrillation", "mode": "bm25", "k": 3}
        )
    )
    assert found["collection"] == "demo" and len(found["hits"]) == 3
    assert found["hits"][0]["doc_id"].startswith("af-stroke")
    assert [h["rank"] for h in found["hits"]] == [1, 2, 3]
    recent = _data(
        await session.call_tool(
            "search", {"query": "atrial fibrillation", "collection": "demo", "filters": {"year_from": 2014}}
        )
    )
    assert recent["hits"] and all(h["year"] >= 2014 for h in recent["hits"])

    pack = _data(await session.call_tool("research", {"question": QUESTION, "max_hops": 2}))
    assert pack["evidence"] and pack["coverage"]["total_aspects"] >= 1
    ids = {e["chunk_id"] for e in pack["evidence"]}
    assert pack["subquestions"] and all(set(s["chunk_ids"]) <= ids for s in pack["subquestions"])
    assert len(pack["retrieval_report"]) == pack["hops"]

    answer = _data(
        await session.call_tool("ask", {"question": QUESTION, "collection": "demo", "max_hops": 2})
    )
    citation_ids = {c["id"] for c in answer["citations"]}
    assert "[1]" in answer["summary"] or any(f"[{i}]" in answer["summary"] for i in citation_ids)
    assert answer["citation_check"]["invalid_ids"] == 0
    assert answer["subanswers"] and all(set(s["citations"]) <= citation_ids for s in answer["subanswers"])

    doctors = _data(
        await session.call_tool(
            "find_practitioners",
            {"request": "I need SVT ablation", "location": {"city": "Portland", "state": "ME"}},
        )
    )
    top = doctors["results"][0]
    assert "ELECTROPHYSIOLOGY" in top["primary_specialty"]
    assert top["city"] == "PORTLAND"
    assert doctors["intent"]["intent_terms"]

    missing = await session.call_tool("search", {"query": "stroke", "collection": "nope"})
    assert missing.is_error
    assert "'nope' does not exist" in missing.content[0].text and "demo" in missing.content[0].text
    bad = await session.call_tool("search", {"query": "stroke", "k": 0})
    assert bad.is_error
    empty = await session.call_tool("find_practitioners", {"request": "   "})
    assert empty.is_error


async def test_tools_over_stdio(mcp_data_dir: Path) -> None:
    async with stdio_session(mcp_data_dir) as session:
        await exercise(session)


async def test_tools_over_streamable_http(mcp_data_dir: Path) -> None:
    async with http_session(mcp_data_dir) as session:
        await exercise(session)
