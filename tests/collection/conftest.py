"""Fixtures of the collection tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deepcite.config import Settings


@pytest.fixture
def cli_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """``settings``' data dir as the CLI's (``DEEPCITE_DATA_DIR``)."""
    monkeypatch.setenv("DEEPCITE_DATA_DIR", str(settings.data_dir))
    yield settings
