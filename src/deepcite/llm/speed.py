"""Slow-model detection: how fast the model reads a prompt and writes a reply, measured from its own replies.

deepcite's idea here: a small local model on a busy machine can take minutes over one prompt, and a stage that
starts a call it cannot finish spends the time the later stages (the answer's parts) needed. So every reply's
time is measured with its token counts (the server's ``usage``, else the ``llm.chars_per_token`` estimate),
and the seconds of a call are modelled as ``read * prompt_tokens + write * reply_tokens``, fitted by least
squares over the last ``llm.speed.window`` replies of the last ``llm.speed.max_age_s`` (a machine's load
changes: a model measured slow is measured again once its replies age out, as a refused call teaches nothing). While the replies cannot tell reading from writing apart
(fewer than ``llm.speed.min_fit_replies``, replies of one shape, or a fit that reads slower than it writes, as
noise and the server's prompt cache can make it), reading is taken to be ``llm.speed.read_write_ratio`` times faster than
writing and only the overall pace is fitted. A call that timed out is a measurement for the rest of its request only
(it took at least that long for its prompt and its reply cap; ``bounds``, the request's
:attr:`~deepcite.llm.deadline.RequestBudget.timed_out`): a hung server and a slow model look alike, and the next request tries again. With ``llm.speed.assume_serial`` (a single-slot local server, the case
where a model is slow), the calls already in flight are predicted to finish before a new one starts.

Only a call that had the server to itself is measured (on a single-slot server a call sent beside others
also waits for them). Before a call is sent, its seconds are predicted, its reply taken at the stage's output cap times the largest
share of their caps the measured replies ran to (a small model that does not stop runs to its cap); a call that will not fit the time its stage has left
raises :class:`ModelTooSlowError` at once, and the part runs offline with the prediction as its reason. The
answer's prompts ask :meth:`SpeedMeter.prompt_tokens_within` how many prompt tokens the time left can read, and
show only the passages that fit.

Usage::

    meter = SpeedMeter(LLMSpeedSettings())
    meter.record(prompt_tokens=1200, reply_tokens=200, seconds=9.5)
    meter.predict(800, 256)  # seconds, or None before llm.speed.min_replies replies
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from deepcite.config import LLMSpeedSettings
from deepcite.errors import LLMTimeoutError


@dataclass(frozen=True)
class Pace:
    """Seconds per prompt token read and per reply token written, and what they were fitted from."""

    read_s: float
    write_s: float
    replies: int

    @property
    def read_tps(self) -> float:
        return 1.0 / self.read_s if self.read_s > 0 else float("inf")

    @property
    def write_tps(self) -> float:
        return 1.0 / self.write_s if self.write_s > 0 else float("inf")

    def seconds(self, prompt_tokens: int, reply_tokens: int) -> float:
        return self.read_s * prompt_tokens + self.write_s * reply_tokens

    def describe(self) -> str:
        return (
            f"reads {self.read_tps:.0f} and writes {self.write_tps:.0f} tokens/s over {self.replies} replies"
        )


class ModelTooSlowError(LLMTimeoutError):
    """The model's measured pace cannot finish this call in the time its stage has left; it was not sent (a
    timeout foreseen: ``seconds`` is the time that bound the call, as for any :class:`LLMTimeoutError`)."""

    def __init__(self, predicted_s: float, left_s: float, pace: Pace, seconds: float | None = None) -> None:
        super().__init__(
            f"the model would need about {predicted_s:.0f} s for this call and its stage has {left_s:.0f} s left "
            f"(it {pace.describe()}; settings llm.speed, llm.stages, answer.budget)",
            left_s if seconds is None else seconds,
        )
        self.predicted_s = predicted_s
        self.left_s = left_s
        self.reason = f"model too slow: needs ~{predicted_s:.0f} s, {left_s:.0f} s left"


Bounds = Sequence[tuple[int, int, float]]  # a request's timed-out calls: (prompt tokens, reply cap, seconds)


@dataclass(frozen=True)
class _Sample:
    prompt_tokens: int
    reply_tokens: int
    seconds: float
    at: float  # monotonic time it was measured


class SpeedMeter:
    """The measured pace of one server's model (thread-safe; one per client, shared by every request)."""

    def __init__(self, settings: LLMSpeedSettings) -> None:
        self.settings = settings
        self._samples: deque[_Sample] = deque(maxlen=settings.window)
        self._lock = threading.Lock()
        self._shares: deque[float] = deque(maxlen=settings.window)  # replies' tokens / their output cap
        self._in_flight: dict[int, float] = {}  # calls sent and not ended: their predicted end (monotonic)
        self._next_id = 0
        self._running: dict[int, bool] = {}  # calls in flight: whether another ran beside them

    def record(self, prompt_tokens: int, reply_tokens: int, seconds: float, cap: int | None = None) -> None:
        """One reply of ``reply_tokens`` under an output cap of ``cap``, which took ``seconds``."""
        if seconds <= 0 or prompt_tokens + reply_tokens <= 0:
            return
        with self._lock:
            self._samples.append(
                _Sample(max(0, prompt_tokens), max(0, reply_tokens), seconds, time.monotonic())
            )
            if cap:
                self._shares.append(min(1.0, reply_tokens / cap))

    def note_cap_run_out(self) -> None:
        """A call ran out of time before its reply came: plan later replies at their whole cap (a reply that
        does not stop is what runs out of time), in every request until it ages out of the window."""
        with self._lock:
            self._shares.append(1.0)

    def reply_tokens(self, cap: int) -> int:
        """The reply length to plan for under an output cap: the cap times the largest share of their caps the
        measured replies ran to (the whole cap before any was measured: a small model that does not stop runs
        to it)."""
        return max(1, round(cap * self._planned_share()))

    def _planned_share(self) -> float:
        """The largest share of their output caps the measured replies ran to (1.0 before any)."""
        with self._lock:
            return max(self._shares, default=1.0)

    def samples(self) -> list[tuple[int, int, float]]:
        """The replies measured, oldest first: (prompt tokens, reply tokens, seconds)."""
        with self._lock:
            return [(x.prompt_tokens, x.reply_tokens, x.seconds) for x in self._samples]

    @property
    def replies(self) -> int:
        with self._lock:
            return len(self._samples)

    def pace(self, bounds: Bounds = ()) -> Pace | None:
        """The fitted pace (with the request's timed-out calls, ``bounds``), or None before ``min_replies``
        replies (or when disabled)."""
        now = time.monotonic()
        oldest = now - self.settings.max_age_s
        with self._lock:
            samples = [x for x in self._samples if x.at >= oldest]
        samples += [_Sample(p, r, t, now) for p, r, t in bounds]
        if not self.settings.enabled or len(samples) < self.settings.min_replies:
            return None
        return _fit(samples, self.settings.read_write_ratio, self.settings.min_fit_replies)

    def predict(self, prompt_tokens: int, reply_tokens: int, bounds: Bounds = ()) -> float | None:
        """Seconds a call of this size is expected to take, or None while the pace is unknown."""
        pace = self.pace(bounds)
        return None if pace is None else pace.seconds(prompt_tokens, reply_tokens)

    def queued_s(self) -> float:
        """Predicted seconds the calls in flight still need (``llm.speed.assume_serial``: a single-slot server
        answers them before a new call); 0 otherwise."""
        with self._lock:
            return self._queued()

    def check(
        self, prompt_tokens: int, cap: int, left_s: float, seconds: float | None = None, bounds: Bounds = ()
    ) -> None:
        """Raise :class:`ModelTooSlowError` when a call with this prompt and output cap, with
        ``llm.speed.margin``, would not end in ``left_s`` (after the calls in flight, :meth:`queued_s`)."""
        pace = self.pace(bounds)
        if pace is None:
            return
        predicted = pace.seconds(prompt_tokens, self.reply_tokens(cap)) + self.queued_s()
        if predicted * self.settings.margin > left_s:
            raise ModelTooSlowError(predicted, left_s, pace, seconds)

    @contextmanager
    def in_flight(self, prompt_tokens: int, cap: int, bounds: Bounds = ()) -> Iterator[int]:
        """A call sent: its predicted end counts in :meth:`queued_s` until it ends; yields its key for
        :meth:`alone`."""
        predicted = self.predict(prompt_tokens, self.reply_tokens(cap), bounds)
        with self._lock:
            key = self._next_id
            self._next_id += 1
            if predicted is not None:
                self._in_flight[key] = time.monotonic() + self._queued() + predicted
            for other in self._running:
                self._running[other] = True
            self._running[key] = bool(self._running)
        try:
            yield key
        finally:
            with self._lock:
                self._in_flight.pop(key, None)
                self._running.pop(key, None)

    def alone(self, key: int) -> bool:
        """Whether call ``key`` has had the server to itself so far (no other call of this client in flight at
        any time): only such a call's time measures the model's pace on a single-slot server, where a call sent
        beside others also waits for them (``llm.speed.assume_serial``)."""
        if not self.settings.assume_serial:
            return True
        with self._lock:
            return not self._running.get(key, True)

    def _queued(self) -> float:
        if not self.settings.assume_serial:
            return 0.0
        now = time.monotonic()
        return sum(max(0.0, end - now) for end in self._in_flight.values())

    def cap_within(self, seconds: float, prompt_tokens: int, bounds: Bounds = ()) -> int | None:
        """The largest output cap whose planned reply (:meth:`reply_tokens`) fits in ``seconds`` (with the
        margin) after reading ``prompt_tokens``; None while the pace is unknown."""
        pace = self.pace(bounds)
        if pace is None:
            return None
        left = seconds / self.settings.margin - pace.read_s * prompt_tokens
        if left <= 0 or pace.write_s <= 0:
            return 0
        return int(left / pace.write_s / max(self._planned_share(), 1e-6))

    def prompt_tokens_within(self, seconds: float, cap: int, bounds: Bounds = ()) -> int | None:
        """How many prompt tokens can be read in ``seconds`` (with the margin) leaving time for a reply under the
        output cap ``cap``; None while the pace is unknown."""
        pace = self.pace(bounds)
        if pace is None:
            return None
        left = seconds / self.settings.margin - pace.write_s * self.reply_tokens(cap)
        if left <= 0:
            return 0
        return int(left / pace.read_s) if pace.read_s > 0 else 1 << 30


def _fit(samples: list[_Sample], ratio: float, min_fit: int) -> Pace:
    """Least squares of ``seconds = read * prompt + write * reply`` with no intercept, from ``min_fit`` replies
    on; when there are fewer, or the fit is singular or gives reading slower than writing (noise, a prompt the
    server had cached), one pace with reading ``ratio`` times faster than writing."""
    spp = sum(s.prompt_tokens**2 for s in samples)
    srr = sum(s.reply_tokens**2 for s in samples)
    spr = sum(s.prompt_tokens * s.reply_tokens for s in samples)
    sps = sum(s.prompt_tokens * s.seconds for s in samples)
    srs = sum(s.reply_tokens * s.seconds for s in samples)
    det = spp * srr - spr * spr
    if len(samples) >= min_fit and det > 1e-9 * max(1.0, spp * srr):
        read = (sps * srr - srs * spr) / det
        write = (srs * spp - sps * spr) / det
        if 0 < read <= write:  # a model never writes a token faster than it reads one
            return Pace(read, write, len(samples))
    weighted = sum(s.prompt_tokens / ratio + s.reply_tokens for s in samples)
    write = sum(s.seconds for s in samples) / max(weighted, 1e-9)
    return Pace(write / ratio, write, len(samples))
