"""The hops the research engine runs read like a person's: over 20 questions on PubMedQA abstracts and real
documents (an excerpt fixture, tests/fixtures/research/followup/) and the demo question on the demo corpus, no
follow-up query or hop carries a statistics fragment, a date, or another passage's copied title."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from deepcite.config import Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.research.agent import ResearchAgent, ResearchResult
from deepcite.research.planner import QueryPlanner
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "research" / "followup"
SAMPLE_CORPUS = Path(__file__).resolve().parents[2] / "src" / "deepcite" / "data" / "sample" / "corpus.jsonl"
DEMO_QUESTION = "Do statins reduce the risk of stroke after surgery?"
# written independently of the engine's own filter: a figure with a statistic's abbreviation or symbol, a
# decimal, a percentage, a year or a year-month
STATISTIC = re.compile(
    r"\b(?:CI|OR|RR|HR|SD|IQR|AUC|p|P|n|N)\b\s*[=<>:]?\s*\d|\d\s*%|\b\d+\.\d+\b|[<>=±]\s*\d"
)
DATE = re.compile(r"\b(?:1[89]|20)\d\d(?:[-/]\d\d)?\b")
TITLE_WORDS = 8  # a title longer than this is a paper's title, never a name


def _copied_titles(text: str, titles: set[str]) -> list[str]:
    """The passage titles ``text`` copies whole: question-form titles and titles longer than a name."""
    return [t for t in titles if (t.endswith("?") or len(t.split()) > TITLE_WORDS) and t in text]


def _followups(result: ResearchResult, question: str) -> list[str]:
    """Every hop sub-question and query of a run that is not the question or one of its planned parts."""
    planned = set(QueryPlanner().plan(question).subquestions)
    texts = []
    for report in result.pack.retrieval_report:
        texts.extend(t for t in [report.subquestion, *report.queries] if t not in planned)
    return texts


def _collection(path: Path, name: str, tmp: Path, minilm: Embedder) -> tuple[Collection, set[str]]:
    collection = open_collection(name, Settings(data_dir=tmp), embedder=minilm)
    IngestPipeline(collection).ingest(path, fmt="jsonl")
    titles = {json.loads(line)["title"] for line in path.read_text(encoding="utf-8").splitlines()}
    return collection, titles


@pytest.fixture(scope="module")
def fixture_collection(
    tmp_path_factory: pytest.TempPathFactory, minilm: Embedder
) -> tuple[Collection, set[str]]:
    return _collection(FIXTURE / "passages.jsonl", "followup", tmp_path_factory.mktemp("followup"), minilm)


def test_the_hops_of_twenty_questions_hold_no_statistics_dates_or_copied_titles(
    fixture_collection: tuple[Collection, set[str]],
) -> None:
    collection, titles = fixture_collection
    questions = [q["question"] for q in json.loads((FIXTURE / "questions.json").read_text(encoding="utf-8"))]
    assert len(questions) == 20
    agent = ResearchAgent(collection, collection.settings.research)
    followed = skipped = 0
    for question in questions:
        result = agent.process(question)
        texts = _followups(result, question)
        followed += len(texts)
        skipped += sum(len(r.skipped_queries) for r in result.pack.retrieval_report)
        skipped += result.pack.stop_reason.count("(a ")
        for text in texts:
            assert not STATISTIC.search(text), (question, text)
            assert not DATE.search(text), (question, text)
            assert not _copied_titles(text, titles - {question}), (question, text)
            assert "following up the evidence" not in text
    # the run followed evidence, and the noise it met was reported as skipped
    assert followed > 0 and skipped > 0


def test_the_demo_questions_hops_read_like_a_persons(tmp_path: Path, minilm: Embedder) -> None:
    collection, titles = _collection(SAMPLE_CORPUS, "demo", tmp_path, minilm)
    agent = ResearchAgent(collection, collection.settings.research)
    result = agent.process(DEMO_QUESTION)
    texts = _followups(result, DEMO_QUESTION)
    assert texts, "the demo question makes follow-up hops"
    for text in texts:
        assert not STATISTIC.search(text) and not DATE.search(text), text
        assert not _copied_titles(text, titles), text
    for report in result.pack.retrieval_report[1:]:
        assert report.subquestion.endswith("?") and "following up the evidence" not in report.subquestion
    reported = [s for r in result.pack.retrieval_report for s in r.skipped_queries]
    # the statins-and-stroke abstract's title and its confidence intervals were met, and skipped with a reason
    assert any(s.reason == "a statistics fragment" and s.text.startswith("CI ") for s in reported)
    assert any(s.text in titles and "title" in s.reason for s in reported)
