"""Fixtures for the web-search tests: the stand-in web (pages + MCP web_search tool) on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from deepcite.config import Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder
from web.standin import StandinWeb, standin_web


@pytest.fixture(scope="module")
def standin() -> Iterator[StandinWeb]:
    with standin_web() as web:
        yield web


CORPUS = Path(__file__).parents[1] / "fixtures" / "server" / "corpus.jsonl"


@pytest.fixture(scope="session")
def indexed(
    tmp_path_factory: pytest.TempPathFactory, minilm: Embedder
) -> Iterator[tuple[Settings, Collection]]:
    """A fresh data dir whose collection ``demo`` holds the server test corpus (a real index, one store)."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("web-data"))
    collection = open_collection("demo", settings, embedder=minilm)
    IngestPipeline(collection).ingest(CORPUS)
    yield settings, collection
    collection.store.close()
