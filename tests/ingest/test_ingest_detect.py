"""``--format auto``: each fixture is recognised by its folder layout, name or first records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepcite.errors import IngestError
from deepcite.ingest import InputFormat, detect_format


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("beir", InputFormat.BEIR),
        ("beir/corpus.jsonl", InputFormat.BEIR),
        ("pubmedqa", InputFormat.PUBMEDQA),
        ("pubmedqa/ori_pqal.json", InputFormat.PUBMEDQA),
        ("pubmedqa_bad.json", InputFormat.PUBMEDQA),  # any name: an object of entries with CONTEXTS
        ("hotpotqa_ircot.jsonl", InputFormat.HOTPOTQA),
        ("hotpotqa_original.json", InputFormat.HOTPOTQA),
        ("musique.jsonl", InputFormat.MUSIQUE),
        ("records.jsonl", InputFormat.JSONL),
        ("malformed.jsonl", InputFormat.JSONL),
        ("notes", InputFormat.FILES),
        ("notes/atrial-fibrillation.md", InputFormat.TEXT),
    ],
)
def test_detects_every_fixture(fixtures: Path, relative: str, expected: InputFormat) -> None:
    assert detect_format(fixtures / relative) is expected


def test_a_records_file_named_corpus_jsonl_is_not_taken_for_beir(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"id": "1", "text": "Plain records, BEIR's file name."}) + "\n")
    assert detect_format(path) is InputFormat.JSONL


def test_a_malformed_first_line_does_not_hide_the_format(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text('{"broken\n' + json.dumps({"paragraphs": [{"title": "t", "paragraph_text": "p"}]}) + "\n")
    assert detect_format(path) is InputFormat.MUSIQUE


def test_shipped_sample_corpus_is_jsonl() -> None:
    import deepcite

    sample = Path(deepcite.__file__).parent / "data" / "sample" / "corpus.jsonl"
    assert detect_format(sample) is InputFormat.JSONL


def test_any_other_file_or_folder_is_read_by_content(tmp_path: Path) -> None:
    path = tmp_path / "corpus.csv"
    path.write_text("id,text\n1,hello\n")
    assert detect_format(path) is InputFormat.FILES
    assert detect_format(tmp_path) is InputFormat.FILES


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="nowhere.jsonl: no such file"):
        detect_format(tmp_path / "nowhere.jsonl")
