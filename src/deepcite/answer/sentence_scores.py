"""The records and small pure functions of the extractive writer (:mod:`deepcite.answer.extractive`): an
evidence sentence, the scores of every sentence for every target, the question's parts and sides, the
weighted term overlap, and the cited text a choice of sentences is written as."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from deepcite.answer.prompts import UNKNOWN
from deepcite.models import AspectType, QueryAspect
from deepcite.text import split_sentences

# a question answered by yes or no opens with an auxiliary verb
YES_NO = re.compile(
    r"^\s*(?:does|do|did|is|are|was|were|can|could|should|would|will|has|have|had|may|might|must)\b", re.I
)
_WH = re.compile(r"^\s*(?:what|how|why|when|where|which|who|whom|whose)\b", re.I)
# a pronoun that stands for something said before: "it", "they", "the latter"; not "this", "these", "such",
# which are most often determiners of a noun that names its subject ("This study enrolled …")
_REFERRING = frozenset("it its it's itself they them their he she his her latter former".split())
# a sentence that states a contrast between two sides
CONTRAST = re.compile(
    r"\b(?:compared|than|versus|vs\.?|differ\w*|whereas|while|both|neither|similar)\b", re.I
)


@dataclass(frozen=True)
class EvidenceSentence:
    """One quotable evidence sentence with what the writer knows of it."""

    text: str
    cite: int  # display id of its chunk
    position: int  # order within the evidence, for deterministic ties
    terms: frozenset[str]
    finding: float  # how much it reports a finding, in [0, 1]
    study: str  # the source it comes from (PMID, DOI or document id)
    title: str  # its source's title
    decisive: bool  # states an effect, a comparison or a test
    lead_fault: str | None = None  # why it may not open a summary (answer/lead_guard.py), None when it may
    caption: str = ""  # a table row's table caption (answer/table_rows.py), else ""
    role_known: bool = (
        True  # its section says what it does (results, methods, …); False for "5.2 Setup", none
    )
    # … and that section is a structured abstract's label ("BACKGROUND", "MATERIALS AND METHODS"), not a document's
    # heading ("1 Introduction", "4.1.3 Countermeasures")
    role_labelled: bool = False
    # one of the first sentences of a document's first passage: its front matter (title, byline, date line)
    opening: bool = False
    # the position of the sentence just before it in its passage, when that one is quotable too
    previous: int | None = None
    # the question its source asks right before it (a FAQ's question, a slide's "Research question: …?"), which it
    # answers; "" when none does
    asked: str = ""


@dataclass(frozen=True)
class SentenceScores:
    """Every evidence sentence's scores for every target of one answer part (extractive.py's docstring)."""

    sentences: list[EvidenceSentence]
    vectors: np.ndarray  # (sentences, dim)
    support: np.ndarray  # (sentences, targets)
    relevance: np.ndarray  # (sentences, targets): support from the threshold (0) to the best sentence's (1)
    value: np.ndarray  # (sentences, targets): relevance blended with the finding score
    findings_first: np.ndarray  # (targets,): the target asks for findings (yes/no, effect, comparison)
    alone: np.ndarray | None = (
        None  # (sentences, targets): own support (no study's share) relative to the best
    )
    cue: np.ndarray | None = None  # (sentences,): the answer-type cue for the question (target 0), if any
    # for a question asking for an amount: the figures each sentence states that the question does not hold;
    # a sentence stating a figure no chosen sentence states is not redundant (a result on another data set)
    figures: list[frozenset[str]] | None = None
    # (sentences, targets): each sentence's own fit to each target, lexical and embedding, without its study's
    # share: what the answer's decision reads (answer/decision.py)
    fit: np.ndarray | None = None
    # the sentence reader's probability that each sentence of the given indices states the answer to target 0
    # (answer/reader.py); None when the reader is off
    reading: Callable[[Sequence[int]], np.ndarray] | None = None


# "it" that stands for nothing said before but for the clause after it: "It was the goal of this study to …",
# "It is likely that …"
_EXTRAPOSED = re.compile(
    r"^\s*it\s+(?:is|was|has been|had been|seems|seemed|appears|appeared|remains)\b[^,.;]{0,80}?"
    r"\b(?:to|that|whether|if)\b",
    re.I,
)


def refers_back(text: str, words: int) -> bool:
    """Whether one of the first ``words`` words of ``text`` is a pronoun that stands for something said before it
    ("Disassembling it, it's very minimal - just 87 bytes!"; not the "it" of "It was our aim to …")."""
    if _EXTRAPOSED.match(text):
        return False
    return any(w in _REFERRING for w in re.findall(r"[\w']+", text.lower().replace("’", "'"))[:words])


def aspect_target(aspect: QueryAspect) -> str:
    """An aspect as a target to score sentences against: its words and keywords."""
    return " ".join([aspect.aspect, *aspect.keywords])


def heading(title: str) -> str:
    """A section title as a heading: capitalised, and asked as a question when it is one."""
    title = title.strip()
    asked = YES_NO.match(title) or _WH.match(title)
    return f"{title[:1].upper()}{title[1:]}" + ("?" if asked and not title.endswith("?") else "")


def findings_first(text: str, kind: AspectType | None) -> bool:
    """Whether a target asks for findings (a yes/no question, an effect, a cause, an evaluation, a
    comparison) rather than a description (what something is, how it is done or used)."""
    return bool(YES_NO.match(text)) or kind in (
        AspectType.EVALUATION,
        AspectType.CAUSAL,
        AspectType.COMPARISON,
    )


def comparison_sides(aspects: Sequence[QueryAspect]) -> list[QueryAspect]:
    """The two side aspects that follow a comparison aspect (the planner's order), else none."""
    for k, aspect in enumerate(aspects):
        if aspect.aspect_type is AspectType.COMPARISON:
            sides = [a for a in aspects[k + 1 : k + 3] if a.aspect_type is AspectType.DEFINITION]
            return sides if len(sides) == 2 else []
    return []


def term_weights(sentences: Sequence[EvidenceSentence], idf: bool) -> dict[str, float]:
    """Each term's weight within this evidence: ``log(1 + N / df)`` over its N sentences when ``idf``
    (a term every sentence holds, such as the topic itself, says little about which sentence answers a
    part), else an empty mapping (every term weighs 1)."""
    if not idf:
        return {}
    df: dict[str, int] = {}
    for x in sentences:
        for term in x.terms:
            df[term] = df.get(term, 0) + 1
    n = len(sentences)
    return {term: math.log(1.0 + n / count) for term, count in df.items()}


def overlap(sentence_terms: frozenset[str], target_terms: frozenset[str], weights: dict[str, float]) -> float:
    """Weighted share of the target's terms the sentence contains (a term the evidence lacks weighs most)."""
    if not target_terms:
        return 0.0
    most = max(weights.values(), default=1.0)
    total = sum(weights.get(t, most) for t in target_terms)
    return sum(weights.get(t, most) for t in sentence_terms & target_terms) / total


_CLOSING = re.compile(r"(.*?)([.!?]*)$", re.S)
_MARKER = re.compile(r"\[\d+\]")


def cite(text: str, display_id: int) -> str:
    """The sentence with ``[id]`` before its closing punctuation, all of it ("…only [1]...", not
    "…only. [1]."); a sentence that :func:`deepcite.text.split_sentences` (the citation check's splitter)
    reads as several ("Bib. linking (GROBID) …") is cited piece by piece, so no piece is left uncited."""
    pieces = split_sentences(text)
    if len(pieces) > 1:
        return " ".join(cite(piece, display_id) for piece in pieces)
    cited = _cited(text, display_id)
    # the marker may itself make the splitter see a sentence end inside: a table row whose cell ends with a
    # full stop ("… the endpoint certificate. | ✓ [2]." reads as "… certificate." and "| ✓ [2].")
    parts = split_sentences(cited)
    if len(parts) > 1:
        return " ".join(p if _MARKER.search(p) else _cited(p, display_id) for p in parts)
    return cited


def _cited(text: str, display_id: int) -> str:
    """``text`` with ``[id]`` before its closing punctuation."""
    body, end = _CLOSING.match(text.rstrip()).groups()  # type: ignore[union-attr]
    if end == "..":  # a doubled full stop ("alloy only..", a source's typo) reads as two sentences
        end = "."
    return f"{body} [{display_id}]{end or '.'}"


def write(scores: SentenceScores, picked: list[int]) -> str:
    """The chosen sentences, each cited; the unknown phrase when none is chosen."""
    if not picked:
        return UNKNOWN
    return " ".join(cite(scores.sentences[i].text, scores.sentences[i].cite) for i in picked)
