"""``deepcite search`` and ``deepcite ask`` name the file and page of each passage (``pasa-p1-2.pdf p. 2``),
and their ``--json`` carries ``file``, ``page`` and ``page_end``: a real two-page PDF ingested with
``deepcite ingest`` into the tests' own data dir."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app

PDF = Path(__file__).parents[1] / "fixtures" / "uploads" / "pasa-p1-2.pdf"
LABEL = re.compile(rf"{re.escape(PDF.name)} p\. [12](–2)?")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliRunner]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEEPCITE_DATA_DIR", str(tmp_path_factory.mktemp("cli-files")))
        patch.setenv("COLUMNS", "200")  # the table keeps each label on one line
        runner = CliRunner()
        ingest = runner.invoke(app, ["ingest", str(PDF), "--collection", "papers", "--json"])
        assert ingest.exit_code == 0, ingest.output
        yield runner


def test_search_table_and_json_show_file_and_page(runner: CliRunner) -> None:
    table = runner.invoke(app, ["search", "Crawler paper queue", "-c", "papers", "-k", "3"])
    assert table.exit_code == 0, table.output
    assert "source" in table.stdout and LABEL.search(table.stdout), table.stdout
    found = runner.invoke(app, ["search", "Crawler paper queue", "-c", "papers", "-k", "3", "--json"])
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["hits"]
    assert hits and all(h["file"] == PDF.name and h["page"] in (1, 2) and "page_end" in h for h in hits)


def test_ask_sources_show_file_and_page(runner: CliRunner) -> None:
    question = "What does the Crawler add to the paper queue?"
    shown = runner.invoke(app, ["ask", question, "-c", "papers", "--max-hops", "1"])
    assert shown.exit_code == 0, shown.output
    sources = shown.stdout.split("Sources", 1)[1]
    assert LABEL.search(sources), sources
    answered = runner.invoke(app, ["ask", question, "-c", "papers", "--max-hops", "1", "--json"])
    citations = json.loads(answered.stdout)["citations"]
    assert citations and all(c["file"] == PDF.name and c["page"] in (1, 2) for c in citations)
