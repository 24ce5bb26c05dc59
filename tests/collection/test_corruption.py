"""Damaged index files are named: "collection X is damaged (…)" with what to do, a 503 over HTTP, a clean CLI
message, `deepcite collections check` exit code 1, and `deepcite ingest --rebuild` to recover."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app
from deepcite.config import Settings
from deepcite.errors import CollectionDamagedError
from deepcite.models import SearchMode
from deepcite.retrieval.check import check_collection
from deepcite.retrieval.store import open_store

from .mp_helpers import bm25_collection, clean, segment_files, truncate_payload

pytestmark = pytest.mark.slow

TEXTS = [f"Heparin dosing study {i} after trauma surgery, bleeding and outcomes." for i in range(30)]


def garble_segment(folder: Path) -> None:
    for segment in segment_files(folder, "segment.json"):
        segment.write_text("{garbage")


def garble_meta(folder: Path) -> None:
    (folder / "deepcite.json").write_text("{garbage")


DAMAGE: dict[str, Callable[[Path], None]] = {
    "payload page truncated": truncate_payload,
    "segment.json garbage": garble_segment,
    "deepcite.json garbage": garble_meta,
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_damage_is_named_with_what_to_do(settings: Settings, kind: str) -> None:
    bm25_collection(settings, "notes", TEXTS)
    bm25_collection(settings, "fine", TEXTS)
    DAMAGE[kind](settings.edge_path / "notes")
    store = open_store(settings)
    with pytest.raises(CollectionDamagedError) as err:
        store.search("notes", text="heparin", vector=None, mode=SearchMode.BM25, k=5)
    message = str(err.value)
    assert message.startswith("collection 'notes' is damaged (") and "--rebuild" in message
    assert err.value.http_status == 503 and str(settings.data_dir) not in message
    report = check_collection(store, "notes")  # type: ignore[arg-type]
    assert not report.ok and report.problems
    assert check_collection(store, "fine").ok  # type: ignore[arg-type]
    assert store.search("fine", text="heparin", vector=None, mode=SearchMode.BM25, k=1)
    store.close()


def test_cli_check_and_rebuild(cli_env: Settings, tmp_path: Path, minilm) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": f"d{i}", "title": "Heparin", "text": t}) + "\n" for i, t in enumerate(TEXTS[:5])
        )
    )
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(corpus), "-c", "notes"]).exit_code == 0
    ok = runner.invoke(app, ["collections", "check", "notes", "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["vectors_read"] == 5, ok.output
    truncate_payload(cli_env.edge_path / "notes")
    damaged = runner.invoke(app, ["collections", "check", "notes"])
    assert damaged.exit_code == 1 and "damaged" in damaged.output and "--rebuild" in damaged.output
    search = runner.invoke(app, ["search", "heparin", "-c", "notes", "--mode", "bm25"])
    assert search.exit_code == 2 and "is damaged" in search.output and clean(search.output, cli_env.data_dir)
    rebuilt = runner.invoke(app, ["ingest", str(corpus), "-c", "notes", "--rebuild", "--json"])
    assert rebuilt.exit_code == 0 and json.loads(rebuilt.stdout)["written"] == 5, rebuilt.output
    assert runner.invoke(app, ["collections", "check", "notes"]).exit_code == 0
