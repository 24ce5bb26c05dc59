"""Tokenising, stemming and sentence splitting shared by indexing, retrieval and answering."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

import Stemmer

# English stop words (the Lucene/Anserini list plus common question words), lower-case.
STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_SPLIT_INNER = re.compile(r"[-']")


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def raw_tokens(text: str) -> list[str]:
    """Lower-cased word tokens, hyphenated words split into parts, no stemming or stop-word removal."""
    out: list[str] = []
    for tok in _TOKEN_RE.findall(text.lower()):
        out.extend(p for p in _SPLIT_INNER.split(tok) if p)
    return out


def tokenize(text: str) -> list[str]:
    """The one BM25 tokenizer: lower-case, split, drop stop words, Snowball-stem (PyStemmer)."""
    words = [t for t in raw_tokens(text) if t not in STOP_WORDS]
    return _stemmer().stemWords(words)


def term_counts(text: str) -> Counter[str]:
    """Stemmed term frequencies of a text."""
    return Counter(tokenize(text))


# Sentence boundaries: end punctuation followed by space and an upper-case letter, digit, quote or bracket.
# Common abbreviations ("e.g.", "et al.", "Fig.", "vs.") do not end a sentence.
_ABBREV = (
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\bet al)(?<!\bFig)(?<!\bvs)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bNo)(?<!\bSt)"
)
_SENT_END = re.compile(_ABBREV + r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences, keeping citation markers such as ``[3]`` with their sentence."""
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return []
    return [s.strip() for s in _SENT_END.split(text) if s.strip()]
