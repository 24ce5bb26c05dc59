"""One background event loop that synchronous code hands coroutines to (an AnyIO blocking portal).

Started on first use, stopped by :meth:`BackgroundLoop.close`; thread-safe. Synchronous callers use it to
reach async clients whose connection pool belongs to one loop, and to get what only async code can give
(a wall-clock deadline over a whole HTTP exchange, cancelled cleanly when it passes).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

T = TypeVar("T")


class BackgroundLoop:
    """``call(fn, *args)`` runs ``await fn(*args)`` on the background loop and returns its result."""

    def __init__(self) -> None:
        self._portal: BlockingPortal | None = None
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        """Whether the loop is running."""
        return self._portal is not None

    def call(self, fn: Callable[..., Awaitable[T]], *args: object) -> T:
        """Run ``fn(*args)`` on the loop, blocking the calling thread until it is done."""
        return self._running().call(fn, *args)

    def close(self) -> None:
        """Stop the loop and its thread (started again on the next call)."""
        with self._lock:
            if self._portal_cm is not None:
                self._portal_cm.__exit__(None, None, None)
            self._portal, self._portal_cm = None, None

    def _running(self) -> BlockingPortal:
        with self._lock:
            if self._portal is None:
                self._portal_cm = start_blocking_portal()
                self._portal = self._portal_cm.__enter__()
            return self._portal
