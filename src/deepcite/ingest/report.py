"""The ingest report: every file accounted for (ingested, unchanged or skipped with its reason), and counts."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from deepcite.config import ChunkerSettings, IngestSettings
from deepcite.ingest.chunker import chunk_reads
from deepcite.ingest.isolate import read_file_isolated
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.base import ReadResult, SkipReason
from deepcite.models import TripleCounts

log = logging.getLogger(__name__)


class FileStatus(StrEnum):
    INGESTED = "ingested"  # new or changed: its chunks were written
    UNCHANGED = "unchanged"  # every chunk was already stored
    SKIPPED = "skipped"  # not ingested; ``reason`` and ``message`` say why


class FileReport(BaseModel):
    """What became of one file."""

    file: str  # the file's name relative to the ingested folder (or as uploaded)
    status: FileStatus
    kind: str | None = None  # the detected type: pdf, docx, html, epub, pptx, text, markdown, json, jsonl
    doc_ids: list[str] = Field(default_factory=list)
    reason: SkipReason | None = None
    message: str | None = None
    pages: int | None = None
    ocr_pages: int = 0
    chunks: int = 0
    seconds: float = 0.0  # time spent reading the file


def read_file_report(
    path: Path,
    name: str,
    acl: Sequence[str],
    settings: IngestSettings,
    chunker: ChunkerSettings | None = None,
) -> tuple[FileReport, ReadResult]:
    """Read one file in the bounded child process (:func:`read_file_isolated`) and describe it: its
    report (ingested until its chunks are written, or skipped with the reason) and what was read, every
    document given the ``acl`` groups. With ``chunker`` the documents are chunked in that child too
    (``result.chunks``): sentence splitting is pure Python, and in the ingesting process it would hold the
    GIL the model load and the embedding's own Python need. The report's ``seconds`` is the time spent
    reading (and chunking)."""
    t0 = time.perf_counter()
    then = None if chunker is None else partial(_chunk_read, acl=tuple(acl), chunker=chunker)
    result = read_file_isolated(path, doc_id=name, name=name, settings=settings, then=then)
    result = _within_text_limit(result, settings)
    if chunker is not None and not result.skip and result.chunks is None:
        result = _chunked_here(result, name, acl, chunker)
    file = FileReport(
        file=name,
        status=FileStatus.SKIPPED if result.skip else FileStatus.INGESTED,
        kind=result.kind,
        reason=result.skip.reason if result.skip else None,
        message=result.skip.message if result.skip else None,
        pages=result.pages,
        ocr_pages=result.ocr_pages,
        seconds=time.perf_counter() - t0,
    )
    _give_acl(result, acl)
    file.doc_ids = [r.document.id for r in result.documents]
    return file, result


def _within_text_limit(result: ReadResult, settings: IngestSettings) -> ReadResult:
    """``result``, or a ``too_large`` skip when its text is over ``ingest.max_text_chars``: embedding that much
    would hold an upload's job (and every job queued behind it) for a long time."""
    chars = sum(len(r.document.text) for r in result.documents)
    if result.skip or chars <= settings.max_text_chars:
        return result
    skipped = ReadResult.skipped(
        SkipReason.TOO_LARGE,
        f"its text is {chars:,} characters, over the {settings.max_text_chars:,} limit (setting "
        "ingest.max_text_chars); split it into smaller files",
    )
    skipped.kind, skipped.pages = result.kind, result.pages
    return skipped


def _chunked_here(result: ReadResult, name: str, acl: Sequence[str], chunker: ChunkerSettings) -> ReadResult:
    """``result`` chunked in this process, the child's chunking having failed: a file whose text cannot be
    chunked is skipped with the error, so one file does not end an ``on_error="skip"`` ingest of many."""
    try:
        _chunk_read(result, acl=tuple(acl), chunker=chunker)
    except (
        Exception
    ) as exc:  # a reader's blocks the chunker cannot use: that file's problem, not the ingest's
        log.warning("cannot chunk %s: %r", name, exc)
        skipped = ReadResult.skipped(
            SkipReason.UNCHUNKABLE,
            f"its text was read but could not be cut into chunks ({type(exc).__name__}: {exc}); "
            "please report this file",
        )
        skipped.kind, skipped.pages = result.kind, result.pages
        return skipped
    return result


def _chunk_read(result: ReadResult, *, acl: tuple[str, ...], chunker: ChunkerSettings) -> None:
    _give_acl(result, acl)
    result.chunks = chunk_reads(result.documents, chunker)


def _give_acl(result: ReadResult, acl: Sequence[str]) -> None:
    """Give every document read the ``acl`` groups (a no-op for documents the child already gave them)."""
    if not acl:
        return
    for read in result.documents:
        if read.document.acl != list(acl):
            read.document = read.document.model_copy(update={"acl": list(acl)})


class FileStage(StrEnum):
    READING = "reading"  # being read (and cut into passages) in its child process
    READ = "read"  # read: its passages wait to be embedded and written, or it is skipped (``file`` says why)
    DONE = "done"  # finished: ``file`` is its final report


class IngestProgress(BaseModel):
    """Sent to a progress callback as a file moves on: its ``stage``, how many files of how many are done, the
    file's name and its report so far (none while it is read); ``passages``: what a file read was cut into."""

    done: int
    total: int
    name: str
    stage: FileStage = FileStage.DONE
    file: FileReport | None = None
    passages: int | None = None


ProgressCallback = Callable[[int, int], None]  # (documents done, chunks written)
FileProgressCallback = Callable[[IngestProgress], None]


class FileProgress:
    """A :data:`FileProgressCallback` that also tells each file's reading and read stages, with the count of
    files done so far (the reading runs ahead of the writing, possibly in a worker thread)."""

    def __init__(self, callback: FileProgressCallback | None, total: int) -> None:
        self._callback = callback
        self._total = total
        self._done = 0

    def __call__(self, progress: IngestProgress) -> None:
        if progress.stage is FileStage.DONE:
            self._done = progress.done
        if self._callback is not None:
            self._callback(progress)

    def reading(self, name: str) -> None:
        """The file ``name`` is being read."""
        self(IngestProgress(done=self._done, total=self._total, name=name, stage=FileStage.READING))

    def read(self, file: FileReport, passages: int | None) -> None:
        """The file is read (or skipped): ``passages`` wait to be embedded and written."""
        stage = FileStage.READ
        self(
            IngestProgress(
                done=self._done, total=self._total, name=file.file, stage=stage, file=file, passages=passages
            )
        )


class IngestReport(BaseModel):
    """What one ingest did: each file's outcome, counts, records skipped and why, and the time it took."""

    collection: str
    files: list[FileReport] = Field(default_factory=list)
    documents: int = 0
    chunks: int = 0
    written: int = 0
    unchanged: int = 0
    skipped: list[LoadProblem] = Field(default_factory=list)  # records (lines of JSON files) not read
    seconds: float = 0.0
    read_seconds: float = 0.0  # reading files (text extraction, OCR), summed over files
    embed_seconds: float = 0.0
    index_seconds: float = 0.0
    graph_seconds: float = 0.0  # building the entity graph (retrieval/graph/)
    triples: TripleCounts | None = None  # LLM triple extraction (graph.llm_triples), when it ran

    @property
    def docs_per_s(self) -> float:
        return self.documents / self.seconds if self.seconds else 0.0

    @property
    def skipped_files(self) -> list[FileReport]:
        return [f for f in self.files if f.status is FileStatus.SKIPPED]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (``deepcite ingest --json``)."""
        data = self.model_dump(mode="json")
        for key in ("seconds", "read_seconds", "embed_seconds", "index_seconds", "graph_seconds"):
            data[key] = round(data[key], 3)
        for file in data["files"]:
            file["seconds"] = round(file["seconds"], 3)
        data["docs_per_s"] = round(self.docs_per_s, 2)
        return data
