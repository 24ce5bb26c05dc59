"""Text figures of an answer: the text without citations (:func:`plain`), ROUGE-L, token F1 of what the question
does not say, repeated headings, the share of "Unknown" sentences, and the names a fallback is counted under."""

from __future__ import annotations

import re
from collections import Counter

from rouge_score import rouge_scorer
from rouge_score.scoring import Score

from deepcite.answer.citations import CITATION_RE
from deepcite.answer.prompts import INSUFFICIENT, UNKNOWN
from deepcite.text import split_sentences, tokenize

_ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def plain(text: str) -> str:
    """The text without citation markers, headings and the unknown phrases."""
    text = CITATION_RE.sub("", text).replace(UNKNOWN, "").replace(INSUFFICIENT, "")
    return re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s+", " ", text)).strip()


def rouge_l(text: str, reference: str) -> Score:
    """ROUGE-L of ``text`` (citations removed, :func:`plain`) against ``reference``: precision, recall and
    ``fmeasure``, as a summary is scored."""
    return _ROUGE.score(reference, plain(text))["rougeL"]


def novel_f1(prediction: str, reference: str, question: str) -> float:
    """Token F1 of stemmed content words after removing every word of the question from both sides."""
    asked = set(tokenize(question))
    pred = Counter(t for t in tokenize(prediction) if t not in asked)
    ref = Counter(t for t in tokenize(reference) if t not in asked)
    common = sum((pred & ref).values())
    if not common:
        return 0.0
    precision, recall = common / sum(pred.values()), common / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def part_kind(part: str) -> str:
    """A part's name in ``written`` without the sub-question a sub-answer is for."""
    return part.split(":", 1)[0]


def reason_kind(reason: str | None) -> str:
    """A fallback reason without what differs per question (a guard's quoted text, the figures)."""
    if not reason:
        return "no reason given"
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "…", reason)
    return re.sub(r"\d+(\.\d+)?", "N", text)[:120]


_HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def repeated_heading(text: str) -> bool:
    """Whether a markdown heading occurs twice in ``text``."""
    titles = [h.strip().lower() for h in _HEADING.findall(text)]
    return len(titles) != len(set(titles))


def unknown_share(text: str) -> float:
    """The share of ``text``'s sentences (headings left out) that are the unknown phrase."""
    sentences = [s for s in split_sentences(_HEADING.sub("", text)) if s.strip()]
    if not sentences:
        return 0.0
    return sum(UNKNOWN in s for s in sentences) / len(sentences)
