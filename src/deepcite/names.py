"""Names in text: quoted phrases and capitalised spans (people, places, works), found without a model.

Shared by the research planner (bridge entities of evidence) and the entity graph built at ingest.
"""

from __future__ import annotations

import re

from deepcite.text import STOP_WORDS

_QUOTED = re.compile(r"[\"“]([^\"“”]{2,80})[\"”]")
# a run of capitalised words, allowing name-internal connectors ("Bank of America", "Leonardo da Vinci")
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|la|von|van|da|del|du)\s+)*[A-Z0-9][\w'’.-]*)*")
_CONNECTOR_TAIL = re.compile(r"(?:\s+(?:of|the|de|la|von|van|da|del|du))+$")
_WEAK_START = frozenset(
    [
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "he",
        "she",
        "it",
        "they",
        "his",
        "her",
        "its",
        "their",
        "this",
        "that",
        "these",
        "those",
        "there",
        "after",
        "before",
        "during",
        "when",
        "while",
        "however",
        "although",
        "born",
        "since",
        "from",
        "by",
        "with",
        "as",
        "is",
        "was",
        "are",
        "were",
    ]
)
_SENTENCE_END = re.compile(r"(?<=[a-z]{2}[.!?])\s+")
_SENTENCE_OPEN = re.compile(r"(?:[.!?][\"')\]]*|\n)\s*$")
_MID_CAPITAL = re.compile(r"(?<=[a-z0-9,;:)] )([A-Z][a-z]+)\b")
_MAX_NAME_WORDS = 6
_MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)


def _clean_name(raw: str) -> str:
    words = _CONNECTOR_TAIL.sub("", raw.rstrip(".,'’-")).split()
    while words and (words[0].lower() in _WEAK_START or words[0].lower() in _MONTHS):
        words = words[1:]
    while words and (words[-1].isdigit() or words[-1].lower() in _WEAK_START):
        words = words[:-1]
    name = " ".join(words)
    if not name or len(words) > _MAX_NAME_WORDS:
        return ""
    if len(words) == 1 and (len(name) < 3 or name.lower() in STOP_WORDS or name.lower() in _MONTHS):
        return ""
    return name


def names_in(text: str) -> list[str]:
    """Quoted phrases and capitalised names in ``text``, in order of appearance, without repeats.

    A name never spans a sentence end ("… Dimsdale. It was" gives "Dimsdale"), while initials stay
    inside it ("Roger O. Egeberg").
    """
    found: list[tuple[int, str]] = [(m.start(), m.group(1).strip()) for m in _QUOTED.finditer(text)]
    inner = _mid_sentence_capitals(text)
    for m in _NAME.finditer(text):
        start = m.start()
        for piece in _SENTENCE_END.split(m.group(0)):
            name = _clean_name(piece)
            if name and not (_opens_sentence(text, start) and _common_word(name, inner)):
                found.append((start, name))
            start += len(piece) + 1
    found.sort(key=lambda item: item[0])
    out: list[str] = []
    seen: set[str] = set()
    for _, name in found:
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return out


def _opens_sentence(text: str, start: int) -> bool:
    return not text[:start].strip() or bool(_SENTENCE_OPEN.search(text[:start]))


def _mid_sentence_capitals(text: str) -> set[str]:
    """Capitalised words that stand inside a sentence somewhere in ``text``: names, not grammar."""
    return {m.group(1) for m in _MID_CAPITAL.finditer(text)}


def _common_word(name: str, inner: set[str]) -> bool:
    """A single ordinary word capitalised only because it opens a sentence ("People", "Patients"): no
    capital or digit inside it, and never capitalised inside a sentence of the same text."""
    return " " not in name and name[1:].islower() and name not in inner
