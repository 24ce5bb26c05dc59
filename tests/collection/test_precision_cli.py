"""The CLI side of embedding precision: `collections stats` shows what made a collection's vectors and the
precision the embedder runs in now; an ingest in another precision is refused with what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app
from deepcite.config import Settings

pytestmark = pytest.mark.slow


def test_stats_show_the_precision_and_a_mixed_ingest_is_refused(
    cli_env: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"id": "d1", "title": "Heparin", "text": "Heparin dosing after surgery."}) + "\n"
    )
    runner = CliRunner()
    monkeypatch.setenv("DEEPCITE_EMBEDDER_PRECISION", "fp32")
    assert runner.invoke(app, ["ingest", str(corpus), "-c", "notes"]).exit_code == 0
    stats = runner.invoke(app, ["collections", "stats", "notes", "--json"])
    assert stats.exit_code == 0, stats.output
    shown = json.loads(stats.stdout)
    assert shown["vectors"] == {"model": "all-MiniLM-L6-v2", "precision": "fp32"}
    assert shown["embedder_precision"] == {"setting": "fp32", "resolved": "fp32"}
    monkeypatch.setenv("DEEPCITE_EMBEDDER_PRECISION", "bf16")
    stats = runner.invoke(app, ["collections", "stats", "notes"])
    assert "bf16" in stats.output and "fp32" in stats.output
    corpus.write_text(json.dumps({"id": "d2", "title": "Zinc", "text": "Zinc shortens colds."}) + "\n")
    refused = runner.invoke(app, ["ingest", str(corpus), "-c", "notes"])
    assert refused.exit_code == 2, refused.output
    assert "in fp32" in refused.output and "DEEPCITE_EMBEDDER_PRECISION=fp32" in refused.output
