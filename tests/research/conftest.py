"""Fixtures for the research-engine tests: settings and a real small index (Edge store, real MiniLM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config import ResearchSettings, Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import Embedder

from .helpers import ingested_collection

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "research"
CORPUS = FIXTURES / "corpus.jsonl"
COLLECTION = "research-fixture"


@pytest.fixture
def research_settings() -> ResearchSettings:
    return ResearchSettings()


@pytest.fixture(scope="session")
def fixture_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=tmp_path_factory.mktemp("research-data"))


@pytest.fixture(scope="session")
def research_collection(fixture_settings: Settings, minilm: Embedder) -> Collection:
    """The fixture corpus in a real Edge collection embedded with the real MiniLM (built once)."""
    from deepcite.retrieval.collection import open_collection

    collection = open_collection(COLLECTION, fixture_settings, embedder=minilm)
    IngestPipeline(collection).ingest(CORPUS, fmt="jsonl")
    return collection


CHAIN_CORPUS = FIXTURES / "chain_corpus.jsonl"


@pytest.fixture(scope="session")
def chain_collection(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Collection:
    """The composed-question corpus (album -> performer -> spouse) in a real Edge collection with its entity graph."""
    return ingested_collection(tmp_path_factory, minilm, "chain-fixture", CHAIN_CORPUS)
