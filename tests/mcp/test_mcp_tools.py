"""The MCP tools publish output schemas (structured output), and a refused call says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from deepcite.config import Settings
from deepcite.mcp_server.server import build_server

pytestmark = pytest.mark.slow


def _text(result) -> str:  # type: ignore[no-untyped-def]
    assert result.is_error
    return result.content[0].text


async def test_tools_publish_output_schemas_and_errors_name_the_reason(mcp_data_dir: Path) -> None:
    settings = Settings(data_dir=mcp_data_dir)
    async with Client(build_server(settings)) as client:
        listed = await client.list_tools()
        schemas = {tool.name: tool.output_schema for tool in listed.tools}
        assert all(schema and schema["type"] == "object" for schema in schemas.values()), schemas
        assert {"collection", "query", "mode", "hits"} <= set(schemas["search"]["properties"])
        assert {"summary", "answer", "citations", "coverage"} <= set(schemas["ask"]["properties"])
        assert {"evidence", "coverage", "retrieval_report"} <= set(schemas["research"]["properties"])

        too_many = _text(await client.call_tool("search", {"query": "stroke", "k": 999}))
        assert f"k must be between 1 and {settings.search.max_k} (setting search.max_k), not 999" in too_many
        empty = _text(await client.call_tool("ask", {"question": "   "}))
        assert "query is empty" in empty
        hops = _text(await client.call_tool("research", {"question": "stroke risk", "max_hops": 99}))
        assert "max_hops must be between 1 and" in hops and "not 99" in hops
        missing = _text(await client.call_tool("search", {"query": "stroke", "collection": "nope"}))
        assert "'nope' does not exist" in missing
