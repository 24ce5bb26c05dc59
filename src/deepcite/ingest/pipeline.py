"""Ingest: files or records into one collection, read → chunk → dedupe ids → embed → write → graph.

Usage::

    from deepcite.ingest.pipeline import IngestPipeline

    pipeline = engine.corpus.pipeline("papers")        # or IngestPipeline(open_collection("papers"), llm=...)
    report = pipeline.ingest("corpus.jsonl")           # a corpus of records, or a folder of documents
    report = pipeline.ingest_files([Path("a.pdf")], acl=["cardiology"])
    report = pipeline.ingest("papers/", ray="local")   # the same steps, read, chunked and embedded on Ray

The steps are those of :mod:`deepcite.ingest.steps`; this module is their single-process executor and
chooses the Ray one (:mod:`deepcite.ingest.distributed`) for ``ray=``. Files are read and chunked up to
``ingest.read_ahead_batches`` write batches ahead in a worker thread (``ingest.read_ahead``) while this thread
embeds and writes the batches before, and the embedding model loads in another worker thread while the first
files are read: a file is read and chunked in its reader's child process and torch releases the GIL, so
reading, chunking and embedding share the cores; what is written, and in which order, is the same either way.
The LLM client that reads triples (``graph.llm_triples``) is handed in, built once by the Engine.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeVar, cast

from deepcite.errors import IngestError, InputError
from deepcite.ingest.formats import InputFormat, detect_format, document_files
from deepcite.ingest.loaders import LoadProblem, iter_documents
from deepcite.ingest.readers import ReadDocument
from deepcite.ingest.report import (
    FileProgress,
    FileProgressCallback,
    FileStatus,
    IngestReport,
    ProgressCallback,
    read_file_report,
)
from deepcite.ingest.steps import (
    ChunksByDoc,
    EmbedBudget,
    FileRead,
    IngestSteps,
    WritePlan,
    chunk_batch,
    embed_texts,
)
from deepcite.llm.client import LLMClient
from deepcite.models import Document
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import build_embedder, vector_source
from deepcite.retrieval.graph import GraphStats
from deepcite.retrieval.graph.triples import TripleExtractor

log = logging.getLogger(__name__)

OnError = Literal["skip", "fail"]
T = TypeVar("T")


class IngestPipeline:
    """Ingests into ``collection`` (created on the first write); ``llm`` reads triples when
    ``graph.llm_triples`` is on (without one, a warning and the offline entities only)."""

    def __init__(self, collection: Collection, *, llm: LLMClient | None = None) -> None:
        self.collection = collection
        self.settings = collection.settings
        triples = None
        if self.settings.graph.llm_triples:
            if llm is None:
                log.warning("graph.llm_triples is on but no LLM is configured; offline entities only")
            else:
                triples = TripleExtractor(llm, collection.triple_cache, self.settings.graph)
        self.steps = IngestSteps(collection, triples)

    def ingest(
        self,
        source: str | Path | Iterable[Document],
        *,
        fmt: str = "auto",
        on_error: OnError = "fail",
        batch_docs: int | None = None,
        progress: ProgressCallback | None = None,
        on_progress: FileProgressCallback | None = None,
        ray: str | None = None,
    ) -> IngestReport:
        """Load, chunk, embed and index ``source`` (a path in any supported format, or Documents).

        Idempotent: chunk ids are stable, so a re-run writes nothing new, and an interrupted run
        re-started completes without duplicates. A document whose text changed is replaced whole.
        ``on_error="fail"`` (the default) checks the whole input before writing anything and raises
        :class:`IngestError` naming file and line; ``"skip"`` writes the good records and reports the rest.
        A folder (or a file that is not a corpus of records) goes through :meth:`ingest_files`, which calls
        ``on_progress`` as each file is done. ``ray`` runs the reading, chunking and embedding on Ray
        (the ``ray`` extra): ``"local"`` starts Ray on this machine (or joins the one this process has
        started), any other value is a cluster address for ``ray.init`` (``"auto"``,
        ``"ray://head:10001"``); the store is written by this process, so the result is the same.
        """
        _check_on_error(on_error)
        if isinstance(source, (str, Path)):
            path = Path(source)
            kind = InputFormat.from_str(fmt)
            kind = detect_format(path) if kind is InputFormat.AUTO else kind
            if kind in (InputFormat.FILES, InputFormat.TEXT):
                iter_documents(path, kind)  # raises at once for a missing path or an empty folder
                files = document_files(path)
                base = path.parent if path.is_file() else path
                return self.ingest_files(
                    files,
                    names=[f.relative_to(base).as_posix() for f in files],
                    on_error=on_error,
                    batch_docs=batch_docs,
                    progress=progress,
                    on_progress=on_progress,
                    ray=ray,
                )
        batch_docs = batch_docs or self.settings.embedder.ingest_batch_docs
        report = IngestReport(collection=self.collection.name)
        started = time.perf_counter()
        if on_error == "fail" and isinstance(source, (str, Path)):
            problems = [item for item in iter_documents(source, fmt) if isinstance(item, LoadProblem)]
            if problems:
                first = problems[0]
                more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
                raise IngestError(
                    f"{first.reason}{more}; nothing was written. Fix the input or re-run with --on-error skip",
                    path=first.path,
                    line=first.line,
                )
        batches = _document_batches(_documents(source, fmt), batch_docs, report)
        if ray is not None:
            from deepcite.ingest.distributed import RayIngest

            with RayIngest.start(self.steps, ray, embedder=build_embedder) as pool:
                pool.write_documents(batches, report, progress)
            return self.steps.finish(report, started)
        self.steps.open(self.collection.embedder.dim, vector_source(self.collection.embedder))
        for batch in batches:
            self._write(chunk_batch(batch, self.settings.chunker), len(batch), report)
            if progress:
                progress(report.documents, report.written)
        return self.steps.finish(report, started)

    def ingest_files(
        self,
        paths: Sequence[Path],
        *,
        names: Sequence[str] | None = None,
        acl: Sequence[str] = (),
        on_error: OnError = "fail",
        batch_docs: int | None = None,
        progress: ProgressCallback | None = None,
        on_progress: FileProgressCallback | None = None,
        ray: str | None = None,
        embed_budget: EmbedBudget | None = None,
    ) -> IngestReport:
        """Read, chunk, embed and index files of any readable type; every file is accounted for in the
        report's ``files`` (ingested, unchanged, or skipped with its reason).

        ``names`` are the files' names as the user knows them (relative paths, upload names; default: the
        file names); a file's document id is its name. ``acl`` groups are given to every document read.
        Each file is read in a bounded child process (``ingest`` settings). ``on_error="fail"`` reads
        every file first and raises :class:`IngestError` listing the failures before writing anything;
        ``"skip"`` goes on and reports them. With ``ingest.read_ahead`` the next batches' files are read and
        chunked in a worker thread while this one embeds and writes the batch before (never more than
        ``ingest.read_ahead_batches`` ahead), and the model loads while the first files are read; the store
        is written only here, in input order. ``on_progress`` gets an
        :class:`IngestProgress` as each file is being read, is read, and is done. The originals of ingested files are kept in the collection's ``originals``. ``ray`` as in
        :meth:`ingest` (on a cluster, every node must see the files at the same paths). ``embed_budget`` bounds the
        embedding time (an upload's job; not on Ray): IngestError once it is spent, the files done so far ingested.
        """
        _check_on_error(on_error)
        names = list(names) if names is not None else [p.name for p in paths]
        if len(names) != len(paths):
            raise InputError(f"{len(paths)} files but {len(names)} names; give one name per file")
        batch_docs = batch_docs or self.settings.embedder.ingest_batch_docs
        report = IngestReport(collection=self.collection.name)
        started = time.perf_counter()
        steps = self.steps
        if ray is not None:
            from deepcite.ingest.distributed import RayIngest

            with RayIngest.start(steps, ray, embedder=build_embedder) as pool:
                reads = pool.read_files(paths, names, acl, report)
                if on_error == "fail":
                    reads = iter(list(reads))
                    steps.refuse_failed_files(report)
                groups = steps.file_groups(reads, batch_docs)
                pool.write_files(groups, report, len(paths), progress, on_progress)
            return steps.finish(report, started)
        ahead = self.settings.ingest.read_ahead_batches if self.settings.ingest.read_ahead else 0
        told = FileProgress(on_progress, len(paths))
        with _loading(self.collection, bool(ahead and paths)):
            reads = (
                self._read(path, name, acl, report, told) for path, name in zip(paths, names, strict=True)
            )
            if on_error == "fail":
                reads = iter(list(reads))  # read everything before writing anything
                steps.refuse_failed_files(report)
            done = 0
            chunked = ((group, self._chunk(group)) for group in steps.file_groups(reads, batch_docs))
            with _read_ahead(chunked, ahead) as batches:
                for group, chunks in batches:
                    plan = None
                    if chunks is not None:
                        steps.open(self.collection.embedder.dim, vector_source(self.collection.embedder))
                        documents = sum(len(r.documents) for _, _, r in group)
                        plan = self._write(chunks, documents, report, embed_budget)
                    done = steps.files_written(group, plan, report, done, len(paths), progress, told)
        return steps.finish(report, started)

    def rebuild_graph(self) -> GraphStats:
        """Build the entity graph again from every stored chunk (LLM triples as at ingest, when on)."""
        return self.steps.rebuild_graph()

    # -- the single-process executor -------------------------------------------------------------------
    def _read(
        self, path: Path, name: str, acl: Sequence[str], report: IngestReport, told: FileProgress
    ) -> FileRead:
        """The read step: one file read in its bounded child process and accounted for, its stages told."""
        told.reading(name)
        file, result = read_file_report(path, name, acl, self.settings.ingest, self.settings.chunker)
        self.steps.account(file, result, report)
        cut = None if result.chunks is None else sum(len(c) for c in result.chunks.values())
        told.read(file.model_copy(), cut)
        return file, path, result

    def _chunk(self, group: list[FileRead]) -> ChunksByDoc | None:
        """The chunk step of a group of files read (None for a skipped file: nothing to write)."""
        if group[0][0].status is FileStatus.SKIPPED:
            return None
        if all(r.chunks is not None for _, _, r in group):  # chunked in the reader's child
            return {doc_id: chunks for _, _, r in group for doc_id, chunks in (r.chunks or {}).items()}
        docs: list[Document | ReadDocument] = [d for _, _, r in group for d in r.documents]
        return chunk_batch(docs, self.settings.chunker)

    def _write(
        self, chunks: ChunksByDoc, documents: int, report: IngestReport, budget: EmbedBudget | None = None
    ) -> WritePlan:
        """The dedupe, embed (within ``budget``), write and graph steps of one batch of ``documents`` chunked;
        returns what was written."""
        steps = self.steps
        plan = steps.plan(chunks, documents, report)
        if plan.chunks:
            vectors, seconds = embed_texts(self.collection.embedder, plan.texts, budget)
            report.embed_seconds += seconds
            steps.write(plan, vectors, report)
        return plan


@contextmanager
def _loading(collection: Collection, enabled: bool) -> Iterator[None]:
    """Load ``collection``'s embedder in a worker thread while the block reads and chunks the first files
    (when ``enabled``): the first embedding then waits for what is left of the load, not for all of it.

    A failed load is not raised here: the first use of the embedder loads it again and raises there.
    Leaving the block waits for the load, so nothing of it runs once the ingest returns.
    """
    if not enabled:
        yield
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="deepcite-load-embedder") as worker:
        worker.submit(lambda: collection.embedder)
        yield


@contextmanager
def _read_ahead(items: Iterator[T], batches: int) -> Iterator[Iterator[T]]:
    """``items``, produced in one worker thread up to ``batches`` ahead of the one the caller works on (so
    memory holds ``batches + 1`` at most: a slow file to read is read while earlier, larger batches embed);
    the items of a plain iterator when ``batches`` is 0.

    The worker's exception is raised here, where its item would have been. Leaving the block (done, an
    error, Ctrl-C) waits for the items in the making, so nothing of the worker runs once the ingest returns.
    """
    if not batches:
        yield items
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="deepcite-read-ahead") as worker:
        yield _ahead(items, worker, batches)


_END = object()  # the worker's answer when ``items`` is exhausted


def _ahead(items: Iterator[T], worker: ThreadPoolExecutor, batches: int) -> Iterator[T]:
    # one worker thread runs the calls in the order they were submitted: the items come in input order
    pending: deque[Future[object]] = deque(worker.submit(next, items, _END) for _ in range(batches))
    while (item := pending.popleft().result()) is not _END:
        pending.append(worker.submit(next, items, _END))
        yield cast(T, item)


def _check_on_error(on_error: str) -> None:
    if on_error not in ("skip", "fail"):
        raise InputError(f"on_error must be 'skip' or 'fail', not {on_error!r}")


def _documents(source: str | Path | Iterable[Document], fmt: str) -> Iterator[Document | LoadProblem]:
    if isinstance(source, (str, Path)):
        yield from iter_documents(source, fmt)
    else:
        yield from source


def _document_batches(
    items: Iterable[Document | LoadProblem], batch_docs: int, report: IngestReport
) -> Iterator[list[Document]]:
    """The documents of ``items`` in batches of ``batch_docs`` to write together; the records that could
    not be read go to the report's ``skipped``."""
    batch: list[Document] = []
    for item in items:
        if isinstance(item, LoadProblem):
            report.skipped.append(item)
            continue
        batch.append(item)
        if len(batch) >= batch_docs:
            yield batch
            batch = []
    if batch:
        yield batch
