"""What a passage mentions and what a question names, as entity keys the graph can join on.

An entity is a name normalised to a key (:func:`entity_key`): accents, case, punctuation, a leading article
and a title's parenthesised qualifier ("Green (song)") are dropped, so a passage that writes "Green" and a
document titled "Green (song)" meet at one node. A passage mentions its document's title (its canonical
entity), the quoted phrases and capitalised names :func:`deepcite.names.names_in` finds, and its keyphrases
(content-word runs that recur in a passage without a title). A question names the same kinds of
names plus every short content-word run of it, so "the performer of green" still reaches the entity "Green".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from deepcite.models import Chunk
from deepcite.names import names_in
from deepcite.text import STOP_WORDS, accent_free, raw_tokens

_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def unqualified(name: str) -> str:
    """``name`` without the disambiguation a title may carry behind it: "Green (song)" is "Green"."""
    return _QUALIFIER.sub("", name)


@lru_cache(maxsize=65_536)  # names recur across passages ("United States"): normalise each once
def entity_key(name: str) -> str:
    """The join key of a name: accent-free lower-case words, no article in front, no "(qualifier)" behind,
    no possessive ("Austria's" is "austria")."""
    name = _POSSESSIVE.sub("", unqualified(name))
    key = " ".join(raw_tokens(accent_free(name)))
    return _LEADING_ARTICLE.sub("", key)


@dataclass(frozen=True)
class Mention:
    """One entity a passage mentions: its display name, its key, and whether it is the passage's own title."""

    name: str
    key: str
    is_title: bool = False


def _keyphrases(text: str, max_words: int, min_count: int) -> list[str]:
    """Runs of 2..``max_words`` content words (no stop word inside) that occur ``min_count`` times or more."""
    runs: list[list[str]] = [[]]
    for token in raw_tokens(text):
        if token in STOP_WORDS or token.isdigit():
            runs.append([])
        else:
            runs[-1].append(token)
    counts: Counter[str] = Counter()
    for run in runs:
        for n in range(2, max_words + 1):
            for i in range(len(run) - n + 1):
                counts[" ".join(run[i : i + n])] += 1
    return [phrase for phrase, count in counts.items() if count >= min_count]


def passage_mentions(
    chunk: Chunk, *, max_entities: int, keyphrase_words: int, keyphrase_min_count: int
) -> list[Mention]:
    """The entities ``chunk`` mentions, its title first, at most ``max_entities``: its names, and for a
    passage without a title (no canonical entity) its keyphrases too."""
    out: dict[str, Mention] = {}
    title = chunk.title.strip()
    if title and (key := entity_key(title)):
        out[key] = Mention(title, key, is_title=True)
    names = names_in(chunk.text)
    if not title:
        names += _keyphrases(chunk.text, keyphrase_words, keyphrase_min_count)
    for name in names:
        if len(out) >= max_entities:
            break
        key = entity_key(name)
        if _names_an_entity(key) and key not in out:
            out[key] = Mention(name, key)
    return list(out.values())


def _names_an_entity(key: str) -> bool:
    return bool(key) and not all(t in STOP_WORDS for t in key.split())


def name_keys(text: str, *, max_entities: int) -> frozenset[str]:
    """The keys of the names ``text`` mentions (as :func:`passage_mentions` reads them), at most
    ``max_entities``, first found first."""
    keys = dict.fromkeys(k for k in map(entity_key, names_in(text)) if _names_an_entity(k))
    return frozenset(list(keys)[:max_entities])


def sub_keys(key: str) -> list[str]:
    """The shorter names a multi-word key ends with, as a surname ends a person's name ("johann strauss ii" →
    "strauss ii"; "marla quint" → "quint"): never a leading word ("green room" is not "green"), a stop word
    first, or a single word of fewer than three letters."""
    words = key.split()
    return [
        " ".join(words[i:])
        for i in range(1, len(words))
        if words[i] not in STOP_WORDS and (i < len(words) - 1 or len(words[i]) >= 3)
    ]


def question_keys(question: str, *, max_words: int) -> list[str]:
    """Entity keys a question may name: its names, then every run of 1..``max_words`` words that neither
    starts nor ends with a stop word, longest first (the graph keeps those it holds)."""
    keys = [entity_key(name) for name in names_in(question)]
    tokens = raw_tokens(question)
    for n in range(min(max_words, len(tokens)), 0, -1):
        for i in range(len(tokens) - n + 1):
            gram = tokens[i : i + n]
            if gram[0] in STOP_WORDS or gram[-1] in STOP_WORDS:
                continue
            keys.append(" ".join(gram))
    return list(dict.fromkeys(k for k in keys if k))
