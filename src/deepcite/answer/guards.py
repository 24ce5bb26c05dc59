"""Checks an LLM-written answer part passes before it is shipped: an LLM never makes an answer worse.

Two checks, each falling back to the offline writer for that part alone (settings ``answer.guards``):

- **structure** (:func:`structure_problem`, on the model's raw text): no heading twice, no section left empty,
  no line or sentence of at least ``repeat_min_words`` words twice (the unknown phrase aside: it may stand
  under several headings), and no more than ``length_factor`` times the sentences the prompt asked for (nor
  ``max_sentence_chars`` characters per allowed sentence). A small model that loops ("## treatment" 341
  times) fails here.
- **grounding** (:func:`grounding_problem`, after the citation check): the share of the part's sentences that
  kept a citation must reach ``min_kept_share``; a part that would be mostly "Unknown based on provided
  sources." is replaced by the offline writer's when that keeps a larger share.

Usage::

    problem = structure_problem(raw, max_sentences=5, settings=settings.answer.guards)
    if problem: ...  # write the part offline, and say why
"""

from __future__ import annotations

import math
import re
from collections import Counter

from deepcite.answer.citations import CITATION_RE, CitationCheck
from deepcite.answer.prompts import INSUFFICIENT, UNKNOWN
from deepcite.config.answer import AnswerGuardSettings
from deepcite.text import split_sentences

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.*?)[\s#]*$")
_BOLD_LINE = re.compile(r"^\s*\*\*([^*]+)\*\*\s*:?\s*$")
_EXEMPT = {re.sub(r"\W+", " ", p.lower()).strip() for p in (UNKNOWN, INSUFFICIENT)}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", CITATION_RE.sub("", text).lower())).strip()


def _heading(line: str) -> str | None:
    found = _HEADING.match(line) or _BOLD_LINE.match(line)
    return _norm(found.group(1)) if found else None


def _repeated(texts: list[str], min_words: int) -> tuple[str, int] | None:
    counts = Counter(t for t in texts if len(t.split()) >= min_words and t not in _EXEMPT)
    top = counts.most_common(1)
    return top[0] if top and top[0][1] > 1 else None


def structure_problem(text: str, *, max_sentences: int, settings: AnswerGuardSettings) -> str | None:
    """Why the raw text ``text`` is not fit to ship (module doc), or None when it is."""
    headings: list[str] = []
    bodies: list[int] = []  # body lines under each heading
    lines: list[str] = []
    sentences: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            continue
        title = _heading(line)
        if title is not None:
            headings.append(title)
            bodies.append(0)
            continue
        if bodies:
            bodies[-1] += 1
        lines.append(_norm(line))
        sentences.extend(_norm(s) for s in split_sentences(line))
    counts = Counter(headings).most_common(1)
    if counts and counts[0][1] > 1:
        return f"heading {counts[0][0]!r} repeated {counts[0][1]} times"
    empty = [h for h, n in zip(headings, bodies, strict=True) if n == 0]
    if empty:
        return f"section {empty[0]!r} is empty"
    for what, texts in (("line", lines), ("sentence", sentences)):
        repeated = _repeated(texts, settings.repeat_min_words)
        if repeated is not None:
            return f"{what} {repeated[0][:80]!r} repeated {repeated[1]} times"
    allowed = math.ceil(settings.length_factor * max(1, max_sentences))
    if len(sentences) > allowed:
        return f"{len(sentences)} sentences where at most {allowed} were allowed"
    if len(text) > allowed * settings.max_sentence_chars:
        return f"{len(text)} characters where at most {allowed * settings.max_sentence_chars} were allowed"
    if not sentences:
        return "no sentence"
    return None


def kept_share(check: CitationCheck) -> float:
    """The share of a checked text's sentences that kept a citation (0 for a text with none)."""
    return check.cited / check.sentences if check.sentences else 0.0


def grounding_problem(check: CitationCheck, settings: AnswerGuardSettings) -> str | None:
    """Why a checked LLM part is mostly unsupported (module doc), or None when enough of it kept a citation."""
    share = kept_share(check)
    if share >= settings.min_kept_share:
        return None
    return (
        f"{check.cited} of {check.sentences} sentences kept a citation, under "
        f"answer.guards.min_kept_share={settings.min_kept_share:g}"
    )
