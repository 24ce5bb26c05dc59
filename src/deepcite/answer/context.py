"""The shared evidence context of one request, and a store of contexts for concurrent requests.

Numbering (decided once per request, so every part of the answer cites the same ids):

1. The selected chunks are the pack's final evidence, deduplicated by ``(doc_id, chunk_id)`` keeping the
   best score, ordered by score (ties: document then chunk id), capped at ``answer.context.max_chunks``. They get
   ``[1]..[N]``. The quick summary and the long answer cite only these.
2. Each sub-question keeps its own evidence (at most ``max_subquery_chunks``, by score). A chunk already
   selected keeps its id; a chunk that is not gets the next free id ``N+1, N+2, …``, in order of
   sub-question then score. So ids are unique within the request, and a sub-answer's citations resolve
   in the response's citation list (:meth:`ResponseContext.all_chunks`).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from cachetools import TTLCache
from pydantic import BaseModel, Field

from deepcite.config import AnswerSettings
from deepcite.errors import NotFoundError
from deepcite.models import Candidate, Chunk, EvidencePack, QueryAspect

log = logging.getLogger(__name__)


class ContextChunk(Chunk):
    """A chunk of the context with its display id ``[id]`` and the score that selected it.

    Every :class:`~deepcite.models.Chunk` field (file, page, page_end, section, authors, …) comes along,
    so a field added to chunks reaches citations without copying; ``acl`` stays internal (never
    serialised), so a response does not name groups the caller may not know of.
    """

    id: int
    score: float
    acl: list[str] = Field(default_factory=list, exclude=True)


class ResponseContext(BaseModel):
    """Everything the answer stage may cite for one request (see the module docstring for numbering)."""

    request_id: str
    query: str
    selected_chunks: list[ContextChunk] = Field(default_factory=list)
    subquery_evidence: dict[str, list[ContextChunk]] = Field(default_factory=dict)
    aspects: list[QueryAspect] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @classmethod
    def from_pack(
        cls,
        pack: EvidencePack,
        settings: AnswerSettings,
        *,
        aspects: Iterable[QueryAspect] | None = None,
        request_id: str | None = None,
    ) -> ResponseContext:
        """Number the pack's evidence once for this request."""
        numbered: dict[tuple[str, str], ContextChunk] = {}

        def number(candidate: Candidate) -> ContextChunk:
            if candidate.key not in numbered:
                numbered[candidate.key] = _to_chunk(candidate, len(numbered) + 1)
            return numbered[candidate.key]

        selected = [number(c) for c in _best_first(pack.final_evidence)[: settings.context.max_chunks]]
        per_subquery = {
            subquestion: [number(c) for c in _best_first(candidates)[: settings.context.max_subquery_chunks]]
            for subquestion, candidates in pack.subquery_evidence.items()
        }
        return cls(
            request_id=request_id or uuid.uuid4().hex,
            query=pack.question,
            selected_chunks=selected,
            subquery_evidence=per_subquery,
            aspects=list(aspects if aspects is not None else pack.coverage.aspects),
        )

    def all_chunks(self) -> list[ContextChunk]:
        """Every numbered chunk of the request (selected, then sub-question extras), ordered by id."""
        by_id = {c.id: c for c in self.selected_chunks}
        for chunks in self.subquery_evidence.values():
            by_id.update((c.id, c) for c in chunks)
        return [by_id[i] for i in sorted(by_id)]

    def is_empty(self) -> bool:
        return not self.selected_chunks and not any(self.subquery_evidence.values())


def _best_first(candidates: Iterable[Candidate]) -> list[Candidate]:
    best: dict[tuple[str, str], Candidate] = {}
    for c in candidates:
        if c.key not in best or c.score > best[c.key].score:
            best[c.key] = c
    return sorted(best.values(), key=lambda c: (-c.score, c.chunk.doc_id, c.chunk.chunk_id))


def _to_chunk(candidate: Candidate, display_id: int) -> ContextChunk:
    return ContextChunk(**candidate.chunk.model_dump(), id=display_id, score=candidate.score)


class ResponseContextManager:
    """Contexts by request id for concurrent requests; thread-safe, and safe from asyncio tasks.

    Every operation holds a lock for a few dict operations only (no I/O, no awaits), so tasks on an
    event loop and threads may call it alike. A context expires ``answer.context.ttl_s`` after it was stored;
    past ``answer.context.max_count`` the oldest are evicted. :meth:`start` runs a daemon thread that removes
    expired contexts every ``context_cleanup_interval_s``; :meth:`stop` ends it. ``clock`` (monotonic
    seconds) is replaceable so tests can move time without sleeping.
    """

    def __init__(self, settings: AnswerSettings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = settings.context.ttl_s
        self._interval = settings.context.cleanup_interval_s
        self._lock = threading.Lock()
        # cachetools' TTL cache: expiry after ``ttl``, least recently used first past ``maxsize``
        self._items: TTLCache[str, ResponseContext] = TTLCache(
            maxsize=settings.context.max_count, ttl=settings.context.ttl_s, timer=clock
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def put(self, context: ResponseContext) -> str:
        """Store (or replace) a context; returns its request id."""
        with self._lock:
            self._items.pop(context.request_id, None)  # a replaced context starts a new lifetime
            self._items[context.request_id] = context
        return context.request_id

    def get(self, request_id: str) -> ResponseContext:
        """The stored context; NotFoundError when the id is unknown or has expired."""
        with self._lock:
            self._items.expire()  # an expired context is dropped when it is asked for
            context = self._items.get(request_id)
        if context is None:
            raise NotFoundError(
                f"no answer context for request id {request_id!r}: unknown or expired "
                f"(contexts live {self._ttl:.0f}s); run the search again"
            )
        return context

    def delete(self, request_id: str) -> bool:
        """Forget a context; True when it was stored."""
        with self._lock:
            return self._items.pop(request_id, None) is not None

    def size(self) -> int:
        """How many live contexts are stored."""
        with self._lock:
            return len(self._items)

    def cleanup(self) -> int:
        """Remove expired contexts now; returns how many were removed."""
        with self._lock:
            return len(self._items.expire())

    def start(self) -> None:
        """Start background cleanup (idempotent)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="deepcite-context-cleanup", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop background cleanup and wait for the thread to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            removed = self.cleanup()
            if removed:
                log.debug("evicted %d expired answer contexts", removed)
