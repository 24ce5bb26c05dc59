"""Names to pages: the alias table of a collection, and the page a mention names.

A page (a passage with a title) is known by more names than its title. Its aliases, read at ingest from the
page itself (:func:`page_aliases`): the title without its "(qualifier)" ("Green (song)" → "Green"), the title's
head before a comma ("West Chicago, Illinois" → "West Chicago"), the name its first sentence opens with (the
bold lead name of an encyclopaedia page: "The Vienna Walzer Orchestra (VWO) is …" → "Vienna Walzer
Orchestra"), and the names that sentence gives in parentheses or after "also known as" ("VWO", "born Clarence
Eugene Snow" → "Clarence Eugene Snow"). The graph stores them as title mentions of the page, so the walk and
the title keys see them.

A mention names a page (:meth:`AliasTable.pages`) when its key is one of the page's aliases, or when it opens
with one of at least ``prefix_min_words`` words ("West Chicago High School" → the page "West Chicago,
Illinois"): the longer name of a thing is very often the name of a thing in or of the page's subject.

    table = AliasTable([("west chicago", "c-7", "west-chicago")], prefix_min_words=2, max_pages=3)
    table.pages("West Chicago High School")   # [PageRef(chunk_id='c-7', doc_id='west-chicago', alias='west chicago')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from deepcite.names import names_in
from deepcite.retrieval.graph.extract import entity_key
from deepcite.retrieval.graph.rows import GraphRows
from deepcite.text import STOP_WORDS

_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]]{2}[.!?])\s+(?=[A-Z\"“(])")
_OPEN_QUOTES = "\"“'‘`"
# the lead name: words up to the verb, bracket or comma that ends it ("Hank Snow (born …) was …")
_LEAD = re.compile(
    r"^(?:the\s+)?(?P<name>[^\s,(;:]+(?:\s+[^\s,(;:]+){0,11}?)\s*(?:\(|,|;|:|\s(?:is|was|are|were|refers|may|has|had)\b)",
    re.IGNORECASE,
)
_PARENS = re.compile(r"\(([^()]{2,120})\)")
_KNOWN_AS = re.compile(
    r"\b(?:also known as|better known as|known as|also called|nicknamed|formerly)\s+(.{2,120})", re.I
)
# a parenthesised alias opens with a birth name or a language's label: "born X", "German: X", "Spanish: X"
_ALIAS_LEAD_IN = re.compile(r"^(?:born|née|nee|formerly|also|or|[A-Z][a-z]+:)\s*", re.I)
_NAME_JOINERS = frozenset(
    ["of", "the", "and", "&", "de", "la", "le", "von", "van", "da", "del", "du", "for", "-"]
)


def first_sentence(text: str, max_chars: int) -> str:
    """The first sentence of ``text`` (at most ``max_chars`` characters)."""
    head = text.strip()[:max_chars]
    parts = _SENTENCE_END.split(head, maxsplit=1)
    return parts[0] if parts else ""


def _reads_as_name(name: str, max_words: int) -> bool:
    """Whether ``name`` reads as a proper name: 1..``max_words`` words, each capitalised, a number or a
    joiner ("of", "de"), the first no stop word."""
    words = name.split()
    if not words or len(words) > max_words or words[0].lower() in STOP_WORDS:
        return False
    for word in words:
        if word.lower() in _NAME_JOINERS or word[:1].isdigit():
            continue
        if not word[:1].isupper():
            return False
    return not all(w[:1].isdigit() for w in words)


def _acronym(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def lead_name(sentence: str, max_words: int) -> str | None:
    """The name a page's first sentence opens with, when it reads as a name."""
    opening = sentence.lstrip(_OPEN_QUOTES + " ")
    quoted = re.match(r"^[\"“']?([^\"”']{2,80})[\"”']", sentence.strip())
    if quoted and _reads_as_name(quoted.group(1), max_words):
        return quoted.group(1).strip()
    match = _LEAD.match(opening)
    if not match:
        return None
    name = match.group("name").strip(_OPEN_QUOTES + " ")
    return name if _reads_as_name(name, max_words) else None


def _side_names(sentence: str, max_words: int) -> list[str]:
    """Names the first sentence gives beside its lead name: in parentheses, and after "also known as". A
    parenthesis stops at its first piece with a figure: "(born March 12, 1909, St Louis, Missouri)" is a life
    note, and "St Louis" is where he was born, not his name."""
    out: list[str] = []
    for group in _PARENS.findall(sentence):
        for piece in re.split(r"[;,]", group):
            if any(ch.isdigit() for ch in piece):  # a life note starts: its places are not the page's names
                break
            piece = _ALIAS_LEAD_IN.sub("", piece.strip()).strip(_OPEN_QUOTES + " ")
            if piece and _reads_as_name(piece, max_words):
                out.append(piece)
    for match in _KNOWN_AS.finditer(sentence):
        found = names_in(match.group(1))
        rest = re.sub(r"^(?:the|a|an)\s+", "", match.group(1).lstrip(_OPEN_QUOTES + " "), flags=re.I)
        if found and rest.startswith(found[0]):  # the name that stands right after the phrase
            out.append(found[0])
    return out


def page_aliases(title: str, text: str, *, max_words: int, lead_chars: int) -> dict[str, str]:
    """The aliases of the page titled ``title`` with text ``text``, entity key → name, the title's own key
    first: the title (its qualifier dropped), its head before a comma, the first sentence's lead name and the
    names that sentence gives in parentheses or after "also known as"."""
    title = title.strip()
    if not title:
        return {}
    sentence = first_sentence(text, lead_chars)
    lead = lead_name(sentence, max_words)
    # a one-word name beside the title is kept only as an acronym ("VWO"): "Snow" alone names many things
    side = [n for n in [lead or "", *_side_names(sentence, max_words)] if " " in n or _acronym(n)]
    out: dict[str, str] = {}
    for name in [title, title.split(",")[0].strip(), *side]:
        key = entity_key(name)
        if key and key not in out and not all(t in STOP_WORDS for t in key.split()):
            out[key] = name
    return out


def prefixes(key: str, min_words: int) -> list[str]:
    """The leading word runs of a key of at least ``min_words`` words, longest first, the key itself too."""
    words = key.split()
    return [" ".join(words[:n]) for n in range(len(words), min_words - 1, -1) if n >= 1]


@dataclass(frozen=True)
class PageRef:
    """A page a mention names: its chunk and document, and the alias it was named by."""

    chunk_id: str
    doc_id: str
    alias: str


class AliasTable:
    """Alias key → the pages known by it; :meth:`pages` resolves a mention (exact alias, else longest prefix)."""

    def __init__(
        self, entries: Iterable[tuple[str, str, str]], *, prefix_min_words: int, max_pages: int
    ) -> None:
        self.prefix_min_words = prefix_min_words
        self.max_pages = max_pages
        self._pages: dict[str, list[tuple[str, str]]] = {}
        for key, chunk_id, doc_id in entries:
            held = self._pages.setdefault(key, [])
            if (chunk_id, doc_id) not in held:
                held.append((chunk_id, doc_id))

    def __len__(self) -> int:
        return len(self._pages)

    def __contains__(self, key: object) -> bool:
        return key in self._pages

    def named(self, mention: str) -> list[PageRef]:
        """The pages known by ``mention``'s own key (no longer form: "West Chicago High School" names no page
        "West Chicago, Illinois" here); none when more than ``max_pages`` share it."""
        key = entity_key(mention)
        found = self._pages.get(key, []) if key else []
        return [] if len(found) > self.max_pages else [PageRef(c, d, key) for c, d in found]

    def pages(self, mention: str) -> list[PageRef]:
        """The pages ``mention`` names: those known by its key, else by the longest alias it opens with (at
        least ``prefix_min_words`` words); none when more than ``max_pages`` pages share that alias."""
        key = entity_key(mention)
        if not key:
            return []
        for alias in prefixes(key, self.prefix_min_words) if " " in key else [key]:
            found = self._pages.get(alias)
            if found:
                if len(found) > self.max_pages:
                    return []
                return [PageRef(c, d, alias) for c, d in found]
        return []


def alias_entries(rows: GraphRows) -> list[tuple[str, str, str]]:
    """(alias key, chunk id, doc id) of every title mention of the graph, and of each title's head before a
    comma (a graph built before aliases were stored holds its titles alone)."""
    p_of = {int(pid): i for i, pid in enumerate(rows.passage_ids.tolist())}
    e_of = {int(eid): i for i, eid in enumerate(rows.entity_ids.tolist())}
    out: list[tuple[str, str, str]] = []
    for pid, eid in zip(
        rows.mention_passage[rows.mention_is_title].tolist(),
        rows.mention_entity[rows.mention_is_title].tolist(),
        strict=True,
    ):
        p, e = p_of.get(int(pid)), e_of.get(int(eid))
        if p is None or e is None:
            continue
        chunk_id, doc_id = rows.chunk_ids[p], rows.doc_ids[p]
        out.append((rows.entity_keys[e], chunk_id, doc_id))
        head = entity_key(rows.entity_names[e].split(",")[0])
        if head and head != rows.entity_keys[e]:
            out.append((head, chunk_id, doc_id))
    return out
