"""``deepcite ask`` on a corpus ingested with ``deepcite ingest``: JSON, the rich view, clear errors.

The CLI reads its settings from the environment, so these tests point ``DEEPCITE_DATA_DIR`` at their own
directory (an Edge collection is opened by one store per process, and the server tests hold theirs).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app
from server.conftest import COLLECTION, CORPUS, ONCOLOGY_MARKER, assert_citations_resolve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliRunner]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEEPCITE_DATA_DIR", str(tmp_path_factory.mktemp("cli-data")))
        patch.setenv("DEEPCITE_RESEARCH_STOPPING_MIN_HOPS", "1")
        runner = CliRunner()
        ingest = runner.invoke(app, ["ingest", str(CORPUS), "--collection", COLLECTION, "--json"])
        assert ingest.exit_code == 0, ingest.output
        yield runner


def test_ask_json_prints_the_full_cited_response(runner: CliRunner) -> None:
    question = "Do statins cause muscle pain?"
    result = runner.invoke(app, ["ask", question, "--collection", COLLECTION, "--json", "--max-hops", "1"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["success"] is True and body["query"] == question
    assert any("statin" in c["title"].lower() for c in body["citations"]), body
    assert_citations_resolve(body)


def test_ask_prints_summary_answer_sources_and_coverage(runner: CliRunner) -> None:
    question = "zelvatinib atrial fibrillation"
    result = runner.invoke(
        app, ["ask", question, "-c", COLLECTION, "--max-hops", "1", "--group", "cardiology"]
    )
    assert result.exit_code == 0, result.output
    for heading in ("Summary", "Answer", "Sources", "coverage", "citation check"):
        assert heading in result.stdout
    sources = result.stdout.split("Sources", 1)[1]
    assert ONCOLOGY_MARKER not in sources.lower()  # --group cardiology: the oncology passages stay out


def test_ask_unknown_collection_is_a_clear_error(runner: CliRunner) -> None:
    result = runner.invoke(app, ["ask", "stroke", "--collection", "nope"])
    assert result.exit_code == 2
    assert "'nope'" in result.output and COLLECTION in result.output
