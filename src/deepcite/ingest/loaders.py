"""Loaders: read a corpus in one of the supported formats and yield :class:`Document` records.

Usage::

    from deepcite.ingest.loaders import LoadProblem, iter_documents

    for item in iter_documents("corpus.jsonl"):          # format detected
        if isinstance(item, LoadProblem):
            print("skipped", item)                        # "corpus.jsonl:7: malformed JSON (...)"
        else:
            print(item.id, item.title)

Problems with the input as a whole (unknown format, a path that does not exist or cannot be read, a
folder with nothing to ingest) raise :class:`IngestError` when :func:`iter_documents` is called, before
anything is read. Problems with one record (a malformed line, missing id or text, a field of the wrong
type) are yielded as :class:`LoadProblem` in that record's place and reading carries on, so the caller
can skip them or fail before writing anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from deepcite.config import IngestSettings
from deepcite.errors import IngestError
from deepcite.ingest.fields import BadRecord, record_to_document, text_field, to_year
from deepcite.ingest.formats import (
    BEIR_CORPUS,
    PUBMEDQA_FILE,
    InputFormat,
    check_readable,
    detect_format,
    document_files,
)
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers import read_file
from deepcite.ingest.readers.json_records import RawRecord, read_json_members, read_records
from deepcite.models import Document

__all__ = ["LOADERS", "LoadProblem", "iter_documents", "detect_format", "paragraph_id", "InputFormat"]

LoadItem = Document | LoadProblem
T = TypeVar("T")
Loader = Callable[[Path], Iterator[LoadItem]]


def iter_documents(path: str | Path, fmt: InputFormat | str = InputFormat.AUTO) -> Iterator[LoadItem]:
    """Documents (and problems, in the place of records that could not be read) from ``path``.

    ``fmt`` is an :class:`InputFormat` or its name; ``"auto"`` detects it (see :func:`detect_format`).
    Raises :class:`IngestError` at once for an unknown format, a missing or unreadable path, or a folder
    with nothing to ingest.
    """
    fmt = InputFormat.from_str(fmt)
    path = Path(path)
    if fmt is InputFormat.AUTO:
        fmt = detect_format(path)
    target = _resolve_input(path, fmt)
    return LOADERS[fmt](target)


def load_jsonl(path: Path) -> Iterator[LoadItem]:
    """JSON Lines records (a JSON array works too): ``id`` and ``text`` required; ``title``, ``pmid``,
    ``doi``, ``section``, ``year``, ``url``, ``source``, ``acl`` (a list of groups) optional; the fields of
    a ``metadata`` object and every other key go into ``Document.metadata``."""
    yield from _unique_records(path, lambda value: record_to_document(value, id_key="id"))


def load_beir(path: Path) -> Iterator[LoadItem]:
    """A BEIR ``corpus.jsonl``: ``_id``, ``title``, ``text`` and an optional ``metadata`` object; the
    source is the corpus folder's name (``beir_scifact``) unless a record names its own."""
    source = path.parent.name or "beir"
    yield from _unique_records(path, lambda value: record_to_document(value, id_key="_id", source=source))


def load_pubmedqa(path: Path) -> Iterator[LoadItem]:
    """PubMedQA's ``ori_pqal.json`` (an object keyed by PMID): one Document per abstract section.

    ``CONTEXTS[i]`` is the text and ``LABELS[i]`` the section (``BACKGROUND``, ``METHODS`` …); the PMID
    and ``YEAR`` are kept; ``MESHES`` go into ``metadata["meshes"]``. PubMedQA has no title field, so
    the record's ``QUESTION`` (the article's own question-form title) is used as the title. Document
    ids are ``"<pmid>-<section index>"``; the ``pmid`` field groups the sections of one abstract.
    """
    for raw in read_json_members(path):
        if isinstance(raw, LoadProblem):
            yield raw
            continue
        if not isinstance(raw.key, str):
            yield LoadProblem(
                str(path),
                raw.line,
                "expected a JSON object keyed by PMID (PubMedQA ori_pqal.json); use --format",
            )
            return
        try:
            yield from _pubmedqa_sections(raw.key, raw.value)
        except BadRecord as exc:
            yield LoadProblem(str(path), raw.line, f"PMID {raw.key}: {exc}")


def _pubmedqa_sections(pmid: str, entry: Any) -> Iterator[Document]:
    if not isinstance(entry, dict):
        raise BadRecord(f"expected an object with CONTEXTS, got {type(entry).__name__}")
    contexts, labels = entry.get("CONTEXTS"), entry.get("LABELS") or []
    if not isinstance(contexts, list) or not contexts:
        raise BadRecord("missing or empty CONTEXTS (the abstract sections)")
    if not isinstance(labels, list):
        raise BadRecord("LABELS must be a list of section names")
    meshes = entry.get("MESHES") or []
    title = text_field(entry, "QUESTION") or ""
    year = to_year(entry.get("YEAR"), "YEAR")
    docs = []
    for i, context in enumerate(contexts):
        if not isinstance(context, str) or not context.strip():
            raise BadRecord(f"CONTEXTS[{i}] is empty or not a string")
        label = labels[i] if i < len(labels) and isinstance(labels[i], str) else None
        docs.append(
            Document(
                id=f"{pmid}-{i}",
                text=context.strip(),
                title=title,
                section=label,
                pmid=pmid,
                year=year,
                source="pubmedqa",
                metadata={"meshes": meshes} if meshes else {},
            )
        )
    yield from docs  # all sections or none: a bad section rejects its whole abstract


def paragraph_id(title: str, text: str) -> str:
    """The stable id of a multi-hop QA paragraph: a hash of its title and whitespace-normalised text, so
    the same paragraph gets the same id in every question and every file layout."""
    key = f"{_norm(title)}\n{_norm(text)}"
    return "p-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def load_paragraphs(path: Path, *, source: str) -> Iterator[LoadItem]:
    """HotpotQA / MuSiQue / IRCoT question records (JSON Lines or a JSON array): one Document per
    distinct paragraph (same title and text = same paragraph, yielded once), title kept.

    Paragraph layouts: IRCoT ``contexts[]`` and MuSiQue ``paragraphs[]`` with ``title`` and
    ``paragraph_text``; original HotpotQA ``context: [[title, [sentence, ...]], ...]``.
    """
    seen: set[str] = set()
    for item in _built_records(path, _paragraphs):
        if isinstance(item, LoadProblem):
            yield item
            continue
        for title, text in item[1]:
            pid = paragraph_id(title, text)
            if pid not in seen:
                seen.add(pid)
                yield Document(id=pid, title=title, text=text, source=source)


def _paragraphs(record: Any) -> list[tuple[str, str]]:
    if not isinstance(record, dict):
        raise BadRecord(f"expected a question object, got {type(record).__name__}")
    for key in ("contexts", "paragraphs"):
        if key in record:
            items = record[key]
            if not isinstance(items, list):
                raise BadRecord(f"'{key}' must be a list of paragraphs")
            return [_paragraph_item(key, i, p) for i, p in enumerate(items)]
    if "context" in record:
        items = record["context"]
        if not isinstance(items, list):
            raise BadRecord("'context' must be a list of [title, [sentences]]")
        return [_hotpot_item(i, p) for i, p in enumerate(items)]
    raise BadRecord("no 'contexts', 'paragraphs' or 'context' list: not a HotpotQA/MuSiQue record")


def _paragraph_item(key: str, i: int, item: Any) -> tuple[str, str]:
    if not isinstance(item, dict):
        raise BadRecord(f"{key}[{i}] must be an object with title and paragraph_text")
    text = item.get("paragraph_text")
    if not isinstance(text, str) or not text.strip():
        raise BadRecord(f"{key}[{i}] has no paragraph_text")
    title = item.get("title") or ""
    if not isinstance(title, str):
        raise BadRecord(f"{key}[{i}].title must be a string")
    return title.strip(), text.strip()


def _hotpot_item(i: int, item: Any) -> tuple[str, str]:
    if not (
        isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], list)
    ):
        raise BadRecord(f"context[{i}] must be [title, [sentences]]")
    text = " ".join(s.strip() for s in item[1] if isinstance(s, str) and s.strip())
    if not text:
        raise BadRecord(f"context[{i}] ({item[0]!r}) has no sentences")
    return item[0].strip(), text


def load_files(root: Path, *, settings: IngestSettings | None = None) -> Iterator[LoadItem]:
    """The documents of a file or folder of files, each read in this process by the reader of its type
    (:mod:`deepcite.ingest.readers`); a file that cannot be read is one problem naming the reason. The id
    of a file's document is its path relative to the folder (the file name for a single file).
    :meth:`deepcite.ingest.pipeline.IngestPipeline.ingest` reads files in a bounded child process and
    keeps their pages and sections; this is the plain reading for scripts."""
    settings = settings or IngestSettings()
    base = root.parent if root.is_file() else root
    for file in document_files(root):
        name = file.relative_to(base).as_posix()
        result = read_file(file, doc_id=name, name=name, settings=settings)
        if result.skip:
            yield LoadProblem(str(file), None, result.skip.message)
            continue
        yield from result.problems
        yield from (read.document for read in result.documents)


LOADERS: dict[InputFormat, Loader] = {
    InputFormat.JSONL: load_jsonl,
    InputFormat.BEIR: load_beir,
    InputFormat.PUBMEDQA: load_pubmedqa,
    InputFormat.HOTPOTQA: partial(load_paragraphs, source="hotpotqa"),
    InputFormat.MUSIQUE: partial(load_paragraphs, source="musique"),
    InputFormat.TEXT: load_files,
    InputFormat.FILES: load_files,
}


# Formats whose loader reads one well-known file inside a folder given on the command line.
_FOLDER_FILES: dict[InputFormat, str] = {InputFormat.BEIR: BEIR_CORPUS, InputFormat.PUBMEDQA: PUBMEDQA_FILE}


def _resolve_input(path: Path, fmt: InputFormat) -> Path:
    """The file (or, for text, the folder) the loader reads; checks it exists, can be read and is not
    an empty folder, raising :class:`IngestError` otherwise."""
    if not path.exists():
        raise IngestError("no such file or folder; check the path", path=str(path))
    if path.is_dir():
        inner = _FOLDER_FILES.get(fmt)
        if fmt in (InputFormat.TEXT, InputFormat.FILES):
            if not document_files(path):
                raise IngestError("the folder holds no files; nothing to ingest", path=str(path))
            return path
        if inner is None:
            raise IngestError(
                f"format {fmt.value} reads a file, but this is a folder; give the file", path=str(path)
            )
        if not (path / inner).is_file():
            raise IngestError(f"a {fmt.value} folder must hold {inner}; it was not found", path=str(path))
        path = path / inner
    check_readable(path)
    if fmt is InputFormat.FILES:
        return path  # an empty file is reported by its reader
    if path.stat().st_size == 0:
        raise IngestError("the file is empty; nothing to ingest", path=str(path))
    return path


def _unique_records(path: Path, build: Callable[[Any], Document]) -> Iterator[LoadItem]:
    """Documents built from the records of ``path``; a record that cannot be built, or whose id was
    already used by an earlier record, is a problem."""
    first_line: dict[str, int] = {}
    for item in _built_records(path, build):
        if isinstance(item, LoadProblem):
            yield item
            continue
        raw, doc = item
        if doc.id in first_line:
            yield LoadProblem(
                str(path),
                raw.line,
                f"{_where(raw)}duplicate id {doc.id!r} (first used on line {first_line[doc.id]}); "
                "ids must be unique",
            )
            continue
        first_line[doc.id] = raw.line
        yield doc


def _built_records(path: Path, build: Callable[[Any], T]) -> Iterator[LoadProblem | tuple[RawRecord, T]]:
    """``(record, build(record.value))`` for each record of ``path``, one at a time; a record that cannot be
    read, or that ``build`` rejects with :class:`BadRecord`, is a problem instead."""
    for raw in read_records(path):
        if isinstance(raw, LoadProblem):
            yield raw
            continue
        try:
            built = build(raw.value)
        except BadRecord as exc:
            yield LoadProblem(str(path), raw.line, _where(raw) + str(exc))
            continue
        yield raw, built


def _where(raw: RawRecord) -> str:
    return f"record {raw.key}: " if isinstance(raw.key, int) else ""


def _norm(text: str) -> str:
    return " ".join(text.split())
