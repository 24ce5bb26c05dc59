"""Every loader reads its format into Documents with the fields the format carries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepcite.ingest import InputFormat, LoadProblem, iter_documents, paragraph_id
from deepcite.models import Document


def docs_of(path: Path, fmt: str = "auto") -> list[Document]:
    items = list(iter_documents(path, fmt))
    assert all(isinstance(i, Document) for i in items), [str(i) for i in items if isinstance(i, LoadProblem)]
    return items  # type: ignore[return-value]


def test_jsonl_maps_known_fields_and_puts_the_rest_in_metadata(fixtures: Path) -> None:
    first, second, third = docs_of(fixtures / "records.jsonl", "jsonl")
    assert first.model_dump() == {
        "id": "doc-1",
        "text": "Warfarin needs regular INR checks. The dose is adjusted to keep the INR between 2 and 3.",
        "title": "Warfarin dosing",
        "section": "RESULTS",
        "pmid": "1001",
        "doi": "10.1000/warfarin",
        "year": 2019,
        "url": "https://example.org/1",
        "source": "trials",
        "authors": [],
        "venue": None,
        "file": None,
        "acl": ["cardiology", "pharmacy"],
        "metadata": {"journal": "Example Journal"},
    }
    # an integer id becomes a string, a year string a number; metadata object and extra keys merge
    assert (second.id, second.year) == ("2", 2021)
    assert second.metadata == {"country": "NL", "trial_phase": 3}
    assert (third.title, third.acl, third.source) == ("", ["public-health"], None)


def test_jsonl_reads_a_json_array_too(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    path.write_text(json.dumps([{"id": "a", "text": "One."}, {"id": "b", "text": "Two."}]))
    assert [d.id for d in docs_of(path, "jsonl")] == ["a", "b"]


def test_beir_folder_reads_corpus_jsonl(fixtures: Path) -> None:
    docs = docs_of(fixtures / "beir", "beir")
    assert [d.id for d in docs] == ["4983", "5836", "7912"]
    assert docs[0].title == "Microstructural development of human newborn cerebral white matter"
    assert docs[1].metadata == {"url": "https://example.org/5836"}
    assert docs[2].title == ""
    assert {d.source for d in docs} == {"beir"}  # the corpus folder's name


def test_pubmedqa_gives_one_document_per_abstract_section(fixtures: Path) -> None:
    docs = docs_of(fixtures / "pubmedqa" / "ori_pqal.json", "pubmedqa")
    assert [d.id for d in docs] == ["21645374-0", "21645374-1", "21881325-0", "21881325-1", "21881325-2"]
    assert [d.section for d in docs] == ["BACKGROUND", "RESULTS", "OBJECTIVE", "METHODS", "RESULTS"]
    lace = docs[0]
    assert lace.pmid == "21645374"
    assert lace.year == 2011
    assert lace.title.startswith("Do mitochondria play a role")  # the QUESTION stands in for the title
    assert lace.metadata == {"meshes": ["Alismataceae", "Apoptosis", "Mitochondria"]}
    assert lace.source == "pubmedqa"
    assert docs[4].text == "Postoperative atrial fibrillation was less frequent in patients on statins."


def test_pubmedqa_folder_reads_ori_pqal(fixtures: Path) -> None:
    assert len(docs_of(fixtures / "pubmedqa")) == 5


def test_ircot_layout_yields_each_distinct_paragraph_once(fixtures: Path) -> None:
    items = list(iter_documents(fixtures / "hotpotqa_ircot.jsonl", "hotpotqa"))
    docs = [i for i in items if isinstance(i, Document)]
    assert [d.title for d in docs] == ["Paris", "Seine", "Lyon", "Le Havre"]  # "Seine" appears twice
    assert docs[0].text == "Paris is the capital of France.  It lies on the Seine."
    assert docs[1].id == paragraph_id("Seine", "The Seine is a river in northern France.")
    assert {d.source for d in docs} == {"hotpotqa"}
    (problem,) = [i for i in items if isinstance(i, LoadProblem)]
    assert problem.line == 3
    assert "no 'contexts', 'paragraphs' or 'context'" in problem.reason


def test_original_hotpotqa_layout_joins_sentences(fixtures: Path) -> None:
    docs = docs_of(fixtures / "hotpotqa_original.json", "hotpotqa")
    assert [d.title for d in docs] == ["Scott Derrickson", "Ed Wood", "Ed Wood (film)"]
    assert docs[0].text == "Scott Derrickson is an American director. He lives in Los Angeles."


def test_musique_paragraphs(fixtures: Path) -> None:
    docs = docs_of(fixtures / "musique.jsonl", "musique")
    assert [d.title for d in docs] == ["iPhone", "Apple Inc.", "Cupertino"]
    assert {d.source for d in docs} == {"musique"}


def test_paragraph_id_ignores_whitespace_differences_between_layouts() -> None:
    ircot = paragraph_id("Ed Wood", "Edward Davis Wood Jr. was an American filmmaker.  He directed films.")
    original = paragraph_id("Ed Wood", "Edward Davis Wood Jr. was an American filmmaker. He directed films.")
    assert ircot == original
    assert paragraph_id("Ed Wood (film)", "Edward Davis Wood Jr. was an American filmmaker.") != ircot


def test_text_folder_ids_are_relative_paths_and_titles_come_from_headings(fixtures: Path) -> None:
    docs = docs_of(fixtures / "notes", "text")
    by_id = {d.id: d for d in docs}
    # every file but the hidden one: a .csv is read as text
    assert sorted(by_id) == ["atrial-fibrillation.md", "data.csv", "guides/statins.txt"]
    assert by_id["atrial-fibrillation.md"].title == "Atrial fibrillation in brief"
    assert "Anticoagulants lower the stroke risk." in by_id["atrial-fibrillation.md"].text
    assert by_id["guides/statins.txt"].title == "statins"  # a .txt file's title is its stem


def test_a_single_text_file(fixtures: Path) -> None:
    (doc,) = docs_of(fixtures / "notes" / "atrial-fibrillation.md")
    assert (doc.id, doc.title) == ("atrial-fibrillation.md", "Atrial fibrillation in brief")


def test_a_markdown_file_without_heading_takes_its_stem(tmp_path: Path) -> None:
    (tmp_path / "plain-notes.md").write_text("Just a paragraph, no heading.\n")
    (doc,) = docs_of(tmp_path)
    assert doc.title == "plain-notes"


@pytest.mark.parametrize("fmt", [InputFormat.JSONL, "JSONL", " jsonl "])
def test_format_accepts_the_enum_or_its_name(fixtures: Path, fmt: InputFormat | str) -> None:
    assert len(docs_of(fixtures / "records.jsonl", fmt)) == 3  # type: ignore[arg-type]


def test_reading_twice_gives_the_same_documents(fixtures: Path) -> None:
    path = fixtures / "hotpotqa_ircot.jsonl"
    assert list(iter_documents(path)) == list(iter_documents(path))
