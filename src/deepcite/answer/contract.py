"""The length contract of the written parts, for every writer: a quick summary of at most
``length.summary_max_sentences`` sentences and ``decision.summary_max_words`` words, a long answer of at most
``decision.long_answer_max_words`` words (citation markers are not words).

A summary keeps its sentences in order while both limits hold; a first sentence longer than the word limit
alone (a whole slide read as one sentence) is cut at its last clause boundary within the limit and ends with
"…", keeping its citations. A long answer loses sentences from the end of its longest section until it fits.

    bounded_summary("A [1]. B [2]. C [3].", max_sentences=2, max_words=120)   # "A [1]. B [2]."
"""

from __future__ import annotations

import re

from deepcite.answer.citations import CITATION_RE
from deepcite.text import split_sentences

# the citation markers and closing punctuation a cited sentence ends with: " [3][4]."
_TAIL = re.compile(r"((?:\s*\[[^\]]*\])+)?\s*([.!?…]*)\s*$")
_CLAUSE_END = re.compile(r"[,;:]$")
_WORD = re.compile(r"\w")


def word_count(text: str) -> int:
    """The words of ``text``, citation markers left out."""
    return sum(1 for word in CITATION_RE.sub(" ", text).split() if _WORD.search(word))


def _units(line: str) -> list[str]:
    """A line's sentences; a line that introduces what follows ("…; the closest passages say:") is one."""
    if line.rstrip().endswith(":"):
        return [line.strip()]
    return [s.strip() for s in split_sentences(line) if s.strip()]


def sentence_units(text: str) -> list[str]:
    """The sentences of a written part as a reader counts them, line by line (:func:`bounded_summary`'s units)."""
    return [unit for line in text.split("\n") if line.strip() for unit in _units(line)]


def clipped(sentence: str, max_words: int) -> str:
    """``sentence`` cut to at most ``max_words`` words, at its last clause boundary within them when there is
    one in their second half, ending with "…" and its citations."""
    if word_count(sentence) <= max_words:
        return sentence
    tail = _TAIL.search(sentence)
    markers = (tail.group(1) or "").strip() if tail else ""
    body = sentence[: tail.start()] if tail else sentence
    words = CITATION_RE.sub(" ", body).split()[:max_words]
    for end in range(len(words), max_words // 2, -1):
        if _CLAUSE_END.search(words[end - 1]):
            words = words[:end]
            break
    text = " ".join(words).rstrip(",;:")
    return f"{text} …{' ' + markers if markers else ''}"


def bounded_summary(text: str, max_sentences: int, max_words: int) -> str:
    """``text`` within the summary's contract (module docstring)."""
    kept: list[tuple[int, str]] = []  # (line number, sentence)
    words = 0
    for number, line in enumerate(text.split("\n")):
        for unit in _units(line) if line.strip() else []:
            n = word_count(unit)
            if kept and (len(kept) >= max_sentences or words + n > max_words):
                return _joined(kept)
            if not kept and n > max_words:
                unit, n = clipped(unit, max_words), max_words
            kept.append((number, unit))
            words += n
    return _joined(kept)


def _joined(kept: list[tuple[int, str]]) -> str:
    lines: dict[int, list[str]] = {}
    for number, unit in kept:
        lines.setdefault(number, []).append(unit)
    return "\n".join(" ".join(units) for units in lines.values())


def bounded_long_answer(text: str, max_words: int) -> str:
    """``text`` (``## heading`` sections, or one untitled) within ``max_words`` words (module docstring)."""
    if word_count(text) <= max_words:
        return text
    sections = []
    for block in text.split("\n\n"):
        head, _, body = block.partition("\n") if block.startswith("## ") else ("", "", block)
        sections.append((head, [s for line in body.split("\n") for s in _units(line) if line.strip()]))
    total = word_count(text)
    while total > max_words:
        longest = max(range(len(sections)), key=lambda k: (len(sections[k][1]), -k))
        if len(sections[longest][1]) <= 1:
            break
        total -= word_count(sections[longest][1].pop())
    return "\n\n".join(f"{head}\n{' '.join(body)}" if head else " ".join(body) for head, body in sections)
