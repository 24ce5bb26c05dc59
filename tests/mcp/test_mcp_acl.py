"""The MCP server's ``mcp.groups`` setting: every caller reads only what those ACL groups may read."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from deepcite.config import Settings
from deepcite.mcp_server.server import build_server

pytestmark = pytest.mark.slow


async def _doc_ids(data_dir: Path, groups: list[str] | None) -> set[str]:
    settings = Settings(data_dir=data_dir)
    settings = settings.model_copy(update={"mcp": settings.mcp.model_copy(update={"groups": groups})})
    async with Client(build_server(settings)) as client:  # in-process; closes the store on exit
        result = await client.call_tool(
            "search",
            {"query": "zelvatinib atrial fibrillation", "collection": "demo", "mode": "bm25", "k": 22},
        )
    assert not result.is_error, result.content
    return {hit["doc_id"] for hit in result.structured_content["hits"]}


async def test_groups_restrict_what_every_caller_reads(mcp_data_dir: Path) -> None:
    public = await _doc_ids(mcp_data_dir, [])
    assert public and not any(d.startswith(("onco-", "cardio-internal")) for d in public)
    oncology = await _doc_ids(mcp_data_dir, ["oncology"])
    assert {"onco-secret-1", "onco-secret-2"} <= oncology
    assert not any(d.startswith("cardio-internal") for d in oncology)
    everything = await _doc_ids(mcp_data_dir, None)
    assert {"onco-secret-1", "cardio-internal-1"} <= everything
