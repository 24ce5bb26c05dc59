"""Background ingest jobs of the upload route: one worker thread runs them in order, and each job keeps an
append-only list of progress events that any number of SSE clients can follow from the start.

Usage::

    jobs = IngestJobs(history=100)
    job = jobs.submit("papers", run=lambda on_progress: pipeline.ingest_files(paths, on_progress=on_progress),
                      files=["pasa.pdf"], owner=("cardiology",), cleanup=tmp.cleanup)
    async for name, data in jobs.events(job.job_id): ...

Jobs run one at a time (ingestion is CPU-bound and shares the embedder); a finished job stays readable until
``history`` newer jobs have been submitted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from deepcite.errors import DeepciteError, NotFoundError
from deepcite.ingest.report import (
    FileProgressCallback,
    FileReport,
    FileStage,
    IngestProgress,
    IngestReport,
)

log = logging.getLogger(__name__)

IngestRun = Callable[[FileProgressCallback], IngestReport]


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"  # the ingest ran; each file's outcome is in ``files`` (some may be skipped)
    FAILED = "failed"  # the ingest itself stopped; ``error`` says why


class IngestJob(BaseModel):
    """``GET /api/jobs/{job_id}``: an upload's ingest, its per-file outcomes so far, and its final report."""

    job_id: str
    collection: str
    state: JobState = JobState.QUEUED
    uploaded: list[str]  # the files' names, in upload order
    done: int = 0  # files finished (ingested, unchanged or skipped)
    total: int
    files: list[FileReport] = Field(default_factory=list)  # each file's outcome, as it finishes
    report: IngestReport | None = None  # the whole ingest report, once done
    error: str | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.state in (JobState.DONE, JobState.FAILED)


class _Entry:
    """A job, the groups of the caller who submitted it, and its event log (guarded by the registry lock)."""

    def __init__(self, job: IngestJob, owner: tuple[str, ...] | None) -> None:
        self.job = job
        self.owner = owner
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.changed: asyncio.Event | None = None  # set on the event loop whenever ``events`` grows
        self.loop: asyncio.AbstractEventLoop | None = None


class IngestJobs:
    """Submitted ingest jobs, run one at a time on a worker thread (thread-safe)."""

    def __init__(self, history: int) -> None:
        self._history = history
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, _Entry] = OrderedDict()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deepcite-ingest")

    def submit(
        self,
        collection: str,
        run: IngestRun,
        *,
        files: list[str],
        owner: tuple[str, ...] | None,
        cleanup: Callable[[], None],
    ) -> IngestJob:
        """Queue ``run`` (called with a per-file progress callback); ``cleanup`` runs after it, always."""
        job = IngestJob(job_id=uuid.uuid4().hex, collection=collection, uploaded=files, total=len(files))
        entry = _Entry(job, owner)
        try:
            entry.loop = asyncio.get_running_loop()
            entry.changed = asyncio.Event()
        except RuntimeError:  # submitted outside an event loop: events are polled by the job's state only
            pass
        with self._lock:
            self._jobs[job.job_id] = entry
            self._evict()
            submitted = job.model_copy(deep=True)
        self._emit(entry, "state", {"job_id": job.job_id, "state": job.state, "total": job.total})
        self._worker.submit(self._run, entry, run, cleanup)
        return submitted

    def get(self, job_id: str, groups: tuple[str, ...] | None) -> IngestJob:
        """A copy of the job, if ``groups`` may read it (NotFoundError otherwise, so ids do not leak)."""
        entry = self._entry(job_id, groups)
        with self._lock:
            return entry.job.model_copy(deep=True)

    async def events(self, job_id: str, groups: tuple[str, ...] | None) -> AsyncIterator[tuple[str, dict]]:
        """Every event of the job from its first, then new ones as they happen, until it has finished:
        ``state`` (queued, running), ``file`` (a file's stage: reading, read, or done with its outcome, and
        done/total), ``done`` (the job)."""
        entry = self._entry(job_id, groups)
        seen = 0
        while True:
            with self._lock:
                fresh = entry.events[seen:]
                changed = entry.changed
            for event in fresh:
                yield event
            seen += len(fresh)
            if fresh and fresh[-1][0] == "done":
                return
            if changed is None:
                raise DeepciteError("this job was not submitted from the server's event loop; poll its state")
            if not fresh:
                await changed.wait()

    def shutdown(self) -> None:
        """Stop taking jobs; queued ones are cancelled, a running one finishes in the background."""
        self._worker.shutdown(wait=False, cancel_futures=True)

    # -- internals -------------------------------------------------------------------------------------
    def _entry(self, job_id: str, groups: tuple[str, ...] | None) -> _Entry:
        with self._lock:
            entry = self._jobs.get(job_id)
        if entry is None or not _may_read(entry.owner, groups):
            raise NotFoundError(
                "no upload job with that id that you may read (jobs are kept for the last "
                f"{self._history} uploads); upload the files again"
            )
        return entry

    def _run(self, entry: _Entry, run: IngestRun, cleanup: Callable[[], None]) -> None:
        job = entry.job
        try:
            with self._lock:
                job.state = JobState.RUNNING
            self._emit(entry, "state", {"job_id": job.job_id, "state": job.state, "total": job.total})

            def on_progress(progress: IngestProgress) -> None:
                if progress.stage is FileStage.DONE and progress.file is not None:
                    with self._lock:
                        job.files.append(progress.file)
                        job.done = progress.done
                self._emit(entry, "file", progress.model_dump(mode="json"))

            report = run(on_progress)
            with self._lock:
                job.report = report
                job.files = list(report.files)
                job.done = len(report.files)
                job.state = JobState.DONE
        except DeepciteError as exc:
            with self._lock:
                job.error = str(exc)
                job.state = JobState.FAILED
        except Exception as exc:  # a bug must end the job visibly, not leave it "running" for ever
            log.exception("upload job %s failed", job.job_id)
            with self._lock:
                job.error = f"internal error ({type(exc).__name__}); see the server log"
                job.state = JobState.FAILED
        finally:
            cleanup()
            with self._lock:
                job.finished_at = datetime.now(UTC)
                final = job.model_dump(mode="json")
            self._emit(entry, "done", final)

    def _emit(self, entry: _Entry, name: str, data: dict[str, Any]) -> None:
        with self._lock:
            entry.events.append((name, data))
        if entry.loop is not None and entry.changed is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is listening any more
                entry.loop.call_soon_threadsafe(self._wake, entry)

    def _wake(self, entry: _Entry) -> None:
        """On the event loop: wake every waiter, and give later waiters a fresh event."""
        with self._lock:
            changed, entry.changed = entry.changed, asyncio.Event()
        if changed is not None:
            changed.set()

    def _evict(self) -> None:
        while len(self._jobs) > self._history:
            oldest = next((k for k, e in self._jobs.items() if e.job.finished), None)
            if oldest is None:
                return  # every kept job is still queued or running
            del self._jobs[oldest]


def _may_read(owner: tuple[str, ...] | None, groups: tuple[str, ...] | None) -> bool:
    """An unrestricted caller reads every job; a restricted one only jobs submitted with groups it has."""
    return groups is None or (owner is not None and set(owner) <= set(groups))
