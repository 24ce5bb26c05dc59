"""Entities found in evidence (titles, quoted names, capitalised names): the bridges to a next hop."""

from __future__ import annotations

from collections.abc import Iterable

from deepcite.models import Candidate
from deepcite.names import names_in
from deepcite.text import STOP_WORDS, raw_tokens


def content_words(text: str) -> set[str]:
    """The words of ``text`` that are not stop words (lower-case)."""
    return {t for t in raw_tokens(text) if t not in STOP_WORDS}


def bridge_entities(
    evidence: Iterable[Candidate], question: str, *, exclude: Iterable[str] = (), per_passage: int
) -> list[str]:
    """Entities from ``evidence`` (best first) that the question does not already name.

    For each passage: its title when the question does not name it, then up to ``per_passage``
    names from its text. An entity whose content words all appear in the question or in ``exclude``
    (entities already used) is skipped.
    """
    asked = content_words(question)
    used = {e.lower() for e in exclude}
    out: list[str] = []

    def consider(name: str) -> bool:
        words = content_words(name)
        if not words or words <= asked or name.lower() in used:
            return False
        used.add(name.lower())
        out.append(name)
        return True

    for cand in evidence:
        title = cand.chunk.title.strip()
        if title:
            consider(title)
        taken = 0
        for name in names_in(cand.chunk.text):
            if taken >= per_passage:
                break
            if title and name.lower() == title.lower():
                continue
            taken += consider(name)
    return out
