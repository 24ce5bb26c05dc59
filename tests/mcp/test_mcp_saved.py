"""Saved answers through the MCP tools: an ``ask`` is saved, listed, read back with its quotes, re-run and
deleted; a server whose ``mcp.groups`` differ gets the same error as for an id that does not exist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from deepcite.config import Settings
from deepcite.mcp_server.server import build_server

pytestmark = pytest.mark.slow

QUESTION = "Does atrial fibrillation increase the risk of stroke?"


def server(data_dir: Path, groups: list[str] | None) -> Any:
    settings = Settings(data_dir=data_dir)
    return build_server(
        settings.model_copy(update={"mcp": settings.mcp.model_copy(update={"groups": groups})})
    )


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def test_saved_answer_tools_and_their_acl(mcp_data_dir: Path) -> None:
    async with Client(server(mcp_data_dir, ["cardiology"])) as client:
        asked = await call(client, "ask", {"question": QUESTION, "collection": "demo", "max_hops": 1})
        answer_id = asked["request_id"]
        listed = await call(client, "saved_answers", {"collection": "demo"})
        assert answer_id in [a["id"] for a in listed["answers"]]
        saved = await call(client, "saved_answer", {"answer_id": answer_id})
        assert saved["question"] == QUESTION and saved["acl_groups"] == ["cardiology"]
        for citation in saved["response"]["citations"]:
            assert citation["text"][citation["quote_start"] : citation["quote_end"]] == citation["quote"]
        rerun = await call(client, "rerun_answer", {"answer_id": answer_id})
        assert rerun["rerun_of"] == answer_id and {c["status"] for c in rerun["changes"]} == {"unchanged"}

    async with Client(server(mcp_data_dir, ["oncology"])) as other:
        missing = await other.call_tool("saved_answer", {"answer_id": "no-such-answer"})
        for tool in ("saved_answer", "rerun_answer", "delete_saved_answer"):
            refused = await other.call_tool(tool, {"answer_id": answer_id})
            assert refused.is_error and refused.content[0].text == missing.content[0].text
        listed = await call(other, "saved_answers", {"collection": "demo"})
        assert answer_id not in [a["id"] for a in listed["answers"]]

    async with Client(server(mcp_data_dir, ["cardiology"])) as client:
        assert await call(client, "delete_saved_answer", {"answer_id": answer_id}) == {"deleted": answer_id}
        gone = await client.call_tool("saved_answer", {"answer_id": answer_id})
        assert gone.is_error and "no saved answer" in gone.content[0].text
