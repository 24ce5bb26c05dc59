"""The document titles of a collection, as entity keys: "has its own document" is evidence that a name is an
entity worth following (a chain hop's answer). Read from the collection's entity graph, re-read when it changes."""

from __future__ import annotations

import threading

import numpy as np

from deepcite.research.protocols import GraphRetriever, Retriever


class TitleKeys:
    """Entity keys of every document title of one retriever's collection (empty without an entity graph)."""

    def __init__(self) -> None:
        self._version = -1
        self._keys: frozenset[str] = frozenset()
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
