"""One background event loop that synchronous code hands coroutines to (an AnyIO blocking portal).

Started on first use, stopped by :meth:`BackgroundLoop.close`; thread-safe. Synchronous callers use it to
reach async clients whose connection pool belongs to one loop, and to get what only async code can give
(a wall-clock deadline over a whole HTTP exchange, cancelled cleanly when it passes). The loop runs in a
daemon thread (AnyIO's ``start_blocking_portal`` runs it in an executor thread, which the interpreter waits
for at exit): a process that never closes it still exits.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import TypeVar

import anyio
from anyio.from_thread import BlockingPortal

T = TypeVar("T")


class BackgroundLoop:
    """``call(fn, *args)`` runs ``await fn(*args)`` on the background loop and returns its result."""

    def __init__(self) -> None:
        self._portal: BlockingPortal | None = None
        self._thread: threading.Thread | None = None
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
            portal, thread = self._portal, self._thread
            self._portal, self._thread = None, None
        if portal is not None:
            portal.call(portal.stop)
        if thread is not None:
            thread.join()

    def _running(self) -> BlockingPortal:
        with self._lock:
            if self._portal is None:
                ready: Future[BlockingPortal] = Future()

                async def serve() -> None:
                    async with BlockingPortal() as portal:
                        ready.set_result(portal)
                        await portal.sleep_until_stopped()

                self._thread = threading.Thread(
                    target=anyio.run, args=(serve,), name="deepcite-loop", daemon=True
                )
                self._thread.start()
                self._portal = ready.result()
            return self._portal
