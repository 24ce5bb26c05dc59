"""One re-entrant lock per collection name, created on first use (thread-safe)."""

from __future__ import annotations

import threading


class CollectionLocks:
    """``locks(name)`` is the same ``RLock`` for every call with that name."""

    def __init__(self) -> None:
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def __call__(self, name: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(name, threading.RLock())
