"""Input formats and ``--format auto`` detection."""

from __future__ import annotations

import os
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

from deepcite.errors import IngestError
from deepcite.ingest.readers.json_records import RawRecord, json_layout, read_json_members, read_records

TEXT_SUFFIXES: frozenset[str] = frozenset({".txt", ".md", ".markdown"})
BEIR_CORPUS = "corpus.jsonl"
PUBMEDQA_FILE = "ori_pqal.json"


class InputFormat(StrEnum):
    """What a path to ingest holds. ``AUTO`` asks :func:`detect_format` to find out."""

    AUTO = "auto"
    JSONL = "jsonl"
    BEIR = "beir"
    PUBMEDQA = "pubmedqa"
    HOTPOTQA = "hotpotqa"
    MUSIQUE = "musique"
    TEXT = "text"
    FILES = "files"  # documents of any readable type (PDF, DOCX, HTML, EPUB, PPTX, text, JSON), by content

    @classmethod
    def from_str(cls, value: str | InputFormat) -> InputFormat:
        """Parse a format name, failing with the list of valid choices."""
        if isinstance(value, InputFormat):
            return value
        try:
            return cls(value.strip().lower())
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise IngestError(f"unknown format {value!r}; choose one of: {choices}") from None


# The keys that mark a multi-hop QA record, and the paragraph format each one means.
_PARAGRAPH_KEYS: dict[str, InputFormat] = {
    "contexts": InputFormat.HOTPOTQA,  # IRCoT layout: contexts[] with title, paragraph_text
    "paragraphs": InputFormat.MUSIQUE,  # MuSiQue: paragraphs[] with title, paragraph_text
    "context": InputFormat.HOTPOTQA,  # original HotpotQA: context[[title, [sentences]]]
}
_PEEK_RECORDS = 5


def text_files(root: Path) -> list[Path]:
    """The ``.txt``/``.md`` files under ``root``, sorted, skipping hidden files and folders."""
    return [f for f in document_files(root) if f.suffix.lower() in TEXT_SUFFIXES]


def document_files(root: Path) -> list[Path]:
    """Every file under ``root`` (or ``root`` itself when it is a file), sorted, skipping hidden files
    and folders: the files an ingest of the folder must account for."""
    if root.is_file():
        return [root]
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(folder) / f for f in files if not f.startswith("."))
    return sorted(found)


def detect_format(path: str | Path) -> InputFormat:
    """Guess the format of ``path``; raise :class:`IngestError` saying what was seen when it cannot.

    A folder holding ``corpus.jsonl`` is BEIR, one holding ``ori_pqal.json`` is PubMedQA, any other
    folder is files (each read by the reader of its type). ``ori_pqal.json`` is PubMedQA. A ``.txt``/``.md``
    file is text. A ``.jsonl`` or ``.json`` file is classified by its content (see
    :func:`detect_records_format`). Any other file is files: its reader is chosen by its content.
    """
    path = Path(path)
    if not path.exists():
        raise IngestError("no such file or folder; check the path", path=str(path))
    if path.is_dir():
        return _detect_folder(path)
    check_readable(path)
    name, suffix = path.name.lower(), path.suffix.lower()
    if name == PUBMEDQA_FILE:
        return InputFormat.PUBMEDQA
    if suffix in TEXT_SUFFIXES:
        return InputFormat.TEXT
    if suffix in (".jsonl", ".ndjson", ".json"):
        return detect_records_format(path)
    return InputFormat.FILES


def detect_records_format(path: Path) -> InputFormat:
    """The corpus format of a JSON or JSON Lines file, whatever its name: an object of PMID keys whose
    values hold ``CONTEXTS`` is PubMedQA; records with ``contexts``/``context`` lists are HotpotQA, with
    ``paragraphs`` MuSiQue, with ``_id`` BEIR, anything else plain JSON Lines records."""
    if json_layout(path) == "document" and _looks_like_pubmedqa(path):
        return InputFormat.PUBMEDQA
    return _detect_records(path)


def check_readable(path: Path) -> None:
    """Raise :class:`IngestError` unless ``path`` is a file that can be opened for reading."""
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise IngestError(
            f"cannot read the file ({exc.strerror or exc}); check that it is a regular file you may read",
            path=str(path),
        ) from exc


def _detect_folder(path: Path) -> InputFormat:
    if (path / BEIR_CORPUS).is_file():
        return InputFormat.BEIR
    if (path / PUBMEDQA_FILE).is_file():
        return InputFormat.PUBMEDQA
    return InputFormat.FILES


def _detect_records(path: Path) -> InputFormat:
    for record in _peek(read_records(path)):
        if isinstance(record, dict):
            for key, fmt in _PARAGRAPH_KEYS.items():
                if isinstance(record.get(key), list):
                    return fmt
            return InputFormat.BEIR if "_id" in record else InputFormat.JSONL
    return InputFormat.JSONL  # nothing decodable to look at: the JSONL loader reports each bad line


def _looks_like_pubmedqa(path: Path) -> bool:
    """A top-level object whose first member is keyed (by PMID) and holds ``CONTEXTS``."""
    for raw in read_json_members(path):
        return (
            isinstance(raw, RawRecord)
            and isinstance(raw.key, str)
            and isinstance(raw.value, dict)
            and ("CONTEXTS" in raw.value)
        )
    return False


def _peek(items: Iterator[Any]) -> Iterator[Any]:
    """The values of the first few decodable records."""
    for n, item in enumerate(items):
        if n >= _PEEK_RECORDS:
            return
        if isinstance(item, RawRecord):
            yield item.value
