"""Read JSON Lines and JSON files record by record, keeping the line each record starts on.

A malformed line or undecodable bytes become a :class:`LoadProblem` and reading goes on with the next
line; a whole-file JSON document that does not parse yields one problem at the line the parser stopped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from deepcite.ingest.problems import LoadProblem

_WS = re.compile(r"[ \t\n\r]*")
_SNIFF_BYTES = 1 << 20


class RawRecord(NamedTuple):
    """A decoded JSON value, the 1-based line it starts on, and its key or index in a top-level container
    (``None`` for a JSON Lines record)."""

    line: int
    key: str | int | None
    value: Any


def read_json_lines(path: Path) -> Iterator[RawRecord | LoadProblem]:
    """One record per non-blank line of a JSON Lines file."""
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8-sig")  # a byte-order mark on the first line is not an error
            except UnicodeDecodeError as exc:
                yield _not_utf8(path, line_no, exc)
                continue
            if not line.strip():
                continue
            try:
                yield RawRecord(line_no, None, json.loads(line))
            except json.JSONDecodeError as exc:
                yield _malformed(path, exc, line_no)


def read_text(path: Path) -> str | LoadProblem:
    """A whole UTF-8 file, or the problem that stopped it being decoded."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return _not_utf8(path, line, exc)


def read_json_members(path: Path) -> Iterator[RawRecord | LoadProblem]:
    """The members of a whole-file JSON document: each (index, element) of a top-level array or each
    (key, value) of a top-level object, with the line it starts on. Any other top-level value is
    yielded whole, with key ``None``."""
    text = read_text(path)
    if isinstance(text, LoadProblem):
        yield text
        return
    try:
        yield from _members(text)
    except json.JSONDecodeError as exc:
        yield _malformed(path, exc)


def read_json_document(path: Path) -> Iterator[RawRecord | LoadProblem]:
    """A whole-file JSON document as one record."""
    text = read_text(path)
    if isinstance(text, LoadProblem):
        yield text
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        yield _malformed(path, exc)
        return
    start = _WS.match(text, 0).end()
    yield RawRecord(text.count("\n", 0, start) + 1, None, value)


def read_records(path: Path) -> Iterator[RawRecord | LoadProblem]:
    """Records of a file holding many: JSON Lines, a JSON array, or one JSON object (found by content: a
    JSON Lines file named ``.json`` reads as JSON Lines)."""
    head = _first_char(path)
    if head == "[" and json_layout(path) != "lines":
        yield from read_json_members(path)
    elif head == "{" and json_layout(path) == "document":
        yield from read_json_document(path)
    else:
        yield from read_json_lines(path)


def json_layout(path: Path) -> str | None:
    """``"lines"`` when the file's first line is a whole JSON value and more values follow on later
    lines (JSON Lines), ``"document"`` when it starts one JSON value spanning lines or the whole file,
    ``None`` when it does not start with JSON at all."""
    with path.open("rb") as fh:
        first = fh.readline(_SNIFF_BYTES).decode("utf-8-sig", errors="replace")
        rest = fh.read(_SNIFF_BYTES).decode("utf-8", errors="replace").lstrip()
    stripped = first.strip()
    if stripped[:1] not in ("{", "["):
        return None
    if _is_json_value(stripped):
        return "lines" if rest[:1] in ("{", "[") else "document"
    # the first value goes on past the first line, or the first line is malformed: JSON Lines when the
    # next line is a whole value
    return "lines" if _is_json_value(rest.split("\n", 1)[0].strip()) else "document"


def _is_json_value(line: str) -> bool:
    if line[:1] not in ("{", "["):
        return False
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def _malformed(path: Path, exc: json.JSONDecodeError, line: int | None = None) -> LoadProblem:
    return LoadProblem(
        str(path), line or exc.lineno, f"malformed JSON ({exc.msg} at column {exc.colno}); fix it"
    )


def _not_utf8(path: Path, line: int, exc: UnicodeDecodeError) -> LoadProblem:
    return LoadProblem(str(path), line, f"not valid UTF-8 ({exc.reason}); re-save the file as UTF-8")


def _first_char(path: Path) -> str:
    with path.open("rb") as fh:
        head = fh.read(4096).decode("utf-8-sig", errors="replace")
    stripped = head.lstrip()
    return stripped[:1]


def _members(text: str) -> Iterator[RawRecord]:
    decoder = json.JSONDecoder()
    lines = _LineCounter(text)
    pos = _WS.match(text, 0).end()
    opener = text[pos : pos + 1]
    if opener not in ("[", "{") or not opener:
        value, _ = decoder.raw_decode(text, pos)
        yield RawRecord(lines.at(pos), None, value)
        return
    closer = "]" if opener == "[" else "}"
    pos = _WS.match(text, pos + 1).end()
    index = 0
    while text[pos : pos + 1] != closer:
        if index:
            if text[pos : pos + 1] != ",":
                raise json.JSONDecodeError(f"expected ',' or '{closer}'", text, pos)
            pos = _WS.match(text, pos + 1).end()
        start = pos
        key: str | int = index
        if opener == "{":
            key, pos = decoder.raw_decode(text, pos)
            if not isinstance(key, str):
                raise json.JSONDecodeError("expected a string key", text, start)
            pos = _WS.match(text, pos).end()
            if text[pos : pos + 1] != ":":
                raise json.JSONDecodeError("expected ':'", text, pos)
            pos = _WS.match(text, pos + 1).end()
        value, pos = decoder.raw_decode(text, pos)
        yield RawRecord(lines.at(start), key, value)
        pos = _WS.match(text, pos).end()
        index += 1
    if text[pos + 1 :].strip():
        raise json.JSONDecodeError("extra data after the top-level value", text, pos + 1)


class _LineCounter:
    """1-based line numbers of increasing offsets in a text, counted incrementally."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 1

    def at(self, pos: int) -> int:
        self._line += self._text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line
