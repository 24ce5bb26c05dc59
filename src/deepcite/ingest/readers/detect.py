"""Find a file's type from its bytes: magic numbers, the members of a zip, the first JSON values.

The suffix only breaks ties between text types (``.md`` is Markdown, ``.html`` without a doctype is
HTML); a PDF named ``.txt`` is a PDF and a JSON Lines file named ``.json`` is JSON Lines. A text file named
``.pdf`` (``.docx``, ``.pptx``, ``.epub``) is refused with a sentence saying so, not read as text.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from deepcite.ingest.readers.json_records import json_layout

HEAD_BYTES = 8192
MEDIA_TYPES: dict[str, str] = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "epub": "application/epub+zip",
    "html": "text/html",
    "markdown": "text/markdown",
    "text": "text/plain",
    "json": "application/json",
    "jsonl": "application/x-ndjson",
}
_ZIP_MARKERS = (("word/document.xml", "docx"), ("ppt/presentation.xml", "pptx"))
_MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
# the names of binary formats: a file so named whose bytes are text is a damaged or mislabelled file, not text
_BINARY_SUFFIXES = {".pdf": "PDF", ".docx": "DOCX", ".pptx": "PPTX", ".epub": "EPUB"}


class Unsupported(ValueError):
    """The file's type is not one deepcite reads; the message names what it looks like."""


def detect_kind(path: Path) -> str:
    """The file type of ``path`` (a key of :data:`MEDIA_TYPES`); raises :class:`Unsupported` otherwise."""
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        return _zip_kind(path)
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        raise Unsupported(
            "a legacy Office (.doc/.ppt/.xls) or password-protected Office file; save it as .docx/.pptx "
            "without a password"
        )
    if b"\x00" in head:
        raise Unsupported(
            "a binary file of a type deepcite does not read (PDF, DOCX, PPTX, EPUB, HTML, text)"
        )
    suffix = path.suffix.lower()
    if suffix in _BINARY_SUFFIXES:
        named = _BINARY_SUFFIXES[suffix]
        raise Unsupported(
            f"the file is named {suffix} but is not a {named}: it holds text ({len(head)} bytes"
            f"{' or more' if len(head) == HEAD_BYTES else ''}); save it again as a {named}, or rename it .txt "
            "to add it as text"
        )
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    lowered = text[:1024].lower()
    if lowered.startswith(("<!doctype html", "<html")) or (
        lowered.startswith("<?xml") and "<html" in lowered
    ):
        return "html"
    if suffix in _HTML_SUFFIXES and lowered.startswith("<"):
        return "html"
    if text[:1] in ("{", "["):
        layout = json_layout(path)
        if layout is not None:
            return "jsonl" if layout == "lines" else "json"
    if suffix in _MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in (".json", ".jsonl", ".ndjson"):
        return "jsonl"  # malformed JSON: the JSON Lines reader reports each bad line
    return "text"


def _zip_kind(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            for marker, kind in _ZIP_MARKERS:
                if marker in names:
                    return kind
            if "mimetype" in names and archive.read("mimetype").strip() == b"application/epub+zip":
                return "epub"
            if "META-INF/container.xml" in names:
                return "epub"
    except (zipfile.BadZipFile, OSError, KeyError) as exc:
        raise Unsupported(f"a damaged zip archive ({exc})") from exc
    raise Unsupported("a zip archive that is not a DOCX, PPTX or EPUB; unpack it and ingest the files")
