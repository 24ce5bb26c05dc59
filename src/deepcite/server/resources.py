"""What one app instance shares across requests: settings, the store, the embedder and the auth table.

The store and the embedder open on first use (so ``/healthz`` and ``/docs`` never load the model) and are
shared by every request; :meth:`ServerResources.collection` checks the name against the store.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from deepcite.config import Settings
from deepcite.errors import CollectionNotFoundError, InputError
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedder import Embedder
from deepcite.retrieval.store import SearchStore

if TYPE_CHECKING:
    from deepcite.practitioners.finder import PractitionerFinder
from deepcite.server.auth import Authenticator


class ServerResources:
    """Long-lived objects of one app; thread-safe lazy opening of the store and the embedder."""

    def __init__(
        self, settings: Settings, *, store: SearchStore | None = None, embedder: Embedder | None = None
    ) -> None:
        self.settings = settings
        self.authenticator = Authenticator(settings.api_keys)
        self._store = store
        self._owns_store = store is None
        self._embedder = embedder
        self._finder: PractitionerFinder | None = None
        self._lock = threading.Lock()

    @property
    def store(self) -> SearchStore:
        with self._lock:
            if self._store is None:
                from deepcite.retrieval.factory import open_store

                self._store = open_store(self.settings)
            return self._store

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                from deepcite.retrieval.embedders import get_embedder

                self._embedder = get_embedder(self.settings)
            return self._embedder

    def collection_names(self) -> list[str]:
        """The document collections (the practitioner directory's profile index is not one)."""
        internal = {self.settings.practitioners.collection}
        return sorted(name for name in self.store.list_collections() if name not in internal)

    def collection(self, name: str | None) -> Collection:
        """The named collection (default: ``server.default_collection``); 404 naming the known ones."""
        if name is None:
            name = self.settings.server.default_collection
        name = name.strip()
        if not name:
            raise InputError(
                "the collection name is empty; give one of GET /api/collections, or leave it out"
            )
        store = self.store
        if not store.has_collection(name):
            raise CollectionNotFoundError(name, store.list_collections())
        return open_collection(name, self.settings, create=False, store=store, embedder=self.embedder)

    def practitioner_finder(self) -> PractitionerFinder:
        """The practitioner finder over this app's store (its directory opened on first use)."""
        store = self.store
        with self._lock:
            if self._finder is None:
                from deepcite.llm.factory import get_llm
                from deepcite.practitioners.finder import PractitionerFinder

                self._finder = PractitionerFinder.open(self.settings, llm=get_llm(self.settings), store=store)
            return self._finder

    def close(self) -> None:
        """Close the practitioner directory, and the store if this object opened it."""
        with self._lock:
            if self._finder is not None:
                self._finder.directory.close()  # not finder.close(): the store is shared
                self._finder = None
            if self._owns_store and self._store is not None:
                self._store.close()
                self._store = None
