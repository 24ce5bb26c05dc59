"""Fixtures for the answer-stage tests: a hand-written evidence pack and a deterministic test embedder."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pytest

from deepcite.answer.context import ResponseContext
from deepcite.config import AnswerSettings
from deepcite.models import AspectCoverage, AspectType, Candidate, Chunk, EvidencePack, QueryAspect
from deepcite.text import tokenize

QUESTION = "Does atrial fibrillation increase the risk of stroke, and how is it treated?"
SQ_RISK = "How much does atrial fibrillation raise stroke risk?"
SQ_DRUGS = "Which drugs prevent stroke in atrial fibrillation?"

# (chunk id, title, pmid, doi, section, text, score): short abstracts written for these tests.
PASSAGES: list[tuple[str, str, str | None, str | None, str | None, str, float]] = [
    (
        "c1",
        "Atrial fibrillation and stroke",
        "1001",
        None,
        "Results",
        "Atrial fibrillation increases the risk of ischemic stroke about fivefold. "
        "The excess stroke risk rises with age and with a prior stroke.",
        0.90,
    ),
    (
        "c2",
        "Anticoagulation in atrial fibrillation",
        None,
        "10.1000/af.2",
        "Abstract",
        "Warfarin reduces stroke risk by about two thirds in patients with atrial fibrillation [12]. "
        "Apixaban prevented more strokes than warfarin and caused less bleeding.",
        0.85,
    ),
    (
        "c3",
        "Bleeding on anticoagulants",
        "1003",
        None,
        None,
        "Major bleeding is the main harm of oral anticoagulation. "
        "Intracranial bleeding was less frequent with direct oral anticoagulants than with warfarin.",
        0.70,
    ),
    (
        "c4",
        "Rate control",
        "1004",
        None,
        "Discussion",
        "Beta blockers are used to control the heart rate in atrial fibrillation. "
        "Rate control and rhythm control did not differ in mortality.",
        0.60,
    ),
    (
        "c5",
        "A duplicate report",
        None,
        None,
        None,
        "Atrial fibrillation increases the risk of ischemic stroke roughly fivefold.",
        0.50,
    ),
    (
        "c6",
        "Vitamin D and bone",
        "1006",
        None,
        None,
        "Vitamin D supplementation improves bone mineral density in older adults.",
        0.20,
    ),
    (
        "c7",
        "Stroke severity",
        "1007",
        None,
        "Abstract",
        "Strokes in patients with atrial fibrillation are often severe and disabling.",
        0.40,
    ),
]

ASPECTS = [
    QueryAspect(
        aspect="stroke risk in atrial fibrillation",
        aspect_type=AspectType.CAUSAL,
        importance=0.9,
        keywords=["stroke", "risk"],
    ),
    QueryAspect(
        aspect="anticoagulant treatment",
        aspect_type=AspectType.APPLICATION,
        importance=0.8,
        keywords=["warfarin", "apixaban", "anticoagulation"],
    ),
    QueryAspect(
        aspect="bleeding harms", aspect_type=AspectType.EVALUATION, importance=0.5, keywords=["bleeding"]
    ),
]


def candidate(chunk_id: str, score: float | None = None) -> Candidate:
    """The test passage ``chunk_id`` as a candidate (its own score unless given)."""
    cid, title, pmid, doi, section, text, own = next(p for p in PASSAGES if p[0] == chunk_id)
    chunk = Chunk(
        chunk_id=cid, doc_id=f"doc-{cid}", text=text, title=title, pmid=pmid, doi=doi, section=section
    )
    return Candidate(chunk=chunk, score=own if score is None else score)


def make_pack(
    final: Sequence[str] = ("c1", "c2", "c3", "c4", "c5", "c6"),
    subquestions: dict[str, Sequence[str]] | None = None,
    question: str = QUESTION,
) -> EvidencePack:
    """An evidence pack over the test passages (default: two sub-questions, c7 only in the first)."""
    if subquestions is None:
        subquestions = {SQ_RISK: ("c1", "c5", "c7"), SQ_DRUGS: ("c2", "c3")}
    return EvidencePack(
        question=question,
        final_evidence=[candidate(c) for c in final],
        coverage=AspectCoverage(aspects=ASPECTS),
        subquery_evidence={q: [candidate(c) for c in ids] for q, ids in subquestions.items()},
    )


class HashingEmbedder:
    """A deterministic test embedder (Embedder protocol): hashed bag of stemmed terms, unit length.

    Cosine between two texts grows with their shared terms, which is all the answer-stage unit tests
    need; one slow test runs the real MiniLM model.
    """

    dim = 512
    name = "test-hashing"

    def __init__(self) -> None:
        self.calls = 0
        self.encoded = 0
        self.passages = 0

    def encode(self, texts: Sequence[str], *, kind: Literal["query", "passage"] = "passage") -> np.ndarray:
        self.calls += 1
        self.encoded += len(texts)
        self.passages += len(texts) if kind == "passage" else 0
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in tokenize(text):
                out[row, zlib.crc32(term.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


@pytest.fixture
def settings() -> AnswerSettings:
    return AnswerSettings()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def pack() -> EvidencePack:
    return make_pack()


@pytest.fixture
def ctx(pack: EvidencePack, settings: AnswerSettings) -> ResponseContext:
    return ResponseContext.from_pack(pack, settings, request_id="req-1")
