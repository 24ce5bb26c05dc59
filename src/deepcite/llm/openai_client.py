"""The LLM client for any OpenAI-compatible chat endpoint: OpenAI, Ollama, vLLM, llama.cpp, LM Studio, Gemini.

Usage::

    client = OpenAICompatClient(LLMSettings(base_url="http://127.0.0.1:11434/v1", model="llama3.1"))
    text = client.chat([{"role": "user", "content": "Say hi"}])

Retries follow :class:`deepcite.llm.retry.RetryPolicy` (the SDK's own are switched off), the policy the
embeddings endpoint shares: 429, 5xx, timeouts and dropped connections are retried with exponential backoff
and full jitter, a ``Retry-After`` is waited out exactly, one asking for longer than ``backoff_max_s`` ends
the call at once.

Deadlines: ``timeout_s`` bounds each network step (the SDK's httpx timeout: connect, one read), so a server
that sends a byte now and then would hold a call for ever; ``call_deadline_s`` bounds the whole call
(connect, every read, every retry and its wait), and the request's budget (:mod:`deepcite.llm.deadline`)
bounds it further. httpx has no total timeout; its authors' advice is to wrap the async call in the event
loop's own deadline, which cancels the exchange cleanly: every call runs as ``achat`` under
``anyio.fail_after``, and :meth:`OpenAICompatClient.chat` hands it to a background event loop
(:class:`deepcite.llm.portal.BackgroundLoop`). Retries stop before a wait would cross the deadline.

Slots: ``max_concurrent_calls`` caps the calls in flight at once (a single-slot server such as llama.cpp's or
llama-cpp-python's queues parallel requests, and their deadlines run out in its queue). Calls run on the
background loop and on callers' own loops in other threads, so the cap is an ``aiologic`` semaphore, which
works across threads and event loops. A call waits for its slot inside its deadline: waiting counts against
``call_deadline_s`` and the request's budget, and a call that gets no slot in time ends with LLMTimeoutError
like any call that runs out (the answer part falls back to the offline writer). The slot is released when
the call ends, fails or is cancelled.

Structured output: with ``schema`` the client asks for OpenAI's ``response_format`` ``json_schema`` (OpenAI,
vLLM, Ollama, llama.cpp's ``llama-server``). A server that refuses it steps the client down to
``{"type": "json_object", "schema": …}`` (llama-cpp-python's server constrains the reply to the schema with a
grammar; servers without the ``schema`` key still return a JSON object) and then to a plain prompt
instruction; the schema is also written into the prompt below ``json_schema``. The client remembers the
level that worked for later calls, and with a :class:`~deepcite.llm.modes.StructuredOutputMemory` (the data
dir's, from :func:`deepcite.llm.factory.get_llm`) for later processes too. A refusal is a 400 or 422, or any other error status whose message names
the ``response_format`` type sent: llama-cpp-python answers 500 to ``json_schema``, and a 500 is otherwise
retried as a passing fault. Parse replies with :func:`deepcite.llm.json.chat_json`.

Speed: every reply's time and token counts go to the client's :class:`~deepcite.llm.speed.SpeedMeter`; once the
model's pace is known, a call that cannot finish in the time its stage has left (after waiting for its slot) is
not sent (:class:`~deepcite.llm.speed.ModelTooSlowError`). A reply is capped at the output cap of the stage it
writes (``llm.stages``, by :func:`~deepcite.llm.deadline.in_stage`) and at ``max_output_tokens``.

A dead server: a refused or dropped connection is retried ``connect_retries`` times, then the client's
:class:`~deepcite.llm.breaker.Breaker` opens and every later call of the request (and of any request for
``breaker_open_s``) raises :class:`~deepcite.llm.deadline.LLMUnavailableError` at once, with one warning.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from functools import partial
from typing import Any

import aiologic
import anyio
import openai

from deepcite.config import LLMSettings
from deepcite.errors import ConfigError, LLMError, LLMTimeoutError
from deepcite.llm.breaker import Breaker
from deepcite.llm.budget import estimate_messages_tokens, estimate_tokens
from deepcite.llm.client import Message
from deepcite.llm.deadline import RequestBudget, call_deadline, current_budget, current_stage
from deepcite.llm.modes import LEVELS as _LEVELS
from deepcite.llm.modes import StructuredOutput, StructuredOutputMemory
from deepcite.llm.portal import BackgroundLoop
from deepcite.llm.retry import NO_KEY, RetryPolicy, is_transient, is_unreachable, retry_after_seconds
from deepcite.llm.speed import SpeedMeter

log = logging.getLogger(__name__)
_SCHEMA_NAME = "deepcite_output"


class _FormatRefused(Exception):  # noqa: N818 - a signal between two methods, never seen outside
    """The server refused the structured-output style of the request (see :func:`_refuses_format`)."""

    def __init__(self, error: openai.APIStatusError) -> None:
        super().__init__(error.message)
        self.error = error


def _refuses_format(error: openai.APIStatusError, level: StructuredOutput) -> bool:
    """Whether an error answer to a request with ``response_format`` of type ``level`` refuses that style:
    400 and 422 do, and so does another error status whose message names the type (the body is searched
    too, as servers put the detail in different places)."""
    if error.status_code in (400, 422):
        return True
    if error.status_code == 429:
        return False
    return level in f"{error.message} {error.body}"


def _schema_instruction(schema: dict[str, Any]) -> str:
    return (
        "Reply with one JSON object only (no prose, no code fences) that matches this JSON Schema:\n"
        + json.dumps(schema, ensure_ascii=False)
    )


class OpenAICompatClient:
    """:class:`deepcite.llm.client.LLMClient` over the official ``openai`` SDK.

    ``asleep`` is the wait between retries (``asyncio.sleep``); tests pass a recorder to check the backoff
    without waiting. ``memory`` remembers the structured-output style the server accepted across processes.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        asleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        memory: StructuredOutputMemory | None = None,
    ) -> None:
        if not settings.configured:
            raise ConfigError(
                "the LLM client needs a base URL and a model: set DEEPCITE_LLM_BASE_URL "
                "(e.g. http://127.0.0.1:11434/v1) and DEEPCITE_LLM_MODEL"
            )
        self._settings = settings
        self._retry = RetryPolicy(settings, asleep=asleep)
        self._level_lock = threading.Lock()
        self._memory = memory
        remembered = memory.get(str(settings.base_url), self.model) if memory is not None else None
        first = settings.structured_output
        if remembered is not None and _LEVELS.index(remembered) > _LEVELS.index(first):
            first = remembered
        self._level: StructuredOutput = first
        self._breaker = Breaker(
            settings.breaker_open_s, f"the LLM at {settings.base_url} (model {self.model})"
        )
        self._loop = BackgroundLoop()  # where synchronous callers' calls run
        self.speed = SpeedMeter(settings.speed)  # the model's measured pace (llm/speed.py)
        limit = settings.max_concurrent_calls
        self._slots = aiologic.BoundedSemaphore(limit) if limit is not None else None
        # an async HTTP pool belongs to the event loop that opened it: one AsyncOpenAI per loop
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def model(self) -> str:
        return str(self._settings.model)

    @property
    def structured_output(self) -> StructuredOutput:
        """The structured-output style the next JSON request will try first."""
        return self._level

    def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """The assistant's reply text; raises LLMError after retries are exhausted, LLMTimeoutError when
        the call's deadline or the request's budget passes first, LLMUnavailableError while the breaker is
        open."""
        deadline = call_deadline(self._settings.call_deadline_s)
        self._breaker.check()
        cap, budget = self.reply_cap(max_tokens), current_budget()
        return self._loop.call(self._achat_until, messages, schema, cap, deadline, budget)

    async def achat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Async twin of :meth:`chat`."""
        deadline = call_deadline(self._settings.call_deadline_s)
        self._breaker.check()
        cap, budget = self.reply_cap(max_tokens), current_budget()
        return await self._achat_until(messages, schema, cap, deadline, budget)

    def reply_cap(self, max_tokens: int | None = None) -> int:
        """The most tokens the next reply may run to: ``max_tokens`` when given, capped by the output cap of the
        stage being written (``llm.stages``) and by ``llm.max_output_tokens``."""
        caps = [self._settings.max_output_tokens]
        if max_tokens is not None:
            caps.append(max_tokens)
        stage_cap = self._settings.stages.cap_for(current_stage())
        if stage_cap is not None:
            caps.append(stage_cap)
        return max(1, min(caps))

    def prompt_tokens(self, messages: Sequence[Message], schema: dict[str, Any] | None = None) -> int:
        """The estimated prompt tokens of a request (the schema instruction included below json_schema)."""
        cpt = self._settings.chars_per_token
        extra = 0
        if schema is not None and self._level != "json_schema":
            extra = estimate_tokens(_schema_instruction(schema), cpt)
        return estimate_messages_tokens(messages, cpt) + extra

    def close(self) -> None:
        """Stop the background loop of synchronous calls (and with it its HTTP connection pool)."""
        if self._loop.started:
            self._loop.call(self._aclose_loop_client)
        self._loop.close()

    async def _aclose_loop_client(self) -> None:
        client = self._async.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def _achat_until(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any] | None,
        max_tokens: int | None,
        deadline: tuple[float, float],
        budget: RequestBudget | None = None,
    ) -> str:
        """One call, structured-output step-downs and retries included, ended at ``deadline`` (monotonic
        time, and the seconds that set it); not sent when the model's measured pace (with the timed-out calls of
        ``budget``, the request's) cannot finish it in time."""
        end, seconds = deadline
        level = self._level
        slotted = False
        reply_cap = max_tokens or self._settings.max_output_tokens
        prompt = self.prompt_tokens(messages, schema)
        sent = time.monotonic()
        bounds = list(budget.timed_out) if budget is not None else []
        try:
            with anyio.fail_after(max(0.0, end - time.monotonic())):
                async with self._slot():
                    slotted = True
                    sent = time.monotonic()
                    self.speed.check(prompt, reply_cap, end - sent, seconds, bounds)
                    with self.speed.in_flight(prompt, reply_cap, bounds) as key:
                        while True:
                            call = partial(self._acreate, messages, schema, max_tokens, level, key)
                            try:
                                return await self._awith_retries(call, deadline)
                            except _FormatRefused as refused:
                                level = self._step_down(level, schema, refused.error)
                            except openai.BadRequestError as exc:
                                level = self._step_down(level, schema, exc)
        except TimeoutError:
            if slotted:
                self.speed.note_cap_run_out()
            if slotted and budget is not None:  # at least this long for its prompt and its reply cap
                budget.timed_out.append((prompt, reply_cap, time.monotonic() - sent))
            waited = (
                ""
                if slotted
                else f"; it waited all that time for one of llm.max_concurrent_calls="
                f"{self._settings.max_concurrent_calls} slots"
            )
            raise LLMTimeoutError(
                f"the LLM at {self._settings.base_url} (model {self.model}) did not answer within {seconds:g} s "
                f"(connect, reads and retries; settings llm.call_deadline_s and answer.budget.request_s){waited}",
                seconds,
            ) from None

    def _slot(self) -> AbstractAsyncContextManager[object]:
        """One of ``max_concurrent_calls`` slots, held while the call runs (no cap when unset)."""
        return self._slots if self._slots is not None else nullcontext()

    # -- request building -------------------------------------------------------------------------

    def _client_kwargs(self) -> dict[str, Any]:
        return {
            "base_url": self._settings.base_url,
            "api_key": self._settings.api_key or NO_KEY,
            "timeout": self._settings.timeout_s,
            "max_retries": 0,  # retries are ours (see module docstring)
        }

    def _request(
        self, messages: Sequence[Message], schema: dict[str, Any] | None, max_tokens: int | None, level: str
    ) -> dict[str, Any]:
        msgs: list[dict[str, str]] = [dict(m) for m in messages]
        kwargs: dict[str, Any] = {
            "model": self.model,
            "temperature": self._settings.temperature,
            "max_tokens": max_tokens or self._settings.max_output_tokens,
        }
        if schema is not None:
            if level == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": _SCHEMA_NAME, "schema": schema, "strict": False},
                }
            else:
                msgs.insert(0, {"role": "system", "content": _schema_instruction(schema)})
                if level == "json_object":
                    kwargs["response_format"] = {"type": "json_object", "schema": schema}
        kwargs["messages"] = msgs
        return kwargs

    async def _acreate(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any] | None,
        max_tokens: int | None,
        level: str,
        key: int | None = None,
    ) -> str:
        request = self._request(messages, schema, max_tokens, level)
        started = time.monotonic()
        try:
            completion = await self._aclient().chat.completions.create(**request)
        except openai.APIStatusError as exc:
            if schema is not None and level != "prompt" and _refuses_format(exc, level):
                raise _FormatRefused(exc) from exc
            raise
        content = self._content(completion)
        if key is None or self.speed.alone(key):  # a call beside others also waited for them
            self._measure(completion, request, content, time.monotonic() - started)
        return content

    def _measure(self, completion: Any, request: dict[str, Any], content: str, seconds: float) -> None:
        """Record one reply's time on the speed meter: the server's token counts, else estimates."""
        usage = getattr(completion, "usage", None)
        cpt = self._settings.chars_per_token
        prompt = getattr(usage, "prompt_tokens", None)
        reply = getattr(usage, "completion_tokens", None)
        if not isinstance(prompt, int) or prompt <= 1:
            prompt = estimate_messages_tokens(request["messages"], cpt)
        if not isinstance(reply, int) or reply <= 1:
            reply = estimate_tokens(content, cpt)
        self.speed.record(prompt, reply, seconds, cap=request.get("max_tokens"))

    def _aclient(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(**self._client_kwargs())
            self._async[loop] = client
        return client

    def _content(self, completion: Any) -> str:
        choices = getattr(completion, "choices", None)
        if not choices:
            raise LLMError(
                f"the LLM at {self._settings.base_url} returned no choices; check the server's logs"
            )
        content = choices[0].message.content
        if not content or not content.strip():
            raise LLMError(f"the LLM at {self._settings.base_url} returned an empty message")
        return content

    def _step_down(
        self, level: StructuredOutput, schema: dict[str, Any] | None, error: openai.APIStatusError
    ) -> StructuredOutput:
        """After a refusal of a structured request, the next simpler style; otherwise (a 400 to a plain
        request) LLMError."""
        if schema is None or level == "prompt":
            raise LLMError(
                f"the LLM at {self._settings.base_url} rejected the request (400): {error.message}; "
                "check DEEPCITE_LLM_MODEL and the server's supported parameters"
            ) from error
        lower = _LEVELS[_LEVELS.index(level) + 1]
        log.info(
            "LLM server rejected response_format %s (%d); falling back to %s", level, error.status_code, lower
        )
        with self._level_lock:
            if _LEVELS.index(self._level) < _LEVELS.index(lower):
                self._level = lower
        if self._memory is not None:
            self._memory.remember(str(self._settings.base_url), self.model, lower)
        return lower

    async def _awith_retries(self, call: Callable[[], Awaitable[str]], deadline: tuple[float, float]) -> str:
        end, seconds = deadline
        retrying = self._retry.retrying(end)
        try:
            reply = await retrying(call)
        except (openai.BadRequestError, _FormatRefused):
            raise
        except (openai.OpenAIError, ValueError) as exc:
            attempts = retrying.statistics.get("attempt_number", 1)
            if is_unreachable(exc):
                raise self._breaker.trip(exc) from exc
            if self._retry.should_retry(exc) and attempts <= self._settings.max_retries:
                raise LLMTimeoutError(  # stopped because the next try would not fit before the deadline
                    f"the LLM at {self._settings.base_url} (model {self.model}) did not answer within "
                    f"{seconds:g} s ({attempts} attempts, last: {exc}); settings llm.call_deadline_s and "
                    "answer.budget.request_s",
                    seconds,
                ) from exc
            raise self._final_error(exc, attempts) from exc
        self._breaker.reset()
        return reply

    def _final_error(self, error: BaseException, attempts: int) -> LLMError:
        where = f"the LLM at {self._settings.base_url} (model {self.model})"
        if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
            return LLMError(f"{where} rejected the API key ({error.status_code}); set DEEPCITE_LLM_API_KEY")
        if isinstance(error, openai.NotFoundError):
            return LLMError(
                f"{where} answered 404: check DEEPCITE_LLM_MODEL and that DEEPCITE_LLM_BASE_URL ends in /v1"
            )
        after = retry_after_seconds(error)
        if after is not None and after > self._settings.backoff_max_s:
            return LLMError(
                f"{where} asks to retry after {after:.0f}s, longer than DEEPCITE_LLM_BACKOFF_MAX_S="
                f"{self._settings.backoff_max_s}; try later or raise that setting"
            )
        if isinstance(error, ValueError):  # the SDK could not decode the body
            return LLMError(f"{where} sent a response that is not valid JSON ({error}); check the server")
        if is_transient(error):
            return LLMError(
                f"{where} still failing after {attempts} attempts: {error}; "
                "check the server or raise DEEPCITE_LLM_TIMEOUT_S / DEEPCITE_LLM_MAX_RETRIES"
            )
        return LLMError(f"{where} failed: {error}")
