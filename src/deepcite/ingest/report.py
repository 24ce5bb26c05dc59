"""The ingest report: every file accounted for (ingested, unchanged or skipped with its reason), and counts."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.base import SkipReason


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


class IngestProgress(BaseModel):
    """Sent to a progress callback each time a file is done: how many of how many, and that file's report."""

    done: int
    total: int
    file: FileReport


ProgressCallback = Callable[[int, int], None]  # (documents done, chunks written)
FileProgressCallback = Callable[[IngestProgress], None]


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
