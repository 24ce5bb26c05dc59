"""No follow-up hop is built from a document's title, a venue, an author list, section words or symbols, and
none drifts from the question (issue 33).

Forty questions: twenty of PubMedQA PQA-L (train split) over their own abstract sections, and twenty
real-document-style questions over passages written like the shared real documents as the readers give them
(fixtures and their sources: tests/fixtures/research/followup/README.md). Every passage of a question's
documents is read as the parent of a bridge hop (:func:`deepcite.research.followup_terms.followup_terms`), and
each follow-up is checked against what the fixture says each document's title, authors and venue are.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from deepcite.config import FollowupSettings
from deepcite.models import Candidate, Chunk
from deepcite.research.followup import DOCUMENT_TITLE, DRIFT, REFERENCE_LIST
from deepcite.research.followup_terms import followup_subquestion, followup_terms
from deepcite.text import tokenize

FIXTURES = Path(__file__).parent.parent / "fixtures" / "research" / "followup"
SETTINGS = FollowupSettings()
SECTION_WORDS = {
    "abstract",
    "introduction",
    "related",
    "work",
    "main",
    "results",
    "result",
    "table",
    "figure",
    "experiments",
    "experimental",
    "setup",
    "conclusion",
    "acknowledgements",
    "references",
    "appendix",
    "methods",
    "discussion",
    "background",
}
VENUE_WORDS = {
    "proceedings",
    "conference",
    "association",
    "workshop",
    "journal",
    "arxiv",
    "annual",
    "meeting",
}
SYMBOLS = re.compile(r"[^\w\s'’.,&()/:+?!\"“”–-]|[_@#|\\]|\w-\s|\s-\w")


def _pubmedqa() -> list[tuple[str, list[Chunk], dict[str, list[str]]]]:
    data = json.loads((FIXTURES / "pubmedqa_train_excerpt.json").read_text(encoding="utf-8"))
    cases = []
    for pmid, entry in data.items():
        chunks = [
            Chunk(
                chunk_id=f"{pmid}-{k}",
                doc_id=f"{pmid}-{k}",
                pmid=pmid,
                title=entry["QUESTION"],  # deepcite ingest --format pubmedqa reads the question-form title
                section=label,
                text=text,
            )
            for k, (text, label) in enumerate(zip(entry["CONTEXTS"], entry["LABELS"], strict=True))
        ]
        cases.append(
            (entry["QUESTION"], chunks, {"titles": [entry["QUESTION"]], "authors": [], "venues": []})
        )
    return cases


def _real_style() -> list[tuple[str, list[Chunk], dict[str, list[str]]]]:
    data = json.loads((FIXTURES / "real_style_docs.json").read_text(encoding="utf-8"))
    docs = {d["file"]: d for d in data["documents"]}
    known = {
        "titles": [d["title"] for d in docs.values()],
        "authors": [a for d in docs.values() for a in d["authors"]],
        "venues": [v for d in docs.values() for v in d["venue"]],
    }
    cases = []
    for q in data["questions"]:
        chunks = [
            Chunk(chunk_id=f"{f}-{k}", doc_id=f, file=f, title=docs[f]["title"], text=text, position=k)
            for f in q["files"]
            for k, text in enumerate(docs[f]["chunks"])
        ]
        cases.append((q["question"], chunks, known))
    return cases


CASES = _pubmedqa() + _real_style()


def test_the_set_has_forty_questions() -> None:
    assert len(CASES) == 40


def _bad(term: str, known: dict[str, list[str]]) -> str | None:
    low = term.lower()
    words = [w for w in re.findall(r"[a-z]+", low)]
    if any(low == t.lower() or (len(t.split()) >= 4 and t.lower() in low) for t in known["titles"]):
        return "title"
    if any(low == t.lower().split(":")[0] for t in known["titles"] if ":" in t) and len(term.split()) > 1:
        return "title"
    if set(words) & VENUE_WORDS or any(low in v.lower() and len(term.split()) > 1 for v in known["venues"]):
        return "venue"
    if any(a.lower() in low or low in a.lower() for a in known["authors"]):
        return "author"
    if words and all(w in SECTION_WORDS for w in words):
        return "section words"
    if SYMBOLS.search(term):
        return "symbols"
    return None


@pytest.mark.parametrize(("question", "chunks", "known"), CASES, ids=[c[0][:60] for c in CASES])
def test_no_hop_from_a_title_venue_author_list_section_words_or_symbols(
    question: str, chunks: list[Chunk], known: dict[str, list[str]]
) -> None:
    evidence = " ".join(c.text for c in chunks)
    asked = set(tokenize(question))
    for chunk in chunks:
        found = followup_terms(
            Candidate(chunk=chunk, score=1.0), question, evidence=evidence, per_passage=6, settings=SETTINGS
        )
        for term in found.terms:
            assert _bad(term, known) is None, f"{term!r} from {chunk.chunk_id}: {_bad(term, known)}"
            held = set(tokenize(chunk.text)) & asked
            assert set(tokenize(term)) & asked or len(held) >= SETTINGS.bridge_min_question_share * len(asked)
        if found.terms:
            hop = followup_subquestion(found.terms)
            assert _bad(hop.removeprefix("What is known about ").rstrip("?"), known) in (None, "symbols")
        if chunk.file or chunk.pmid:  # a file's or a paper's title is never followed
            assert chunk.title not in found.terms


def test_the_reasons_are_reported() -> None:
    question, chunks, _ = next(c for c in CASES if c[0].startswith("How much better is dense"))
    reasons = {}
    for chunk in chunks:
        found = followup_terms(Candidate(chunk=chunk, score=1.0), question, per_passage=6, settings=SETTINGS)
        reasons |= {s.text: s.reason for s in found.skipped}
    assert reasons["Dense Passage Retrieval for Open-Domain Question Answering"] == DOCUMENT_TITLE
    assert any(reason == DRIFT for reason in reasons.values())  # the road-salt notice bears on nothing asked


def test_no_follow_up_is_read_from_a_reference_list() -> None:
    text = (
        "Alexander R. Fabbri, Chien-Sheng Wu, Wenhao Liu, and Caiming Xiong. 2022. QAFactEval: Improved QA-based "
        "factual consistency evaluation. In Proceedings of NAACL. Dragomir Radev, Rui Zhang. 2021. Summeval: "
        "Re-evaluating summarization evaluation. Kalpesh Krishna, Yapei Chang. 2020. Longeval guidelines."
    )
    parent = Candidate(chunk=Chunk(chunk_id="r", doc_id="d", file="x.pdf", text=text), score=1.0)
    found = followup_terms(
        parent, "Which metrics evaluate factual consistency?", per_passage=6, settings=SETTINGS
    )
    assert found.terms == []
    assert {s.reason for s in found.skipped} == {REFERENCE_LIST}
