"""``deepcite eval answers --json``: stdout is the JSON alone, so it can be piped or redirected to a file (the
progress bar, as ``ingest --json`` and ``practitioners import --json`` do, stays off)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app

pytestmark = pytest.mark.slow

HOTPOTQA = Path(__file__).parents[1] / "fixtures" / "ingest" / "hotpotqa_ircot.jsonl"


def test_eval_answers_json_prints_only_the_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "answers",
            "--hotpotqa",
            str(HOTPOTQA),
            "--limit",
            "1",
            "--json",
            "--data-dir",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert "hotpotqa" in body
