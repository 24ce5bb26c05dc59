"""``deepcite eval documents`` (evaluation/documents_run.py) on a real HTML page: each question is researched once,
through ``ask``, and the research hit@k is read from the evidence pack its answer was written from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from deepcite.app.answers import Answers
from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.evaluation.documents_run import evaluate_documents
from deepcite.retrieval.embedders import Embedder

DOCS = Path(__file__).resolve().parent.parent / "fixtures" / "docs"
QUESTIONS = [
    {"id": "f1", "question": "When is National Flag of Canada Day observed?", "answer": "February 15"},
    {"id": "f2", "question": "What is Flag Day commonly called in French?", "answer": "Jour du drapeau"},
]


def test_each_question_is_researched_once_and_scored_from_its_answers_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minilm: Embedder
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    shutil.copy(DOCS / "flag_day.html", files)
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(json.dumps(q | {"file": "flag_day.html"}) + "\n" for q in QUESTIONS), encoding="utf-8"
    )
    researched: list[str] = []
    research = Answers.research

    async def counted(self: Answers, request: Any, groups: Any = None, on_hop: Any = None) -> Any:
        researched.append(getattr(request, "request", request).query)  # a checked question holds the request
        return await research(self, request, groups, on_hop)

    monkeypatch.setattr(Answers, "research", counted)
    with Engine(Settings(data_dir=tmp_path / "data"), embedder=minilm) as engine:
        result = evaluate_documents(engine, files, questions, "flag-eval")
        saved = engine.saved.list("flag-eval").answers
    assert sorted(researched) == sorted(q["question"] for q in QUESTIONS)  # once each, not twice
    assert len(saved) == len(QUESTIONS)  # the answers the research figure was read from
    assert result["retrieval"]["research"]["hit@5"] == 1.0  # the page holds both answers
    assert set(result["per_question"]["f1"]) >= {"research", "summary", "summary_or_long"}
    assert result["states_answer"]["questions"]["all"] == len(QUESTIONS)
