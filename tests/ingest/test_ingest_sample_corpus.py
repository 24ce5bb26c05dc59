"""The demo corpus shipped in the package loads cleanly and stays small."""

from __future__ import annotations

from pathlib import Path

import deepcite
from deepcite.config import ChunkerSettings
from deepcite.ingest import chunk_document, iter_documents
from deepcite.models import Document

SAMPLE = Path(deepcite.__file__).parent / "data" / "sample"


def test_sample_corpus_loads_without_problems() -> None:
    items = list(iter_documents(SAMPLE / "corpus.jsonl"))
    assert all(isinstance(i, Document) for i in items)
    docs: list[Document] = items  # type: ignore[assignment]
    assert 40 <= len(docs) <= 60
    assert len({d.id for d in docs}) == len(docs)
    for doc in docs:
        assert doc.pmid == doc.id and doc.pmid.isdigit()
        assert doc.source == "pubmedqa" and doc.section is None
        assert doc.title.endswith("?") and doc.text
        assert isinstance(doc.metadata["meshes"], list)
    assert sum(len(chunk_document(d, ChunkerSettings())) for d in docs) < 100


def test_sample_files_are_small_and_attributed() -> None:
    assert (SAMPLE / "corpus.jsonl").stat().st_size < 200_000
    assert "MIT License" in (SAMPLE / "ATTRIBUTION.md").read_text()
    questions = [q for q in (SAMPLE / "questions.txt").read_text().splitlines() if q.strip()]
    assert len(questions) == 3 and all(q.endswith("?") for q in questions)
