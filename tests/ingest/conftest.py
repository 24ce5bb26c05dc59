"""Fixtures of the ingestion tests: the folder of tiny input files, one per format."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ingest"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
