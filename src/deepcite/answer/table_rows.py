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

A row also reads with its table's caption (:func:`row_captions`: the caption right after its run of rows, as
papers place a table's caption, else the one right before), so that of two tables with the same rows the one
"Results on RealScholarQuery" answers a question about RealScholarQuery (:func:`row_coverage`), and one whose
caption names only other things ("AutoScholarQuery") does not (:func:`caption_mismatch`).
"""

from __future__ import annotations

import re

from deepcite.models import Chunk, TextKind
from deepcite.text import tokenize

_CELL_SPLIT = re.compile(r"\s+\|\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[\w@.-]+")
# a yes/no cell names no row's subject (tokenize already drops stop words such as "the" or "of")
_ANSWER_VALUES = frozenset({"yes", "no"})


def is_row(text: str) -> bool:
    """Whether ``text`` reads as a table row (cells joined by " | ")."""
    return text.count(" | ") >= 1


def row_captions(chunk: Chunk) -> dict[str, str]:
    """Each table row of ``chunk`` (by its text) with its table's caption: the caption sentence right after the
    run of rows it is in, else the one right before; rows with neither are left out."""
    if chunk.sentence_kinds is None or chunk.sentence_spans is None:
        return {}
    texts = [chunk.text[a:b] for a, b in chunk.sentence_spans]
    kinds = chunk.sentence_kinds
    out: dict[str, str] = {}
    i = 0
    while i < len(kinds):
        if kinds[i] is not TextKind.TABLE:
            i += 1
            continue
        j = i
        while j < len(kinds) and kinds[j] is TextKind.TABLE:
            j += 1
        after = texts[j] if j < len(kinds) and kinds[j] is TextKind.CAPTION else None
        before = texts[i - 1] if i > 0 and kinds[i - 1] is TextKind.CAPTION else None
        caption = after or before
        if caption:
            out.update((texts[k], caption) for k in range(i, j))
        i = j
    return out


def row_coverage(row: str, caption: str, question: str) -> float:
    """The share of the question's terms (:func:`deepcite.text.tokenize`) the row and its caption hold."""
    asked = set(tokenize(question))
    if not asked:
        return 0.0
    return len(asked & set(tokenize(f"{row} {caption}"))) / len(asked)


def caption_mismatch(caption: str, question: str, row: str) -> bool:
    """Whether a row's caption is about something else: it names things (a word with an inner capital or a
    digit: "RealScholarQuery", "GPT-4o", "BM25"), the question names none of them, and the question names
    something neither the row nor its caption holds ("… on the AutoScholarQuery test set" against "Table 6:
    Results on RealScholarQuery"). A caption naming the whole work ("Table 11: Firewall configuration for
    OWELK") is no other table's when the row holds all the question names ("Kibana", "IBM QRadar")."""
    named, asked = _names(caption), _names(question)
    return bool(named) and not named & asked and bool(asked - _held(_WORD.findall(f"{row} {caption}")))


def _names(text: str) -> set[str]:
    return {
        _norm(w)
        for w in _WORD.findall(text)
        if re.search(r"[A-Za-z]", w) and (any(c.isupper() for c in w[1:]) or re.search(r"\d", w))
    }


def _held(words: list[str]) -> set[str]:
    """Words as a row holds them, a hyphenated name also by its leading parts ("pasa-7b-ensemble" holds
    "pasa-7b"): a question naming "PaSa-7b ensemble" names the row "PaSa-7b-ensemble"."""
    out = set()
    for word in words:
        parts = _norm(word).split("-")
        out.update("-".join(parts[: k + 1]) for k in range(len(parts)))
    return out


def _norm(word: str) -> str:
    word = word.lower().strip(".-")
    return re.sub(r"^recall@", "r@", re.sub(r"^precision@", "p@", word))


def _named_by_a_value(row: str, question: str) -> bool:
    """Whether a cell's whole value is words of the question, as stems ("Age Band: Thirties" for "… speakers in their
    thirties", "Split: Train" for "… the training split", "Data Structure: map" for "std::map"): the row's
    subject named as the question names it, in lower case too."""
    asked = set(tokenize(question))
    for cell in _CELL_SPLIT.split(row):
        value = cell.rpartition(":")[2].strip()
        stems = tokenize(value)
        if (
            stems
            and set(stems) <= asked
            and value.lower() not in _ANSWER_VALUES
            and re.search("[a-z]", value, re.I)
        ):
            return True
    return False


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
    held = _held(_WORD.findall(row))
    if not (names & held or _named_by_a_value(row, question)):
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
