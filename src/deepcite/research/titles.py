"""The document titles of a collection, as entity keys: "has its own document" is evidence that a name is an
entity worth following (a chain hop's answer). Read from the collection's entity graph, re-read when it changes.
Beside them the collection's alias table (names to pages, :mod:`deepcite.retrieval.graph.aliases`): every
title mention of the graph (a page's title and the aliases read from it at ingest) and each title's head before
a comma; and what each page says its subject is (its lead sentence's type, :mod:`deepcite.research.answer_types`)."""

from __future__ import annotations

import threading

import numpy as np

from deepcite.research.answer_types import PageType, page_type
from deepcite.research.protocols import GraphRetriever, Retriever
from deepcite.retrieval.graph.aliases import AliasTable
from deepcite.retrieval.graph.extract import entity_key
from deepcite.retrieval.graph.store import GraphRows

_EMPTY = AliasTable([], prefix_min_words=1, max_pages=1)


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


class TitleKeys:
    """Entity keys of every document title of one retriever's collection (empty without an entity graph), and
    its alias table."""

    def __init__(self) -> None:
        self._version = -1
        self._keys: frozenset[str] = frozenset()
        self._alias_version = -1
        self._aliases = _EMPTY
        self._df_version = -1
        self._df: dict[str, int] = {}
        self._types_version: tuple[int, int] = (-1, 0)
        self._types: dict[str, PageType] = {}
        self._lock = threading.Lock()

    def get(self, retriever: Retriever) -> frozenset[str]:
        """The title keys, read again only when the graph's version moved on."""
        if not isinstance(retriever, GraphRetriever):
            return frozenset()
        graph = retriever.graph
        version = graph.version()
        with self._lock:
            if version != self._version:
                rows = graph.rows()
                title_ids = np.unique(rows.mention_entity[rows.mention_is_title])
                at = np.searchsorted(rows.entity_ids, title_ids)
                self._keys = frozenset(rows.entity_keys[i] for i in at.tolist())
                self._version = version
            return self._keys

    def frequency(self, retriever: Retriever) -> dict[str, int]:
        """Entity key → how many passages of the collection mention it (empty without an entity graph)."""
        if not isinstance(retriever, GraphRetriever):
            return {}
        graph = retriever.graph
        version = graph.version()
        with self._lock:
            if version != self._df_version:
                rows = graph.rows()
                at = {int(e): i for i, e in enumerate(rows.entity_ids.tolist())}
                counts = np.bincount(
                    np.fromiter((at[int(e)] for e in rows.mention_entity.tolist()), dtype=np.int64),
                    minlength=len(rows.entity_keys),
                )
                self._df = dict(zip(rows.entity_keys, counts.tolist(), strict=True))
                self._df_version = version
            return self._df

    def aliases(self, retriever: Retriever) -> AliasTable:
        """The collection's alias table (empty without an entity graph), read again when the graph changed."""
        if not isinstance(retriever, GraphRetriever):
            return _EMPTY
        graph = retriever.graph
        version = graph.version()
        with self._lock:
            if version != self._alias_version:
                cfg = graph.settings
                self._aliases = (
                    AliasTable(
                        alias_entries(graph.rows()),
                        prefix_min_words=cfg.alias_prefix_min_words,
                        max_pages=cfg.alias_max_pages,
                    )
                    if cfg.aliases and graph.exists()
                    else _EMPTY
                )
                self._alias_version = version
            return self._aliases

    def page_types(self, retriever: Retriever, max_words: int) -> dict[str, PageType]:
        """Chunk id → what its page's lead sentence (or title) calls the page's subject (kind ``None`` when it
        does not say), for every titled document (empty without an entity graph), read again when the graph
        changed."""
        if not isinstance(retriever, GraphRetriever):
            return {}
        graph = retriever.graph
        version = (graph.version(), max_words)
        with self._lock:
            if version != self._types_version:
                self._types = {}
                for chunk_id, (title, sentence) in graph.leads().items():
                    found = page_type(title, sentence, max_words)  # a page whose type does not read: unknown
                    self._types[chunk_id] = found or PageType(frozenset(), None, title)
                self._types_version = version
            return self._types
