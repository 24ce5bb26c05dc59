"""MCP tool results carry the file and page of each passage: the real MCP server, connected in process
through the SDK's client, over a collection holding a real two-page PDF."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from deepcite.config import Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.mcp_server.server import build_server
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.store import open_store
from server.conftest import Index

PDF = Path(__file__).parents[1] / "fixtures" / "uploads" / "pasa-p1-2.pdf"


@pytest.fixture(scope="module")
def pdf_data_dir(index: Index, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose collection ``papers`` holds the fixture PDF (closed again for the server)."""
    data_dir = tmp_path_factory.mktemp("mcp-files")
    settings = Settings(data_dir=data_dir)
    store = open_store(settings)
    report = IngestPipeline(
        open_collection("papers", settings, store=store, embedder=index.embedder)
    ).ingest_files([PDF])
    assert [f.status for f in report.files] == ["ingested"]
    store.close()
    return data_dir


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def test_search_and_ask_results_carry_file_and_page(pdf_data_dir: Path) -> None:
    server = build_server(Settings(data_dir=pdf_data_dir))
    async with Client(server) as client:
        found = _data(
            await client.call_tool("search", {"query": "Crawler paper queue", "collection": "papers"})
        )
        assert found["hits"]
        for hit in found["hits"]:
            assert hit["file"] == PDF.name and hit["page"] in (1, 2) and "page_end" in hit
            assert "acl" not in hit
        queue = [h for h in found["hits"] if "paper queue" in h["text"]]
        assert queue and all(2 in (h["page"], h["page_end"]) for h in queue)

        answered = _data(
            await client.call_tool(
                "ask", {"question": "What does the Crawler add to the paper queue?", "collection": "papers"}
            )
        )
        assert answered["citations"]
        assert all(c["file"] == PDF.name and c["page"] in (1, 2) for c in answered["citations"])
