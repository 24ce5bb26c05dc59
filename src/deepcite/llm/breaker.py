"""A circuit breaker per LLM client: a server that cannot be reached is not asked again for a while.

When a call fails because the connection was refused or dropped (after ``llm.connect_retries`` tries), the
breaker opens: one warning says so, every later call of the same request ends at once (the request's budget
remembers, :meth:`deepcite.llm.deadline.RequestBudget.note_unreachable`), and so does every call of any
request for ``llm.breaker_open_s`` seconds. Each such call raises :class:`LLMUnavailableError` and its step
runs offline. After that time the next call tries the server again (half-open); a success closes it.

Usage::

    breaker = Breaker(open_s=30.0, where="the LLM at http://127.0.0.1:8080/v1")
    breaker.check()          # LLMUnavailableError while open
    breaker.trip(error)      # after a connection failure
    breaker.reset()          # after a success
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from deepcite.llm.deadline import LLMUnavailableError, current_budget

log = logging.getLogger(__name__)


class Breaker:
    """Open for ``open_s`` seconds after :meth:`trip`; ``clock`` is ``time.monotonic`` (tests pass their own)."""

    def __init__(self, open_s: float, where: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._open_s = open_s
        self._where = where
        self._clock = clock
        self._until = 0.0
        self._reason: str | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._reason is not None and self._clock() < self._until

    def check(self) -> None:
        """LLMUnavailableError while the breaker is open (the call is not sent)."""
        with self._lock:
            open_for = self._until - self._clock() if self._reason is not None else 0.0
            reason = self._reason
        if open_for > 0.0:
            raise LLMUnavailableError(
                f"{self._where} was unreachable ({reason}); not asked again for {open_for:.0f} s "
                "(setting llm.breaker_open_s)"
            )

    def trip(self, error: BaseException) -> LLMUnavailableError:
        """Open the breaker after ``error`` (a refused or dropped connection); the error to raise. Logs one
        warning per opening, and marks the current request so its later calls end at once."""
        reason = type(error).__name__ if not str(error) else f"{type(error).__name__}: {error}"
        with self._lock:
            already = self._reason is not None and self._clock() < self._until
            self._reason = reason
            self._until = self._clock() + self._open_s
        message = (
            f"{self._where} is unreachable ({reason}); LLM steps run offline for the rest of this request "
            f"and the next {self._open_s:g} s (setting llm.breaker_open_s)"
        )
        if not already:
            log.warning("%s", message)
        budget = current_budget()
        if budget is not None:
            budget.note_unreachable(reason)
        return LLMUnavailableError(message)

    def reset(self) -> None:
        """A call went through: close the breaker."""
        with self._lock:
            self._reason = None
            self._until = 0.0
