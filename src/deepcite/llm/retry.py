"""The retry and deadline policy for calls to an OpenAI-compatible endpoint: the chat client
(:mod:`deepcite.llm.openai_client`) and the embeddings client (:class:`deepcite.retrieval.embedders.OpenAIEmbedder`)
share it, from the ``llm`` settings.

429, 5xx, timeouts and connection errors are retried up to ``max_retries`` times (a refused or dropped
connection only ``connect_retries`` times: a dead server is not worth a retry storm) with exponential backoff and
full jitter (``backoff_initial_s`` doubling, capped at ``backoff_max_s``); a ``Retry-After`` /
``retry-after-ms`` header is waited out exactly, and one asking for longer than ``backoff_max_s`` ends the call
at once. No wait starts that would cross the call's deadline. The SDK's own ``max_retries`` covers the same
errors and honours Retry-After, but not these rules: its backoff bounds are fixed (0.5 s to 8 s, not the
settings), a Retry-After above two minutes is replaced by its own short backoff where deepcite gives up at once
and says so, and its waits cannot be recorded by a test; so tenacity drives the retries and the SDK makes
single attempts (``max_retries=0``).

The SDK is imported where an error is classified, not with this module, which every embedder imports: a process
that calls no endpoint (a CLI search, a Ray ingest worker) would otherwise spend about a second of CPU on it.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_random_exponential

from deepcite.config import LLMSettings

log = logging.getLogger(__name__)

# local servers (Ollama, llama.cpp, vLLM, TEI) need no key, but the SDK refuses an empty one
NO_KEY = "not-needed"


def retry_after_seconds(error: BaseException | None) -> float | None:
    """Seconds a 429/5xx response asks the client to wait (``retry-after-ms`` or ``Retry-After``)."""
    import openai

    if not isinstance(error, openai.APIStatusError):
        return None
    headers = error.response.headers
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def is_unreachable(error: BaseException) -> bool:
    """A refused or dropped connection (not a slow server: a timeout is not one)."""
    import openai

    return isinstance(error, openai.APIConnectionError) and not isinstance(error, openai.APITimeoutError)


def is_transient(error: BaseException) -> bool:
    """429, 5xx, timeouts and dropped connections may succeed when tried again."""
    import openai

    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    return isinstance(error, openai.APIStatusError) and (error.status_code == 429 or error.status_code >= 500)


class RetryPolicy:
    """When a failed call to an OpenAI-compatible endpoint is tried again, and how long it waits first.

    ``what`` names the calls in the log; ``asleep`` is the wait between retries (``asyncio.sleep``); tests
    pass a recorder to check the backoff without waiting.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        what: str = "LLM call",
        asleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._settings = settings
        self._what = what
        self._asleep = asleep

    def should_retry(self, error: BaseException) -> bool:
        """Transient, and not asking for a longer wait than ``backoff_max_s``."""
        if not is_transient(error):
            return False
        after = retry_after_seconds(error)
        return after is None or after <= self._settings.backoff_max_s

    def retrying(self, end: float) -> AsyncRetrying:
        """A tenacity retrier for one call that must end by ``end`` (monotonic time)."""

        def wait_would_pass_deadline(state: RetryCallState) -> bool:
            return time.monotonic() + (state.upcoming_sleep or 0.0) >= end

        def unreachable_too_often(state: RetryCallState) -> bool:
            error = state.outcome.exception() if state.outcome else None
            return is_unreachable(error) and state.attempt_number > self._settings.connect_retries

        return AsyncRetrying(
            sleep=self._asleep,
            stop=stop_after_attempt(self._settings.max_retries + 1)
            | wait_would_pass_deadline
            | unreachable_too_often,
            wait=self._wait,
            retry=retry_if_exception(self.should_retry),
            reraise=True,
            before_sleep=self._log_retry,
        )

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        after = retry_after_seconds(error)
        if after is not None:
            return after
        jitter = wait_random_exponential(
            multiplier=self._settings.backoff_initial_s, max=self._settings.backoff_max_s
        )
        return float(jitter(state))

    def _log_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        # a refused connection is said once, by the breaker, when the retry fails too (llm/breaker.py)
        level = logging.INFO if error is not None and is_unreachable(error) else logging.WARNING
        log.log(
            level,
            "%s failed (%s); retry %d in %.2fs",
            self._what,
            error,
            state.attempt_number,
            wait,
        )
