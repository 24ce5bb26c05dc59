"""A table row as an answer: the row that names what the question names and gives the value it asks for.

Readers write a table row as its cells joined by " | ", each cell ``header: value`` where the table has
headers ("Method: ChatGPT | Precision: 0.0507 | Recall: 0.3046"). A row never opens an answer (it is no
sentence: :mod:`deepcite.answer.lead_guard`), but for a question that asks for an amount or a name it may be
the only place the value is written, so the summary carries the row that fits best after its opening
sentence. A row *fits* a question when it holds a name of the question (a word with a capital or a digit,
"ChatGPT", "BM25", "PaSa-7b", matched case-insensitively) and a number the question does not hold; it fits
fully when a cell's header also shares a word with the question ("Precision: 0.0507" for "What precision
…"; "R@10" stands for "recall@10").

    row_fit("Method: ChatGPT | Precision: 0.0507 | Recall: 0.3046", "What precision does ChatGPT have?")  # 1.0
"""

from __future__ import annotations

import re

_CELL_SPLIT = re.compile(r"\s+\|\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[\w@.-]+")


def is_row(text: str) -> bool:
    """Whether ``text`` reads as a table row (cells joined by " | ")."""
    return text.count(" | ") >= 1


def _norm(word: str) -> str:
    word = word.lower().strip(".-")
    return re.sub(r"^recall@", "r@", re.sub(r"^precision@", "p@", word))


def row_fit(row: str, question: str) -> float:
    """1.0 when the row names a name of the question, a header shares a word with it and a cell holds a number
    the question does not; 0.5 with the name and the number alone; else 0 (module docstring)."""
    if not is_row(row):
        return 0.0
    asked = {_norm(w) for w in _WORD.findall(question)}
    names = {_norm(w) for w in _WORD.findall(question) if w[:1].isalpha() and not w.islower() and len(w) > 1}
    names |= {
        _norm(w) for w in _WORD.findall(question) if re.search(r"[a-z]", w, re.I) and re.search(r"\d", w)
    }
    names -= {
        _norm(w) for w in _WORD.findall(question)[:1]
    }  # the question's first word is capitalised anyway
    held = {_norm(w) for w in _WORD.findall(row)}
    if not names & held:
        return 0.0
    numbers = {n.replace(",", "") for n in _NUMBER.findall(question)}
    header_match = has_number = False
    for cell in _CELL_SPLIT.split(row):
        header, _, value = cell.rpartition(":")
        found = [n for n in _NUMBER.findall(value) if n.replace(",", "") not in numbers]
        if found:
            has_number = True
            if header and {_norm(w) for w in _WORD.findall(header)} & asked:
                header_match = True
    if not has_number:
        return 0.0
    return 1.0 if header_match else 0.5
