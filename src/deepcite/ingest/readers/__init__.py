"""Readers: one module per file type behind one interface (:class:`Reader`), chosen by content.

Usage::

    from deepcite.config import IngestSettings
    from deepcite.ingest.readers import read_file

    result = read_file(Path("pasa.pdf"), doc_id="pasa.pdf", name="pasa.pdf", settings=IngestSettings())
    result.skip or result.documents[0].blocks[0].page

:data:`READERS` maps a detected type to the reader used for it, as ``"module:attribute"``; a user swaps
one with the ``ingest.readers`` setting (``DEEPCITE_INGEST_READERS='{"pdf": "mypkg.pdf:Reader"}'``).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.errors import ConfigError
from deepcite.ingest.readers.base import (
    Block,
    ReadDocument,
    Reader,
    ReadResult,
    Skip,
    SkipReason,
    document_from_blocks,
)
from deepcite.ingest.readers.detect import MEDIA_TYPES, Unsupported, detect_kind

READERS: dict[str, str] = {
    "pdf": "deepcite.ingest.readers.pdf:PdfReader",
    "docx": "deepcite.ingest.readers.docx:DocxReader",
    "pptx": "deepcite.ingest.readers.pptx:PptxReader",
    "html": "deepcite.ingest.readers.html:HtmlReader",
    "epub": "deepcite.ingest.readers.epub:EpubReader",
    "markdown": "deepcite.ingest.readers.text:MarkdownReader",
    "text": "deepcite.ingest.readers.text:TextReader",
    "json": "deepcite.ingest.readers.json_file:JsonRecordsReader",
    "jsonl": "deepcite.ingest.readers.json_file:JsonRecordsReader",
}
_BYTES_PER_MB = 1024 * 1024

__all__ = [
    "MEDIA_TYPES",
    "READERS",
    "Block",
    "ReadDocument",
    "ReadResult",
    "Reader",
    "Skip",
    "SkipReason",
    "detect_kind",
    "document_from_blocks",
    "out_of_memory",
    "read_file",
    "reader_for",
]


def reader_for(kind: str, settings: IngestSettings) -> Reader:
    """The reader of file type ``kind``: the ``ingest.readers`` setting's choice, else the built-in one."""
    spec = settings.readers.get(kind) or READERS[kind]
    module_name, _, attribute = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"ingest.readers[{kind!r}] = {spec!r} cannot be loaded ({exc}); give 'module:attribute'"
        ) from exc
    return factory()


def out_of_memory(settings: IngestSettings) -> ReadResult:
    """The skip of a file whose reading ran out of the ``ingest.memory_limit_mb`` address space."""
    return ReadResult.skipped(
        SkipReason.OUT_OF_MEMORY,
        f"reading it needs more than the {settings.memory_limit_mb} MB memory limit "
        "(setting ingest.memory_limit_mb)",
    )


def read_file(path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
    """Read one file with the reader of its detected type; a skip (never an exception) for a file that is
    empty, too large, of an unsupported type, or that its reader cannot read."""
    try:
        if not path.is_file():
            raise OSError("not a regular file")
        with path.open("rb"):
            size = path.stat().st_size
    except OSError as exc:
        return ReadResult.skipped(
            SkipReason.UNREADABLE,
            f"cannot read the file ({getattr(exc, 'strerror', None) or exc}); check that it is a regular "
            "file you may read",
        )
    if size == 0:
        return ReadResult.skipped(SkipReason.EMPTY, "the file is empty; nothing to ingest")
    if size > settings.max_file_mb * _BYTES_PER_MB:
        return ReadResult.skipped(
            SkipReason.TOO_LARGE,
            f"the file is {size / _BYTES_PER_MB:.0f} MB, over the {settings.max_file_mb:g} MB limit "
            "(setting ingest.max_file_mb)",
        )
    try:
        kind = detect_kind(path)
    except Unsupported as exc:
        return ReadResult.skipped(SkipReason.UNSUPPORTED, f"unsupported type: {exc}")
    reader = reader_for(kind, settings)
    try:
        result = reader.read(path, doc_id=doc_id, name=name, settings=settings)
    except MemoryError:
        result = out_of_memory(settings)
    except Exception as exc:  # a reader library's own error on a damaged file: that file fails, not the run
        result = ReadResult.skipped(SkipReason.CORRUPT, f"the {kind} file cannot be read ({exc})")
    result.kind = kind
    if result.skip:  # a library's message may hold the path the file was read from: show the name only
        result.skip.message = result.skip.message.replace(str(path), name).replace(str(path.parent), "")
    return result
