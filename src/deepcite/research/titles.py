"""The document titles of a collection, as entity keys: "has its own document" is evidence that a name is an
entity worth following (a chain hop's answer). Read from the collection's entity graph, re-read when it changes.
Beside them the collection's alias table (names to pages, :mod:`deepcite.retrieval.graph.aliases`): every
title mention of the graph (a page's title and the aliases read from it at ingest) and each title's head before
a comma; and what each page says its subject is (its lead sentence's type, :mod:`deepcite.research.answer_types`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from deepcite.research.answer_types import PageType, page_type
from deepcite.research.protocols import GraphRetriever, Retriever
from deepcite.retrieval.graph.aliases import AliasTable, alias_entries

_EMPTY = AliasTable([], prefix_min_words=1, max_pages=1)
T = TypeVar("T")


class TitleKeys:
    """Entity keys of every document title of one retriever's collection (empty without an entity graph), and
    its alias table, mention counts and page types; each is read again only when the graph's version moved on."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[object, Any]] = {}  # what each reading was built at, and what it built
        self._lock = threading.Lock()

    def _fresh(self, name: str, version: object, build: Callable[[], T]) -> T:
        """The reading ``name`` as built at ``version``: built again (under the lock) when that moved on."""
        with self._lock:
            held = self._held.get(name)
            if held is None or held[0] != version:
                held = self._held[name] = (version, build())
            return held[1]

    def get(self, retriever: Retriever) -> frozenset[str]:
        """The title keys, read again only when the graph's version moved on."""
        if not isinstance(retriever, GraphRetriever):
            return frozenset()
        graph = retriever.graph

        def build() -> frozenset[str]:
            rows = graph.rows()
            title_ids = np.unique(rows.mention_entity[rows.mention_is_title])
            at = np.searchsorted(rows.entity_ids, title_ids)
            return frozenset(rows.entity_keys[i] for i in at.tolist())

        return self._fresh("keys", graph.version(), build)

    def frequency(self, retriever: Retriever) -> dict[str, int]:
        """Entity key → how many passages of the collection mention it (empty without an entity graph)."""
        if not isinstance(retriever, GraphRetriever):
            return {}
        graph = retriever.graph

        def build() -> dict[str, int]:
            rows = graph.rows()
            at = {int(e): i for i, e in enumerate(rows.entity_ids.tolist())}
            counts = np.bincount(
                np.fromiter((at[int(e)] for e in rows.mention_entity.tolist()), dtype=np.int64),
                minlength=len(rows.entity_keys),
            )
            return dict(zip(rows.entity_keys, counts.tolist(), strict=True))

        return self._fresh("frequency", graph.version(), build)

    def aliases(self, retriever: Retriever) -> AliasTable:
        """The collection's alias table (empty without an entity graph), read again when the graph changed."""
        if not isinstance(retriever, GraphRetriever):
            return _EMPTY
        graph = retriever.graph

        def build() -> AliasTable:
            cfg = graph.settings
            if not (cfg.aliases and graph.exists()):
                return _EMPTY
            return AliasTable(
                alias_entries(graph.rows()),
                prefix_min_words=cfg.alias_prefix_min_words,
                max_pages=cfg.alias_max_pages,
            )

        return self._fresh("aliases", graph.version(), build)

    def page_types(self, retriever: Retriever, max_words: int) -> dict[str, PageType]:
        """Chunk id → what its page's lead sentence (or title) calls the page's subject (kind ``None`` when it
        does not say), for every titled document (empty without an entity graph), read again when the graph
        changed."""
        if not isinstance(retriever, GraphRetriever):
            return {}
        graph = retriever.graph

        def build() -> dict[str, PageType]:
            # a page whose type does not read: unknown
            return {
                chunk_id: page_type(title, sentence, max_words) or PageType(frozenset(), None, title)
                for chunk_id, (title, sentence) in graph.leads().items()
            }

        return self._fresh("page_types", (graph.version(), max_words), build)
