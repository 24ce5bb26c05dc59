"""Saved answers as a service: the newest answers of a collection, one answer, its deletion; each read only by
a caller who may read every passage it cites (see :mod:`deepcite.saved_answers`)."""

from __future__ import annotations

import threading

from deepcite.config import Settings
from deepcite.errors import InputError, RequestError
from deepcite.retrieval.points import validate_collection_name
from deepcite.saved_answers import SavedAnswer, SavedAnswerList, SavedAnswers
from deepcite.service import Groups


class Saved:
    """The saved answers of the data dir (``saved.max_answers`` newest kept), opened on first use."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._store: SavedAnswers | None = None
        self._lock = threading.Lock()

    @property
    def store(self) -> SavedAnswers:
        """The SQLite file of saved answers (``<data dir>/answers.sqlite``)."""
        if self._store is None:
            with self._lock:  # opened once, as the Engine's other shared objects are
                if self._store is None:
                    self._store = SavedAnswers.open(self.settings)
        return self._store

    def list(
        self, collection: str | None = None, groups: Groups = None, limit: int | None = None
    ) -> SavedAnswerList:
        """The newest saved answers of a collection (default ``server.default_collection``) that the caller
        with ``groups`` may read."""
        name = (collection or self.settings.server.default_collection).strip()
        try:
            validate_collection_name(name, self.settings.store.max_collection_name_chars)
        except InputError as exc:
            raise RequestError(f"collection: {exc}") from exc
        return SavedAnswerList(collection=name, answers=self.store.list(name, groups, limit))

    def get(self, answer_id: str, groups: Groups = None) -> SavedAnswer:
        """One saved answer; NotFoundError when there is none the caller may read."""
        return self.store.get(answer_id, groups)

    def delete(self, answer_id: str, groups: Groups = None) -> None:
        """Delete a saved answer the caller owns (403 when it may only read it; 404 when not even that)."""
        self.store.delete(answer_id, groups)
