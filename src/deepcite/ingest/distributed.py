"""Ingestion as Ray work: files read and chunked, chunks embedded, by a pool of Ray actors.

Usage::

    IngestPipeline(collection).ingest("corpus.jsonl", ray="local")  # a cluster: "auto", "ray://head:10001"

    deepcite ingest papers/ --collection papers --ray local      # the same from the CLI

Each actor (:class:`IngestWorker`) loads the embedding model once, then takes batches: a file to read
(in the same bounded child process as a single-process ingest) and chunk, a batch of a corpus's records to
chunk, or the texts of a batch's chunks to embed. This process (the driver) does what a single-process
ingest does between those steps, with the same code (:class:`~deepcite.ingest.steps.IngestSteps`): it loads a corpus's records, groups files and records into the same write batches, checks each batch's
chunk ids against the store and sends only the chunks of new or changed documents to be embedded, and
writes the batches to the store in input order. So the chunk ids, payloads, vectors and BM25 weights are
those of a single-process ingest (in bf16 the vectors are equal up to bf16's rounding, which depends on
the number of threads torch splits a small batch's products over: an actor has its own); a re-run after an
interruption embeds and writes only what is missing; the progress callbacks and the :class:`~deepcite.ingest.report.IngestReport` are the same.

Up to ``ray.batches_in_flight`` calls per actor are queued, so an actor never waits for the driver.
A dead actor is started again (``ray.max_restarts``, its model reloaded) and its batch sent again
(``ray.max_task_retries``); past that the ingest stops with an :class:`IngestError`, and running it again
finishes it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from deepcite.config import RaySettings, Settings
from deepcite.errors import ConfigError, DeepciteError, IngestError
from deepcite.ingest.readers import ReadResult
from deepcite.ingest.report import (
    FileProgressCallback,
    FileReport,
    FileStatus,
    IngestReport,
    ProgressCallback,
    read_file_report,
)
from deepcite.ingest.steps import ChunksByDoc, FileRead, IngestSteps, WritePlan, chunk_batch, embed_texts
from deepcite.models import Document, VectorSource
from deepcite.retrieval.embedders import Embedder, vector_source

LOCAL = "local"  # the address that starts Ray on this machine


class IngestWorker:
    """A Ray actor's work: the embedding model, loaded once, then files read, records chunked, texts
    embedded, one batch per call."""

    def __init__(self, settings: Settings, embedder: Callable[[Settings], Embedder]) -> None:
        self._settings = settings
        self._embedder = embedder(settings)

    def dim(self) -> int:
        """The model's vector size (answered once the model is loaded)."""
        return self._embedder.dim

    def source(self) -> VectorSource:
        """What makes this actor's vectors: its model and the precision its CPU runs it in."""
        return vector_source(self._embedder)

    def read(self, path: Path, name: str, acl: Sequence[str]) -> tuple[FileReport, ReadResult, ChunksByDoc]:
        """One file read (:func:`read_file_report`) and its documents chunked."""
        file, result = read_file_report(path, name, acl, self._settings.ingest)
        return file, result, chunk_batch(result.documents, self._settings.chunker)

    def chunk(self, docs: list[Document]) -> ChunksByDoc:
        """A batch of records chunked."""
        return chunk_batch(docs, self._settings.chunker)

    def embed(self, texts: list[str]) -> tuple[np.ndarray, float]:
        """The texts' passage vectors, and the seconds the model took."""
        return embed_texts(self._embedder, texts)


@dataclass
class _Write:
    """A batch planned and sent to be embedded, waiting to be written in its turn."""

    plan: WritePlan | None  # None: a skipped file, nothing to write
    counted: IngestReport | None = None  # the batch's counts, added to the ingest's report once written
    vectors: Any = None  # the ObjectRef of the embedding call; None when nothing is embedded
    group: list[FileRead] | None = None  # the files the batch came from (files only)


class RayIngest:
    """The driver of a Ray ingest into one collection: a pool of :class:`IngestWorker` actors.

    Made by :meth:`start` (a context manager that stops the actors, and Ray if it started it);
    :class:`~deepcite.ingest.pipeline.IngestPipeline` with ``ray=`` uses it. ``steps`` are the ingest's
    steps that touch the collection, run here in the driver.
    """

    def __init__(self, ray: ModuleType, steps: IngestSteps, workers: list[Any]) -> None:
        self._ray = ray
        self._steps = steps
        self.workers = workers
        self.dim = 0  # the model's vector size, once the actors have loaded it
        self.source = VectorSource(model=None)  # what makes the actors' vectors, the same on every one
        self._window = len(workers) * steps.settings.ray.batches_in_flight
        self._queued = [0] * len(workers)  # calls sent to each actor and not yet collected
        self._sent_to: dict[Any, int] = {}
        self._chunks: dict[str, ChunksByDoc] = {}  # chunks of files read, by file name, until written

    @classmethod
    @contextmanager
    def start(
        cls, steps: IngestSteps, address: str, *, embedder: Callable[[Settings], Embedder]
    ) -> Iterator[RayIngest]:
        """Join Ray at ``address`` (``"local"``: start it on this machine; a process already connected to
        Ray keeps that connection), start the actors and wait until each has loaded ``embedder(settings)``."""
        ray = _import_ray()
        started_here = _connect(ray, address, steps.settings.ray)
        workers: list[Any] = []
        try:
            workers = _start_workers(ray, steps.settings, embedder)
            pool = cls(ray, steps, workers)
            pool.dim = [pool._get(w.dim.remote()) for w in workers][0]  # every model loaded
            pool.source = _one_source([pool._get(w.source.remote()) for w in workers])
            yield pool
        finally:
            for worker in workers:
                ray.kill(worker)
            if started_here:
                ray.shutdown()

    # -- a corpus of records -------------------------------------------------------------------------
    def write_documents(
        self, batches: Iterable[list[Document]], report: IngestReport, progress: ProgressCallback | None
    ) -> None:
        """Chunk and embed ``batches`` of records on the actors and write them in order, as
        :meth:`IngestPipeline.ingest <deepcite.ingest.pipeline.IngestPipeline.ingest>` does in one process."""
        self._steps.open(self.dim, self.source)
        pending: deque[_Write] = deque()
        for batch, chunks in self._ordered(("chunk", (batch,), batch) for batch in batches):
            pending.append(self._plan(chunks, len(batch), report))
            for _ in self._written(pending, report, keep=self._window):
                if progress:
                    progress(report.documents, report.written)
        for _ in self._written(pending, report, keep=0):
            if progress:
                progress(report.documents, report.written)

    # -- files ---------------------------------------------------------------------------------------
    def read_files(
        self, paths: Sequence[Path], names: Sequence[str], acl: Sequence[str], report: IngestReport
    ) -> Iterator[FileRead]:
        """Each file read and chunked on an actor, in input order, entered in the report as it comes."""
        calls = (
            ("read", (path.resolve(), name, list(acl)), path) for path, name in zip(paths, names, strict=True)
        )
        for path, (file, result, chunks) in self._ordered(calls):
            self._steps.account(file, result, report)
            self._chunks[file.file] = chunks
            yield file, path, result

    def write_files(
        self,
        groups: Iterable[list[FileRead]],
        report: IngestReport,
        total: int,
        progress: ProgressCallback | None,
        on_progress: FileProgressCallback | None,
    ) -> None:
        """Embed and write the files read by :meth:`read_files`, grouped as a single-process ingest
        groups them (:meth:`IngestSteps.file_groups`), in order, finishing each file as its group is written."""
        steps = self._steps
        pending: deque[_Write] = deque()
        done = 0
        for group in groups:
            if group[0][0].status is FileStatus.SKIPPED:
                pending.append(_Write(None, group=group))
            else:
                steps.open(self.dim, self.source)
                chunks: ChunksByDoc = {}
                for file, _, _ in group:
                    chunks.update(self._chunks.pop(file.file))
                write = self._plan(chunks, sum(len(r.documents) for _, _, r in group), report)
                write.group = group
                pending.append(write)
            for write in self._written(pending, report, keep=self._window):
                done = steps.files_written(
                    write.group or [], write.plan, report, done, total, progress, on_progress
                )
        for write in self._written(pending, report, keep=0):
            done = steps.files_written(
                write.group or [], write.plan, report, done, total, progress, on_progress
            )

    # -- the steps -----------------------------------------------------------------------------------
    def _plan(self, chunks: ChunksByDoc, documents: int, report: IngestReport) -> _Write:
        """Check a batch against the store (:meth:`IngestSteps.plan`) and send its new chunks to be
        embedded; its counts wait beside it, so progress counts only what is written, as in one process."""
        counted = IngestReport(collection=report.collection)
        plan = self._steps.plan(chunks, documents, counted)
        return _Write(plan, counted, self._call("embed", plan.texts) if plan.chunks else None)

    def _written(self, pending: deque[_Write], report: IngestReport, *, keep: int) -> Iterator[_Write]:
        """Write the batches at the head of ``pending`` whose vectors are ready, in order, waiting for the
        head while more than ``keep`` batches are pending; yields each batch once written."""
        while pending:
            head = pending[0]
            if len(pending) <= keep and head.vectors is not None:
                ready, _ = self._ray.wait([head.vectors], timeout=0)
                if not ready:
                    return
            pending.popleft()
            if head.plan is not None and head.vectors is not None:
                vectors, seconds = self._get(head.vectors)
                report.embed_seconds += seconds
                self._steps.write(head.plan, vectors, report)
            if head.counted is not None:
                report.documents += head.counted.documents
                report.chunks += head.counted.chunks
                report.unchanged += head.counted.unchanged
            yield head

    def _ordered(self, calls: Iterable[tuple[str, tuple[Any, ...], Any]]) -> Iterator[tuple[Any, Any]]:
        """``(tag, result)`` of each ``(method, args, tag)`` call, in order, with up to the window's
        number of calls queued on the actors ahead of the one the caller waits for."""
        queue: deque[tuple[Any, Any]] = deque()
        for method, args, tag in calls:
            queue.append((tag, self._call(method, *args)))
            if len(queue) >= self._window:
                tag, ref = queue.popleft()
                yield tag, self._get(ref)
        while queue:
            tag, ref = queue.popleft()
            yield tag, self._get(ref)

    def _call(self, method: str, *args: Any) -> Any:
        """Send a call to the actor with the fewest calls queued; returns its ObjectRef."""
        index = min(range(len(self.workers)), key=self._queued.__getitem__)
        ref = getattr(self.workers[index], method).remote(*args)
        self._queued[index] += 1
        self._sent_to[ref] = index
        return ref

    def _get(self, ref: Any) -> Any:
        """A call's result; an error raised in the actor comes back as itself (a :class:`DeepciteError`)
        or as an :class:`IngestError`, an actor lost for good as an :class:`IngestError` saying what to do."""
        index = self._sent_to.pop(ref, None)
        if index is not None:
            self._queued[index] -= 1
        exceptions = self._ray.exceptions
        try:
            return self._ray.get(ref)
        except exceptions.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, DeepciteError):
                raise cause from None
            raise IngestError(f"a Ray worker failed: {cause!r}") from exc
        except exceptions.RayActorError as exc:
            if exc.actor_init_failed:  # the model could not be built: the error's last line says why
                reason = str(exc).strip().splitlines()[-1]
                raise IngestError(f"the Ray workers could not start: {reason}") from exc
            restarts = self._steps.settings.ray.max_restarts
            raise IngestError(
                f"a Ray worker stopped ({type(exc).__name__}) after {restarts} restarts (setting "
                "ray.max_restarts); the batches written so far are kept. Run the same ingest again to "
                "finish it: chunk ids are stable, so nothing is written twice"
            ) from exc


def _import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "ingesting on Ray needs the ray extra: pip install 'deepcite[ray]' (or pip install ray)"
        ) from exc
    return ray


def _start_workers(
    ray: ModuleType, settings: Settings, embedder: Callable[[Settings], Embedder]
) -> list[Any]:
    """The pool's actors: ``ray.workers`` of them (default: the cluster's CPUs / ``ray.cpus_per_worker``)."""
    s = settings.ray
    cpus = int(ray.cluster_resources().get("CPU", 0))
    count = s.workers or max(1, cpus // s.cpus_per_worker)
    if count * s.cpus_per_worker > cpus:  # Ray would wait for CPUs that never come
        raise ConfigError(
            f"{count} Ray workers of {s.cpus_per_worker} CPUs need {count * s.cpus_per_worker} CPUs, but "
            f"the Ray cluster has {cpus}; lower ray.workers or ray.cpus_per_worker, or add nodes"
        )
    actor = ray.remote(IngestWorker).options(
        num_cpus=s.cpus_per_worker, max_restarts=s.max_restarts, max_task_retries=s.max_task_retries
    )
    return [actor.remote(settings, embedder) for _ in range(count)]


def _connect(ray: ModuleType, address: str, settings: RaySettings) -> bool:
    """Connect this process to Ray unless it already is; returns whether Ray was started here."""
    if ray.is_initialized():
        return False
    try:
        if address == LOCAL:
            ray.init(num_cpus=settings.local_cpus, include_dashboard=False, logging_level=logging.WARNING)
        else:
            ray.init(address=address, logging_level=logging.WARNING)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise IngestError(
            f"cannot join the Ray cluster at {address!r} ({exc}); start one with `ray start --head` and give "
            "its address (auto, host:6379 or ray://host:10001), or give 'local' to start Ray on this machine"
        ) from exc
    return True


def _one_source(sources: list[VectorSource]) -> VectorSource:
    """The actors' common vector source; an error when their CPUs made ``auto`` pick different precisions."""
    if any(s != sources[0] for s in sources):
        shown = ", ".join(sorted({str(s) for s in sources}))
        raise ConfigError(
            f"the Ray actors would embed with different models or precisions ({shown}); set "
            'embedder.precision = "fp32" (or "bf16") so every node makes the same vectors'
        )
    return sources[0]
