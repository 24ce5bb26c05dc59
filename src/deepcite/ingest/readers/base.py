"""The reader interface: one file in, documents (with page and section per block of text) or a skip reason out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from deepcite.config import IngestSettings
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.bibliographic import Bibliographic, real_authors, real_title
from deepcite.models import Chunk, Document, TextKind

__all__ = [
    "Block",
    "ReadDocument",
    "ReadResult",
    "Reader",
    "Skip",
    "SkipReason",
    "TextKind",
    "document_from_blocks",
]


class SkipReason(StrEnum):
    """Why a file was not ingested."""

    UNSUPPORTED = "unsupported"
    ENCRYPTED = "encrypted"
    EMPTY = "empty"
    CORRUPT = "corrupt"
    SCANNED = "scanned"  # no usable text layer and no OCR available
    TOO_LARGE = "too_large"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out_of_memory"
    UNREADABLE = "unreadable"  # not a regular file, or no permission to read it
    INVALID = "invalid"  # records that fail validation (JSON files) under --on-error fail
    UNCHUNKABLE = "unchunkable"  # the text read could not be cut into chunks (the error is in the message)


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """``text`` as valid Unicode: UTF-16 surrogate pairs (the way some PDF text layers give characters outside
    the Basic Multilingual Plane, such as the math italic 𝑃) joined into their character, and a lone surrogate
    replaced by U+FFFD; text that cannot be encoded as UTF-8 cannot be hashed, stored or served."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@dataclass(frozen=True)
class Block:
    """A run of text from one page (``None`` for formats without pages) under one section heading, of one
    ``kind``; a ``table`` block (kind ``table``) holds one table row a line, each cell led by its column
    header, and is chunked row by row (a row is never cut from its header)."""

    text: str
    page: int | None = None
    section: str | None = None
    table: bool = False
    kind: TextKind = TextKind.PROSE

    def __post_init__(self) -> None:
        if self.table and self.kind != TextKind.TABLE:
            object.__setattr__(self, "kind", TextKind.TABLE)
        object.__setattr__(self, "text", valid_unicode(self.text))


@dataclass
class ReadDocument:
    """A document as read: its record (text = the blocks joined) and the blocks the chunker maps to pages
    and sections; no blocks means chunk ``document.text`` as one run (JSON records)."""

    document: Document
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Skip:
    """Why a file was skipped, and a message that says what to do about it."""

    reason: SkipReason
    message: str


@dataclass
class ReadResult:
    """What a reader made of one file: documents and per-record problems, or a skip."""

    documents: list[ReadDocument] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    skip: Skip | None = None
    pages: int | None = None
    ocr_pages: int = 0
    kind: str | None = None  # the detected file type, set by read_file
    # the documents chunked by document id, in the child that read them, when the ingest asked for it
    chunks: dict[str, list[Chunk]] | None = None

    @classmethod
    def skipped(cls, reason: SkipReason, message: str) -> ReadResult:
        return cls(skip=Skip(reason, message))


class Reader(Protocol):
    """Reads one file of its format. ``doc_id`` is the id to give the (first) document; ``name`` is the
    file's name relative to the ingested folder. Raise nothing for a bad file: return a skip."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult: ...


def document_from_blocks(
    blocks: list[Block],
    *,
    doc_id: str,
    name: str,
    about: Bibliographic | None = None,
    doi: str | None = None,
    metadata: dict[str, object] | None = None,
) -> ReadResult:
    """The one-document result of a file read as ``blocks``, with what the file says about itself
    (``about``: title, authors, year, venue; a document without a title of its own is shown by its first
    section, else its file name); empty blocks make an ``empty`` skip."""
    blocks = [b for b in blocks if b.text.strip()]
    if not blocks:
        return ReadResult.skipped(SkipReason.EMPTY, "the file is empty: it holds no text; nothing to ingest")
    about = about or Bibliographic()
    title = real_title(about.title) or _first_section(blocks) or Path(name).stem
    document = Document(
        id=doc_id,
        text="\n\n".join(b.text for b in blocks),
        title=valid_unicode(title) if title else title,
        authors=[valid_unicode(a) for a in real_authors(about.authors)],
        doi=doi,
        year=about.year,
        venue=valid_unicode(about.venue) if about.venue else None,
        file=name,
        source=Path(name).suffix.lower().lstrip(".") or None,
        metadata=dict(metadata or {}),
    )
    pages = max((b.page for b in blocks if b.page is not None), default=None)
    return ReadResult(documents=[ReadDocument(document, blocks)], pages=pages)


def _first_section(blocks: list[Block]) -> str | None:
    return next((b.section for b in blocks if b.section), None)
