"""Fixtures for the MCP server tests: a data dir holding a real index and a practitioner directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config import Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.finder import PractitionerFinder
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder

TESTS = Path(__file__).parents[1]
CORPUS = TESTS / "fixtures" / "server" / "corpus.jsonl"
PRACTITIONERS = TESTS / "ui" / "fixtures" / "practitioners.jsonl"


@pytest.fixture(scope="session")
def mcp_data_dir(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Path:
    """A data dir with collection ``demo`` (the server test corpus) and the fixture practitioner directory;
    everything is closed again so the server process can open it."""
    data_dir = tmp_path_factory.mktemp("mcp-data")
    settings = Settings(data_dir=data_dir)
    collection = open_collection("demo", settings, embedder=minilm)
    IngestPipeline(collection).ingest(CORPUS)
    finder = PractitionerFinder(
        settings,
        directory=Directory.open(settings),
        store=collection.store,
        embedder=collection.embedder,
    )
    finder.import_file(PRACTITIONERS, "jsonl")
    finder.close()
    return data_dir
