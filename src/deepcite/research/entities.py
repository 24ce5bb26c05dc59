"""The content words of a name or question: what "the question already names it" is judged on."""

from __future__ import annotations

from deepcite.text import STOP_WORDS, folded, raw_tokens


def content_words(text: str) -> set[str]:
    """The words of ``text`` that are not stop words (lower-case, accents folded as the index folds them)."""
    return {t for t in raw_tokens(folded(text)) if t not in STOP_WORDS}
