"""Anchor text: a page is also found by what other passages say of it.

The oldest multi-hop signal of web search (anchor text, McBryan 1994; Craswell, Hawking and Robertson, SIGIR
2001): a page is described by the text that points to it as much as by its own. Here a passage that names a
page by its title lends that page the sentence it names it in, headed by the passage's own title. "Changed It is
a song by rapper Nicki Minaj" becomes anchor text of the page "Nicki Minaj", so "the birthplace of the performer
of Changed It" finds her page in one search: her page holds "born", its anchor text "Changed It".

Which pages: a document of at most ``graph.anchor_max_page_chunks`` passages (an encyclopaedia page, a short
note, never a long document a passage merely cites) whose title reads as a name, named by that title
(:func:`title_keys`, looked up in the alias table). A page named only by a name its own text gives (the lead
name of an abstract, "Vitamin D") is not being pointed at: every abstract mentioning vitamin D would lend it
text. A page named by more documents than its ``graph.anchor_max_sentences`` sentences hold is a hub ("United
States") and gets none.

The anchor texts are scored by BM25 (the collection's k1 and b) as a field of their own (BM25F's per-field
statistics: the IDF and the mean length over the anchor texts), one document per page and ACL of the passages
lending it text. :meth:`Collection.search <deepcite.retrieval.collection.Collection.search>` adds
``graph.anchor_weight`` times that score to the page's own BM25 score.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np
import scipy.sparse as sp

from deepcite.models import Chunk
from deepcite.retrieval.bm25 import idf_lucene, tfc_robertson
from deepcite.retrieval.graph.aliases import AliasTable, PageRef
from deepcite.retrieval.graph.extract import entity_key, unqualified
from deepcite.retrieval.graph.rows import GraphRows
from deepcite.text import tokenize

AnchorKey = tuple[str, str, tuple[str, ...]]  # a page's chunk id and document id, and the lenders' ACL groups
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_JOINERS = frozenset(["of", "the", "and", "de", "la", "von", "van", "da", "del", "du"])
_SENTENCE = re.compile(r"[.!?](?:\s|$)")  # a title that states something ends a sentence


def naming_sentence(text: str, name: str) -> str | None:
    """The sentence of ``text`` that names ``name`` (case aside), or ``None`` when it does not."""
    at = text.lower().find(name.lower()) if name else -1
    if at < 0:
        return None
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text, 0, at)]
    start = starts[-1]
    end = _SENTENCE_END.search(text, at + len(name))
    return text[start : end.start() if end else len(text)].strip()


def title_keys(title: str, max_words: int) -> set[str]:
    """The keys a page's title is named by: the title, without its qualifier ("Green (song)": "Green"), and its
    head before a comma when what follows is a name too ("West Chicago, Illinois": "West Chicago"); none when the
    title is no name (more than ``max_words`` words before its qualifier, or a sentence: "IL-33, a recently
    identified interleukin …")."""
    name = unqualified(title).strip()
    if not name or len(name.split()) > max_words or _SENTENCE.search(name):
        return set()
    keys = {entity_key(title)}  # the key drops the qualifier itself
    head, _, place = name.partition(",")
    if place and all(w[:1].isupper() or w in _JOINERS for w in place.split()):
        keys.add(entity_key(head))  # "West Chicago, Illinois"; not "Aging, frailty and age-related diseases"
    return keys - {""}


def anchor_texts(
    rows: GraphRows,
    fetch: Callable[[list[str]], Iterable[Chunk]],
    table: AliasTable,
    *,
    max_page_chunks: int,
    max_sentences: int,
    max_title_words: int,
) -> dict[AnchorKey, list[tuple[str, str]]]:
    """A page's chunk id, document id and the lending passages' ACL → the sentences those passages of other
    documents name it in by its title (:func:`title_keys`), each with the naming passage's title. ``fetch``
    reads the passages of the given documents: only the pages named and those naming them are read (none in a
    collection of long documents)."""
    doc_chunks = Counter(rows.doc_ids)
    p_of = {int(pid): i for i, pid in enumerate(rows.passage_ids.tolist())}
    e_of = {int(eid): i for i, eid in enumerate(rows.entity_ids.tolist())}
    links: list[tuple[PageRef, int, int]] = []  # (the page, the naming passage's row, the entity's row)
    plain = ~rows.mention_is_title
    for pid, eid in zip(
        rows.mention_passage[plain].tolist(), rows.mention_entity[plain].tolist(), strict=True
    ):
        p, e = p_of.get(int(pid)), e_of.get(int(eid))
        if p is None or e is None:
            continue
        for page in table.named(rows.entity_names[e]):
            if page.doc_id != rows.doc_ids[p] and doc_chunks[page.doc_id] <= max_page_chunks:
                links.append((page, p, e))
    namers: dict[str, set[str]] = {}
    for page, p, _ in links:
        namers.setdefault(page.chunk_id, set()).add(rows.doc_ids[p])
    # a page more documents name than its anchor text holds is a hub or a common heading ("United States",
    # "Summary"): what they say of it describes them, not it
    links = [link for link in links if len(namers[link[0].chunk_id]) <= max_sentences]
    if not links:
        return {}
    docs = {rows.doc_ids[p] for _, p, _ in links} | {page.doc_id for page, _, _ in links}
    read = {c.chunk_id: c for c in fetch(sorted(docs))}
    out: dict[AnchorKey, list[tuple[str, str]]] = {}
    lent: set[tuple[str, str]] = set()  # (page chunk, naming chunk): one sentence each
    for page, p, e in links:
        chunk, named = read.get(rows.chunk_ids[p]), read.get(page.chunk_id)
        if chunk is None or named is None or (page.chunk_id, chunk.chunk_id) in lent:
            continue
        if page.alias not in title_keys(named.title, max_title_words):
            continue  # named by a name its text gives (a lead name, an acronym), not by its title
        key = (page.chunk_id, page.doc_id, tuple(sorted(chunk.acl)))
        held = out.get(key, [])
        if len(held) >= max_sentences:
            continue
        # the graph's name of an entity may be a page's title ("Port Elmo (town)"): its head, or the alias the
        # mention named the page by, is what the text says
        name = rows.entity_names[e]
        for said in (name, unqualified(name), page.alias):
            sentence = naming_sentence(chunk.text, said)
            if sentence:
                lent.add((page.chunk_id, chunk.chunk_id))
                out[key] = [*held, (chunk.title, sentence)]
                break
    return out


class AnchorIndex:
    """BM25 over the pages' anchor texts; :meth:`scores` gives a query's best pages.

    One BM25 document per page and ACL of the passages lending it text, so a search given a user's groups reads
    only what public passages and passages shared with those groups say of a page (a page's rank never tells
    what a document the user may not read says). BM25F's per-field statistics: the IDF and the mean length are
    taken over these documents."""

    def __init__(self, texts: dict[AnchorKey, list[tuple[str, str]]], k1: float, b: float) -> None:
        # a page's chunk id -> its document
        self.doc_ids = {chunk_id: doc_id for chunk_id, doc_id, _ in texts}
        self.chunk_ids = list(self.doc_ids)
        row_of = {chunk_id: i for i, chunk_id in enumerate(self.chunk_ids)}
        self._page = np.array([row_of[chunk_id] for chunk_id, _, _ in texts], dtype=np.int64)
        self._units: dict[str, list[int]] = {}  # a page's chunk id -> its BM25 documents
        for unit, (chunk_id, _, _) in enumerate(texts):
            self._units.setdefault(chunk_id, []).append(unit)
        self._acl = [frozenset(acl) for _, _, acl in texts]
        self._lent = list(texts.values())  # per BM25 document: (lending passage's title, sentence)
        counts = [Counter(tokenize(" ".join(f"{t}. {s}" for t, s in lent))) for lent in self._lent]
        vocabulary: dict[str, int] = {}
        for tf in counts:
            for term in tf:
                vocabulary.setdefault(term, len(vocabulary))
        self._vocabulary = vocabulary
        n_docs = max(len(counts), 1)
        lengths = [sum(tf.values()) for tf in counts]
        avgdl = max(sum(lengths) / n_docs, 1.0)
        df = np.zeros(len(vocabulary))
        rows, cols, values = [], [], []
        for row, (tf, dl) in enumerate(zip(counts, lengths, strict=True)):
            for term, count in tf.items():
                col = vocabulary[term]
                df[col] += 1
                rows.append(row)
                cols.append(col)
                values.append(tfc_robertson(count, dl, avgdl, k1, b))
        self._idf = np.array([idf_lucene(int(d), n_docs) for d in df])
        self._matrix = sp.csc_matrix((values, (rows, cols)), shape=(len(counts), len(vocabulary)))

    def scores(self, query: str, k: int, groups: list[str] | None = None) -> list[tuple[str, float]]:
        """The best ``k`` pages for ``query`` by their anchor text (chunk id and BM25 score), best first; with
        ``groups`` (a caller's ACL groups, as :class:`~deepcite.models.Filters` ``acl_groups``), only the text
        lent by public passages and passages shared with one of them."""
        cols = sorted({self._vocabulary[t] for t in tokenize(query) if t in self._vocabulary})
        if not cols:
            return []
        scored = np.asarray(self._matrix[:, cols] @ self._idf[cols]).ravel()
        scored = scored * self._allowed(groups)
        per_page = np.bincount(self._page, weights=scored, minlength=len(self.chunk_ids))
        top = np.argsort(-per_page, kind="stable")[:k]
        return [(self.chunk_ids[i], float(per_page[i])) for i in top.tolist() if per_page[i] > 0]

    def lender(self, chunk_id: str, query: str, groups: list[str] | None = None) -> str | None:
        """The title of the passage whose sentence about page ``chunk_id`` shares most of ``query``'s terms, among
        those ``groups`` may read (``None`` when none shares one): the "via" of an anchor-text hit."""
        terms = set(tokenize(query))
        allowed = self._allowed(groups)
        best, title = 0, None
        for unit in self._units.get(chunk_id, []):
            if not allowed[unit]:
                continue
            for lent_title, sentence in self._lent[unit]:
                shared = len(terms & set(tokenize(f"{lent_title}. {sentence}")))
                if shared > best:
                    best, title = shared, lent_title
        return title

    def _allowed(self, groups: list[str] | None) -> np.ndarray:
        """1 for each BM25 document ``groups`` may read (all of them without groups), else 0."""
        if groups is None:
            return np.ones(len(self._acl))
        mine = set(groups)
        return np.array([not acl or bool(acl & mine) for acl in self._acl], dtype=float)
