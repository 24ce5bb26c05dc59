"""Bad input: whole-input problems raise IngestError at once; record problems are reported in place,
naming file and line, and reading carries on."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepcite.errors import IngestError, InputError
from deepcite.ingest import LoadProblem, iter_documents
from deepcite.models import Document


@pytest.fixture
def unreadable(tmp_path: Path) -> Iterator[Path]:
    """A path that exists but cannot be opened, even by root: a Unix socket."""
    path = tmp_path / "corpus.jsonl"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        yield path


def problems_of(path: Path, fmt: str = "auto") -> list[LoadProblem]:
    return [i for i in iter_documents(path, fmt) if isinstance(i, LoadProblem)]


def test_every_bad_line_is_reported_with_its_line_and_good_lines_still_load(fixtures: Path) -> None:
    path = fixtures / "malformed.jsonl"
    items = list(iter_documents(path, "jsonl"))
    assert [i.id for i in items if isinstance(i, Document)] == ["ok-1", "ok-2"]
    problems = {p.line: p.reason for p in items if isinstance(p, LoadProblem)}
    assert sorted(problems) == [2, 3, 4, 5, 6, 7, 8]
    assert problems[2].startswith("malformed JSON")
    assert "missing or empty 'text'" in problems[3]
    assert "missing 'id'" in problems[4]
    assert "missing or empty 'text'" in problems[5]
    assert "expected a JSON object, got list" in problems[6]
    assert "'year' must be a year" in problems[7]
    assert "'acl' must be a list of group names" in problems[8]
    assert {p.path for p in items if isinstance(p, LoadProblem)} == {str(path)}


def test_a_problem_becomes_an_ingest_error_naming_file_and_line(fixtures: Path) -> None:
    first = problems_of(fixtures / "malformed.jsonl")[0]
    error = first.to_error()
    assert isinstance(error, IngestError)
    assert str(error).startswith(f"{fixtures / 'malformed.jsonl'}:2: malformed JSON")
    assert (error.path, error.line) == (str(fixtures / "malformed.jsonl"), 2)
    assert str(first) == str(error)


def test_non_utf8_line_is_a_problem_on_that_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"id": "a", "text": "fine"}\n{"id": "b", "text": "caf\xe9"}\n')
    items = list(iter_documents(path))
    assert isinstance(items[0], Document)
    assert isinstance(items[1], LoadProblem)
    assert (items[1].line, items[1].reason[:19]) == (2, "not valid UTF-8 (in")


def test_bad_pubmedqa_entries_name_the_pmid_and_its_line(fixtures: Path) -> None:
    items = list(iter_documents(fixtures / "pubmedqa_bad.json", "pubmedqa"))
    assert [i.id for i in items if isinstance(i, Document)] == ["111-0"]
    missing, bad_year = (i for i in items if isinstance(i, LoadProblem))
    assert (missing.line, missing.reason) == (
        9,
        "PMID 222: missing or empty CONTEXTS (the abstract sections)",
    )
    assert bad_year.line == 14
    assert bad_year.reason.startswith("PMID 333: 'YEAR' must be a year")


def test_malformed_whole_json_file_is_one_problem_at_the_parser_line(tmp_path: Path) -> None:
    path = tmp_path / "ori_pqal.json"
    path.write_text('{\n  "1": {"CONTEXTS": ["a"]},\n  "2": {"CONTEXTS": ["b"}\n}\n')
    items = list(iter_documents(path))
    assert isinstance(items[0], Document)  # what came before the error is read
    (problem,) = items[1:]
    assert isinstance(problem, LoadProblem)
    assert problem.line == 3
    assert problem.reason.startswith("malformed JSON")


def test_pubmedqa_of_the_wrong_shape(tmp_path: Path) -> None:
    path = tmp_path / "pqal.json"
    path.write_text('[{"CONTEXTS": ["a"]}]')
    (problem,) = problems_of(path, "pubmedqa")
    assert "expected a JSON object keyed by PMID" in problem.reason


def test_hotpotqa_record_of_the_wrong_shape(tmp_path: Path) -> None:
    path = tmp_path / "hotpot.jsonl"
    path.write_text('{"contexts": [{"title": "A", "paragraph_text": "ok"}]}\n{"contexts": [["A", "B"]]}\n')
    items = list(iter_documents(path, "hotpotqa"))
    assert isinstance(items[0], Document)
    assert isinstance(items[1], LoadProblem)
    assert (items[1].line, items[1].reason) == (
        2,
        "contexts[0] must be an object with title and paragraph_text",
    )


def test_json_array_problems_name_the_record_and_its_line(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    path.write_text('[\n  {"id": "a", "text": "fine"},\n  {"id": "b"}\n]\n')
    (problem,) = problems_of(path, "jsonl")
    assert (problem.line, problem.reason[:10]) == (3, "record 1: ")


def test_empty_text_file_in_a_folder_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# Good\n\nSome text.\n")
    (tmp_path / "empty.txt").write_text("  \n")
    items = list(iter_documents(tmp_path))
    assert [i.id for i in items if isinstance(i, Document)] == ["good.md"]
    (problem,) = [i for i in items if isinstance(i, LoadProblem)]
    assert (problem.path, problem.line) == (str(tmp_path / "empty.txt"), None)
    assert "the file is empty" in problem.reason


def test_unreadable_file_in_a_folder_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# Good\n\nSome text.\n")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "socket.md"))
        items = list(iter_documents(tmp_path))
    (problem,) = [i for i in items if isinstance(i, LoadProblem)]
    assert problem.path == str(tmp_path / "socket.md")
    assert "cannot read the file" in problem.reason


# -- whole-input problems: IngestError at call time, before anything is read ------------------------


def test_unknown_format_lists_the_choices(fixtures: Path) -> None:
    with pytest.raises(IngestError, match="unknown format 'csv'; choose one of: auto, jsonl, beir, pubmedqa"):
        iter_documents(fixtures / "records.jsonl", "csv")


def test_unknown_format_is_an_input_error_for_the_http_layer() -> None:
    assert issubclass(IngestError, InputError)


def test_unreadable_file(unreadable: Path) -> None:
    with pytest.raises(IngestError, match=r"corpus\.jsonl: cannot read the file"):
        iter_documents(unreadable)
    with pytest.raises(IngestError, match=r"corpus\.jsonl: cannot read the file"):
        iter_documents(unreadable, "jsonl")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file or folder"):
        iter_documents(tmp_path / "missing.jsonl", "jsonl")


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=f"{tmp_path}: the folder holds no"):
        iter_documents(tmp_path)
    with pytest.raises(IngestError, match=f"{tmp_path}: the folder holds no files"):
        iter_documents(tmp_path, "text")


def test_folder_given_for_a_file_format(fixtures: Path) -> None:
    with pytest.raises(IngestError, match="format jsonl reads a file, but this is a folder"):
        iter_documents(fixtures / "notes", "jsonl")
    with pytest.raises(IngestError, match="a beir folder must hold corpus.jsonl"):
        iter_documents(fixtures / "notes", "beir")


def test_a_duplicate_id_is_a_problem_naming_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "dupes.jsonl"
    path.write_text(
        '{"id": "a", "text": "First."}\n{"id": "b", "text": "Other."}\n{"id": "a", "text": "Again."}\n'
    )
    items = list(iter_documents(path))
    assert [i.text for i in items if isinstance(i, Document)] == ["First.", "Other."]
    (problem,) = [i for i in items if isinstance(i, LoadProblem)]
    assert problem.line == 3
    assert problem.reason == "duplicate id 'a' (first used on line 1); ids must be unique"
    assert problem.to_dict() == {"path": str(path), "line": 3, "reason": problem.reason}


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.touch()
    with pytest.raises(IngestError, match=r"empty\.jsonl: the file is empty"):
        iter_documents(path)


def test_a_text_file_named_pdf_is_refused_as_not_a_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 16-byte text file named broken.pdf: `deepcite ingest` refuses it and says it is not a PDF (it was
    ingested as one passage of text, with no word that it was not a PDF)."""
    from typer.testing import CliRunner

    from deepcite.cli.main import app

    monkeypatch.setenv("DEEPCITE_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "broken.pdf").write_bytes(b"this is not pdf\n")
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "broken.pdf"), "-c", "docs"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 2, result.output
    assert (
        "broken.pdf: unsupported type: the file is named .pdf but is not a PDF: it holds text (16 bytes)"
        in (" ".join(result.output.split()))
    )
    assert "rename it .txt" in result.output
    assert "error: 1 problem, nothing was written" in result.output
