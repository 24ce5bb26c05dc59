"""The evaluation (queries file, qrels by specialty, ir_measures) and the CLI commands end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app
from deepcite.engine import Engine
from deepcite.errors import IngestError, InputError
from deepcite.evaluation.practitioners import (
    SYSTEMS,
    EvalQuery,
    evaluate_practitioners,
    load_queries,
    parse_systems,
)
from deepcite.retrieval.embedders import Embedder
from practitioners.conftest import MAINE, NATIONAL, make_settings


def _queries(tmp_path: Path, lines: list[dict[str, object]]) -> Path:
    path = tmp_path / "queries.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_query_file_errors_name_the_line(tmp_path: Path) -> None:
    path = _queries(tmp_path, [{"query": "SVT", "relevant": {"CARDIAC ELECTROPHYSIOLOGY": 3}}])
    assert load_queries(path)[0].id == "q1"
    bad = _queries(tmp_path, [{"query": "SVT", "relevant": {"CARDIAC ELECTROPHYSIOLOGY": 7}}])
    with pytest.raises(IngestError, match=r"queries\.jsonl:1: grades must be 1\.\.3"):
        load_queries(bad)
    with pytest.raises(IngestError, match="not a query line"):
        load_queries(_queries(tmp_path, [{"query": "SVT"}]))


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[Engine]:
    """An Engine whose directory holds the Maine and national excerpts."""
    with Engine(make_settings(tmp_path_factory.mktemp("evaluation")), embedder=minilm) as engine:
        engine.practitioners.import_file(MAINE, "cms-reduced")
        engine.practitioners.import_file(NATIONAL, "cms-national")
        yield engine


async def test_evaluate_reports_the_baseline_and_each_profile(engine: Engine) -> None:
    queries = [
        EvalQuery(
            id="svt",
            query="I need SVT ablation",
            relevant={"CARDIAC ELECTROPHYSIOLOGY": 3, "CARDIOVASCULAR DISEASE (CARDIOLOGY)": 2},
        ),
        EvalQuery(id="kidney", query="kidney doctor for my CKD", relevant={"NEPHROLOGY": 3}),
    ]
    report = await evaluate_practitioners(engine, queries)
    assert set(report.summary) == {"bm25", "catalogue_only", "two_stage"}
    assert (
        report.profiles
        == SYSTEMS
        == {"catalogue_only": "practitioners_catalogue_only", "two_stage": "default"}
    )
    assert set(report.summary["bm25"]) == {"ndcg@10", "p@10"}
    by_id = {row["id"]: row for row in report.per_query}
    assert by_id["svt"]["bm25:ndcg@10"] == 0.0  # no profile says "SVT" or "ablation"
    assert by_id["svt"]["two_stage:ndcg@10"] > 0.9
    assert report.summary["two_stage"]["ndcg@10"] > report.summary["bm25"]["ndcg@10"]
    # the shipped system is what users run: the same ranking as the Engine's own finder
    from deepcite.practitioners.api import PractitionerQuery

    asked = await engine.practitioners.find(PractitionerQuery(user_query="I need SVT ablation"))
    assert by_id["svt"]["top"] == [r.primary_specialty for r in asked.results[:3]]


async def test_follow_ups_are_asked_as_conversations_and_urgency_is_scored(engine: Engine) -> None:
    queries = [
        EvalQuery(
            id="now",
            query="crushing chest pain right now",
            relevant={"EMERGENCY MEDICINE": 3},
            urgent=True,
            pair="p",
        ),
        EvalQuery(
            id="later",
            query="checkup for my heart",
            relevant={"CARDIOVASCULAR DISEASE (CARDIOLOGY)": 3},
            urgent=False,
            pair="p",
        ),
        EvalQuery(
            id="follow",
            messages=["I need SVT ablation"],
            query="who do you suggest?",
            relevant={"CARDIAC ELECTROPHYSIOLOGY": 3},
        ),
    ]
    report = await evaluate_practitioners(engine, queries)
    by_id = {row["id"]: row for row in report.per_query}
    assert by_id["now"]["emergency"] == "emergency" and by_id["later"]["emergency"] is None
    assert by_id["follow"]["messages"] == ["I need SVT ablation"]
    assert by_id["follow"]["two_stage:ndcg@10"] > 0.9  # the earlier turn says what is needed
    assert report.urgency == {
        "labelled": 2.0,
        "accuracy": 1.0,
        "missed": 0.0,
        "false_alarms": 0.0,
        "pairs": 1.0,
        "pairs_right": 1.0,
    }
    assert report.to_dict()["urgency"] == report.urgency


async def test_a_profile_changes_only_its_system(engine: Engine, tmp_path: Path) -> None:
    queries = [EvalQuery(id="svt", query="I need SVT ablation", relevant={"CARDIAC ELECTROPHYSIOLOGY": 3})]
    no_fill = tmp_path / "no_fill.toml"
    no_fill.write_text("[practitioners.ranking]\nstage_a_k = 1\n", encoding="utf-8")
    report = await evaluate_practitioners(
        engine, queries, systems=parse_systems(f"two_stage=default,tiny={no_fill}")
    )
    assert report.profiles == {"two_stage": "default", "tiny": str(no_fill)}
    assert set(report.summary) == {"bm25", "two_stage", "tiny"}
    assert engine.settings.practitioners.ranking.stage_a_k != 1  # the base Engine is left as it was
    with pytest.raises(InputError, match="no settings profile 'nowhere'"):
        await evaluate_practitioners(engine, queries, systems={"two_stage": "nowhere"})
    with pytest.raises(InputError, match="must include 'two_stage'"):
        await evaluate_practitioners(engine, queries, systems={"other": "default"})


async def test_unknown_specialty_in_qrels_is_refused(engine: Engine) -> None:
    with pytest.raises(InputError, match="CARDIOLOGY \\(did you mean"):
        await evaluate_practitioners(engine, [EvalQuery(query="heart", relevant={"CARDIOLOGY": 3})])


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("DEEPCITE_DATA_DIR", str(tmp_path / "data"))
    for name in ("DEEPCITE_LLM_BASE_URL", "DEEPCITE_LLM_MODEL", "DEEPCITE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    yield tmp_path


def test_cli_import_search_and_eval(cli_env: Path) -> None:
    runner = CliRunner()
    imported = runner.invoke(
        app, ["practitioners", "import", str(MAINE), "--format", "cms-reduced", "--json"]
    )
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout)["inserted"] == 57

    found = runner.invoke(app, ["practitioners", "search", "I need SVT ablation", "--json"])
    assert found.exit_code == 0, found.output
    body = json.loads(found.stdout)
    assert set(body["intent"]) >= {
        "q_patient",
        "intent_terms",
        "anchor_phrases",
        "negative_terms",
        "clear",
        "insights",
        "general",
        "clinical",
    }
    assert body["results"][0]["primary_specialty"] == "CARDIAC ELECTROPHYSIOLOGY"

    table = runner.invoke(
        app, ["practitioners", "search", "kidney stones", "--city", "Bangor", "--state", "ME"]
    )
    assert table.exit_code == 0 and "UROLOGY" in table.stdout and "intent" in table.stdout

    bad = runner.invoke(app, ["practitioners", "search", "the of and"])
    assert bad.exit_code == 2 and "only common words" in bad.output

    queries = _queries(
        cli_env, [{"query": "I need SVT ablation", "relevant": {"CARDIAC ELECTROPHYSIOLOGY": 3}}]
    )
    out = cli_env / "figures.json"
    evaluated = runner.invoke(
        app,
        [
            "eval",
            "practitioners",
            "--directory",
            str(MAINE),
            "--format",
            "cms-reduced",
            "--queries",
            str(queries),
            "--out",
            str(out),
            "--per-specialty",
        ],
    )
    assert evaluated.exit_code == 0, evaluated.output
    assert "specialties no request reaches in the top 10" in evaluated.output
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert set(figures) >= {"bm25", "catalogue_only", "two_stage", "latency_ms", "per_specialty"}
    assert figures["two_stage"]["ndcg@10"] == 1.0
    assert figures["profiles"] == {"catalogue_only": "practitioners_catalogue_only", "two_stage": "default"}
    assert figures["per_specialty"]["CARDIAC ELECTROPHYSIOLOGY"] == {
        "targeted": 1,
        "reached": 1,
        "recall": 1.0,
    }


def test_cli_import_of_a_wrong_layout_fails_cleanly(cli_env: Path) -> None:
    result = CliRunner().invoke(app, ["practitioners", "import", str(MAINE), "--format", "cms-national"])
    assert result.exit_code == 2
    assert "looks like --format cms-reduced" in result.output


def test_cli_search_reads_a_conversation_and_explains(cli_env: Path) -> None:
    runner = CliRunner()
    assert (
        runner.invoke(app, ["practitioners", "import", str(MAINE), "--format", "cms-reduced"]).exit_code == 0
    )
    turns = cli_env / "conversation.json"
    turns.write_text(json.dumps([{"role": "user", "content": "my knee hurts when I run"}]), encoding="utf-8")
    found = runner.invoke(
        app,
        ["practitioners", "search", "actually, it's for my daughter", "--conversation", str(turns), "--json"],
    )
    assert found.exit_code == 0, found.output
    body = json.loads(found.stdout)
    assert body["intent"]["insights"]["population"] == "child" and "knee" in body["intent"]["q_patient"]
    shown = runner.invoke(
        app, ["practitioners", "search", "I want to hurt myself", "-m", "user: I feel hopeless", "--explain"]
    )
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.index("988") < shown.stdout.index("intent")  # the guidance comes first
    assert "· score " in shown.stdout
    turns.write_text('{"role": "user"}', encoding="utf-8")
    bad = runner.invoke(app, ["practitioners", "search", "knee", "--conversation", str(turns)])
    assert bad.exit_code == 2 and "is not a conversation" in bad.output and str(cli_env) not in bad.output
