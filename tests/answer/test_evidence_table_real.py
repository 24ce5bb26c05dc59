"""The evidence table of real answers over real documents (a 10-K filing whose blocks the ingest keeps as long
"sentences", and a Wikipedia lead): one row per distinct claim and citation, and each quote the supporting
sentence or two, not the passage."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from deepcite.answer.evidence import claim_key, evidence_rows
from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.retrieval.embedders import Embedder
from deepcite.service import QuestionRequest
from deepcite.text import split_sentences

pytestmark = pytest.mark.slow

FILES = Path("/work/shared/datasets/real_docs/files")
QUESTIONS = [
    "What was Galaxy Gaming's revenue in 2021 and what are its main risks?",
    "Who audited Galaxy Gaming's financial statements and what was their opinion?",
    "What is a gravity hill and why does a car appear to roll uphill?",
]


def test_no_duplicate_rows_and_quotes_of_a_sentence_or_two(tmp_path: Path, minilm: Embedder) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with Engine(settings, embedder=minilm) as engine:
        engine.corpus.ingest_files("real", [FILES / "example-10k.html", FILES / "gravity_hill.md"])
        rows = []
        for question in QUESTIONS:
            answer = engine.ask_sync(QuestionRequest(query=question, collection="real"))
            assert answer.success
            asked = evidence_rows(answer)
            keys = [(claim_key(r.claim), r.citation) for r in asked]
            assert len(keys) == len(set(keys)), question
            rows += asked
    assert len(rows) >= 10
    sentences = [len(split_sentences(r.quote)) for r in rows]
    assert statistics.median(sentences) <= 2, sentences
    most = settings.answer.citations.quote_max_chars
    assert max(len(r.quote) for r in rows) <= most
