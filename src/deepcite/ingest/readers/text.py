"""Plain text and Markdown: one document per file; Markdown headings become sections."""

from __future__ import annotations

import re
from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.base import Block, ReadResult, SkipReason, document_from_blocks
from deepcite.ingest.readers.json_records import read_text

_MD_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


class TextReader:
    """A UTF-8 text file as one block."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        text = read_text(path)
        if isinstance(text, LoadProblem):
            return ReadResult.skipped(SkipReason.CORRUPT, text.reason)
        return document_from_blocks([Block(text.strip())], doc_id=doc_id, name=name, title=Path(name).stem)


class MarkdownReader:
    """A Markdown file, cut at its headings: each heading names the section of the text under it; the
    first heading is the title."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        text = read_text(path)
        if isinstance(text, LoadProblem):
            return ReadResult.skipped(SkipReason.CORRUPT, text.reason)
        first = _MD_HEADING.search(text)
        return document_from_blocks(
            markdown_blocks(text),
            doc_id=doc_id,
            name=name,
            title=first.group(1).strip() if first else Path(name).stem,
        )


def markdown_blocks(text: str, page: int | None = None) -> list[Block]:
    """Markdown text cut at its headings, each block in the section its heading names."""
    blocks: list[Block] = []
    section: str | None = None
    start = 0
    for match in _MD_HEADING.finditer(text):
        blocks.append(Block(text[start : match.start()].strip(), page, section))
        section, start = match.group(1).strip(), match.start()
    blocks.append(Block(text[start:].strip(), page, section))
    return blocks
