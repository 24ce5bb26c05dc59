"""A patient's words read as words: contractions and possessives kept whole, lay phrases read clinically.

deepcite's one tokenizer (:func:`deepcite.text.tokenize`) splits at apostrophes, so "can't sleep" reads
"can", "t", "sleep" and "it's for my daughter" leaves a stray "s". The finder reads a request with
:class:`Reading` instead: the words as written ("can't", "it's", "daughter's", a curly apostrophe made
straight), each word's meaning ("cannot", "it is", "daughter") from the catalogue's ``contractions`` (an
``'s`` that is no contraction is a possessive), and the catalogue's ``lay_terms`` ("hurts" -> "pain",
"tummy" -> "abdominal") applied to the meanings. Trigger phrases and the request are keyed by the same
reading, so both sides agree; the phrasal particles of ``particles`` ("run down", "throw up") are kept so
"running" no longer reads as "run down". No medical knowledge lives here: every table is catalogue data.

    reading = catalogue.reading
    reading.written("I can't sleep")            # ['i', "can't", 'sleep']
    reading.meaning("my daughter's knee hurts") # ['my', 'daughter', 'knee', 'pain']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from deepcite.text import STOP_WORDS, folded, tokenize

APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "\u00b4": "'"})
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)*")
_HYPHEN = re.compile(r"(?<=[a-z0-9])-(?=[a-z0-9])")


def written_words(text: str) -> list[str]:
    """The words of ``text`` as written, lower-case: apostrophes kept inside a word ("can't", "it's",
    "daughter's"; a curly one made straight), hyphenated words split into parts ("follow-up")."""
    text = _HYPHEN.sub(" ", folded(text.translate(APOSTROPHES)).lower())
    return [w.strip("'") for w in _WORD.findall(text) if w.strip("'")]


@dataclass(frozen=True)
class Reading:
    """How the finder reads a request's words (tables from the catalogue)."""

    contractions: Mapping[str, str]  # "can't" -> "cannot"
    lay_terms: Mapping[str, str]  # lay word or phrase -> clinical words, on meanings
    particles: frozenset[str]  # stop words a trigger phrase keeps ("down" in "run down")

    @staticmethod
    def written(text: str) -> list[str]:
        """The words as written (:func:`written_words`)."""
        return written_words(text)

    def word_meaning(self, word: str) -> list[str]:
        """What one written word means: a contraction's expansion, a possessive's noun, else the word."""
        if word in self.contractions:
            return self.contractions[word].split()
        if word.endswith("'s"):
            return [word[:-2]]
        return [part for part in word.split("'") if part]

    @cached_property
    def _lay(self) -> dict[tuple[str, ...], list[str]]:
        return {
            tuple(lay.lower().split()): clinical.lower().split() for lay, clinical in self.lay_terms.items()
        }

    @cached_property
    def _longest_lay(self) -> int:
        return max((len(k) for k in self._lay), default=0)

    def meaning(self, text: str) -> list[str]:
        """The request's words as meant: contractions expanded, possessives read as their noun, then the lay
        terms replaced by their clinical words (longest phrase first)."""
        words = [m for w in written_words(text) for m in self.word_meaning(w)]
        out: list[str] = []
        i = 0
        while i < len(words):
            for size in range(min(self._longest_lay, len(words) - i), 0, -1):
                clinical = self._lay.get(tuple(words[i : i + size]))
                if clinical is not None:
                    out.extend(clinical)
                    i += size
                    break
            else:
                out.append(words[i])
                i += 1
        return out

    def meant_text(self, text: str) -> str:
        """:meth:`meaning` as one string: what BM25 and the semantic stage read."""
        return " ".join(self.meaning(text))

    def key(self, text: str) -> list[str]:
        """The stemmed key triggers and requests are matched by: :meth:`meaning`, stop words dropped except
        the particles, each word stemmed as :func:`deepcite.text.tokenize` stems it."""
        return [token for token, _ in self.keyed(text)]

    def keyed(self, text: str) -> list[tuple[str, int]]:
        """:meth:`key` with, for each token, the position in :meth:`meaning` of the word it comes from."""
        out: list[tuple[str, int]] = []
        for at, word in enumerate(self.meaning(text)):
            if word in self.particles:
                out.append((word, at))
            elif word not in STOP_WORDS:
                out.extend((token, at) for token in tokenize(word))
        return out

    def cue_key(self, text: str, skipped: frozenset[str]) -> list[str]:
        """The key cues (urgency, population, preference) are matched by: :meth:`meaning` with stop words kept
        ("hurt myself") but ``skipped`` words dropped ("my face is drooping" meets "face drooping"), each word
        stemmed ("killing myself" meets "kill myself")."""
        return [token for token, _ in self.cue_keyed(text, skipped)]

    def cue_keyed(self, text: str, skipped: frozenset[str]) -> list[tuple[str, int]]:
        """:meth:`cue_key` with, for each token, the position in :meth:`meaning` of the word it comes from."""
        return [((tokenize(w) or [w])[0], at) for at, w in enumerate(self.meaning(text)) if w not in skipped]
