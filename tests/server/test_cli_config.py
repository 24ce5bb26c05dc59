"""``deepcite --config FILE <command>`` reaches every command: each one builds its Engine (or opens its store)
from the settings of that file, never from the process settings.

Every command the CLI registers is listed here with arguments that get it past its own input checks; a new
command that is not listed fails :func:`test_every_command_is_listed`. The commands run in-process with
Typer's CliRunner; the Engine and the store are stopped at their construction (the first thing a command
builds from its settings), so no command does its real work here. The real work with ``--config`` is
:func:`test_a_corpus_ingested_with_config_is_found_there`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import deepcite.cli.main as cli_main
from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.retrieval.edge_store import EdgeStore
from server.conftest import CORPUS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MARKER = "from-the-config-file"  # a collection name no default and no environment gives


class Reached(Exception):
    """Raised where a command first builds something from its settings; carries those settings."""

    def __init__(self, settings: Settings | None) -> None:
        super().__init__("reached")
        self.settings = settings


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        return [path]
    return [found for name, sub in subcommands.items() for found in _commands(sub, (*path, name))]


def _arguments(tmp: Path) -> dict[tuple[str, ...], list[str]]:
    """Each command's arguments: enough to pass its own checks and reach its settings (the files they name
    in ``tmp`` are written by the test: listing the commands writes nothing)."""
    questions = tmp / "questions.jsonl"
    practitioners = FIXTURES / "practitioners"
    return {
        ("ingest",): [str(CORPUS), "-c", "papers"],
        ("search",): ["statins", "-c", "papers"],
        ("remove",): ["a.pdf", "-c", "papers"],
        ("ask",): ["Do statins cause myalgia?", "-c", "papers"],
        ("research",): ["Do statins cause myalgia?", "-c", "papers"],
        ("serve",): [],
        ("mcp",): [],
        ("collections", "list"): [],
        ("collections", "check"): ["papers"],
        ("collections", "stats"): ["papers"],
        ("collections", "drop"): ["papers", "--yes"],
        ("eval", "retrieval"): ["--beir", str(FIXTURES / "beir_mini")],
        ("eval", "answers"): [
            "--hotpotqa",
            str(FIXTURES / "ingest" / "hotpotqa_ircot.jsonl"),
            "--limit",
            "1",
        ],
        ("eval", "practitioners"): [
            "--directory",
            str(practitioners / "cms_maine_excerpt.csv"),
            "--format",
            "cms-reduced",
            "--queries",
            str(tmp / "queries.jsonl"),
        ],
        ("eval", "documents"): ["--files", str(FIXTURES / "docs"), "--questions", str(questions)],
        ("eval", "multihop"): ["--data", str(FIXTURES / "research" / "multihop_ircot.jsonl")],
        ("practitioners", "import"): [str(practitioners / "cms_maine_excerpt.csv"), "-f", "cms-reduced"],
        ("practitioners", "reindex"): [],
        ("practitioners", "search"): ["I need a knee surgeon"],
    }


@pytest.fixture
def config(tmp_path: Path) -> Path:
    file = tmp_path / "deepcite.toml"
    file.write_text(
        f'data_dir = "{(tmp_path / "config-data").as_posix()}"\n\n[server]\ndefault_collection = "{MARKER}"\n'
    )
    return file


def test_every_command_is_listed(tmp_path: Path) -> None:
    registered = set(_commands(typer.main.get_command(cli_main.app)))
    assert registered == set(_arguments(tmp_path))


@pytest.mark.parametrize("command", sorted(_arguments(Path("."))), ids=" ".join)
def test_config_reaches_the_command(
    command: tuple[str, ...], config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "queries.jsonl").write_text(
        json.dumps({"query": "knee surgeon", "relevant": {"Orthopedic Surgery": 2}}) + "\n"
    )
    (tmp_path / "questions.jsonl").write_text(
        json.dumps({"file": "flag_day.html", "question": "When?", "answer": "flag", "page": None}) + "\n"
    )

    def engine_built(self: Engine, settings: Settings | None = None, **_: Any) -> None:
        raise Reached(settings)

    def store_opened(self: EdgeStore, root: Path, settings: Settings | None = None) -> None:
        raise Reached(settings)

    monkeypatch.setattr(Engine, "__init__", engine_built)
    monkeypatch.setattr(EdgeStore, "__init__", store_opened)
    monkeypatch.delenv("DEEPCITE_CONFIG", raising=False)
    monkeypatch.delenv("DEEPCITE_DATA_DIR", raising=False)
    argv = ["--config", str(config), *command, *_arguments(tmp_path)[command]]
    result = CliRunner().invoke(cli_main.app, argv)
    assert isinstance(result.exception, Reached), (result.exception, result.output)
    settings = result.exception.settings
    assert settings is not None, "built from the process settings, not the --config file"
    assert settings.server.default_collection == MARKER
    if command != ("eval", "practitioners"):  # that one evaluates on a scratch copy of the directory
        assert settings.data_dir == config.parent / "config-data"


@pytest.mark.slow
def test_a_corpus_ingested_with_config_is_found_there(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEPCITE_CONFIG", raising=False)
    monkeypatch.delenv("DEEPCITE_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)  # the default data dir (./data) would be here
    runner = CliRunner()

    def run(*argv: str) -> Any:
        result = runner.invoke(cli_main.app, ["--config", str(config), *argv])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    report = run("ingest", str(CORPUS), "-c", "papers", "--json")
    assert report["written"] > 0
    assert (config.parent / "config-data" / "edge" / "papers").is_dir()
    assert not (tmp_path / "data").exists()
    assert [c["name"] for c in run("collections", "list", "--json")] == ["papers"]
    assert run("collections", "stats", "papers", "--json")["chunks"] == report["chunks"]
    assert run("search", "statins muscle pain", "-c", "papers", "-k", "2", "--json")["hits"]
