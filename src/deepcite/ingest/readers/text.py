"""Plain text and Markdown: one document per file; Markdown headings become sections.

Markdown is rendered (markdown-it-py, CommonMark with tables) and read as the HTML it renders to
(:mod:`deepcite.ingest.readers.markup`), so no Markdown syntax reaches the text: headings are sections,
links their words, tables rows led by their headers. Wiki-style note markers glued to a word ("1965.[1]")
are dropped from both formats.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import html as lxml_html
from markdown_it import MarkdownIt

from deepcite.config import IngestSettings
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.base import Block, ReadResult, SkipReason, TextKind, document_from_blocks
from deepcite.ingest.readers.bibliographic import Bibliographic
from deepcite.ingest.readers.clean import drop_note_markers
from deepcite.ingest.readers.json_records import read_text
from deepcite.ingest.readers.markup import tree_blocks

# a text's first line is its title when it is this short, starts with a letter or digit and ends without a stop
_MAX_HEADING_CHARS = 120
_HEADING = re.compile(r"^\w.*[^.,;:!?]$")


class TextReader:
    """A UTF-8 text file as one block."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        text = read_text(path)
        if isinstance(text, LoadProblem):
            return ReadResult.skipped(SkipReason.CORRUPT, text.reason)
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        heading = first if _HEADING.match(first) and len(first) <= _MAX_HEADING_CHARS else ""
        return document_from_blocks(
            [Block(drop_note_markers(text).strip())],
            doc_id=doc_id,
            name=name,
            about=Bibliographic(title=heading),
        )


class MarkdownReader:
    """A Markdown file, cut at its headings: each heading names the section of the text under it; the
    first heading is the title."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        text = read_text(path)
        if isinstance(text, LoadProblem):
            return ReadResult.skipped(SkipReason.CORRUPT, text.reason)
        blocks = markdown_blocks(text)
        first = next((b.text for b in blocks if b.kind == TextKind.HEADING), None)
        return document_from_blocks(blocks, doc_id=doc_id, name=name, about=Bibliographic(title=first or ""))


def markdown_blocks(text: str, page: int | None = None) -> list[Block]:
    """Markdown text as blocks of prose: each heading a ``heading`` block naming the section after it."""
    rendered = _MARKDOWN.render(text)
    if not rendered.strip():
        return []
    return tree_blocks(lxml_html.fragment_fromstring(rendered, create_parent="div"), page=page)


_MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable("table")
