"""Word documents (DOCX) through python-docx: paragraphs and tables in body order, headings as sections;
each table a block of its own, read row by row with its header (:mod:`deepcite.ingest.readers.tables`)."""

from __future__ import annotations

from pathlib import Path

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph

from deepcite.config import IngestSettings
from deepcite.ingest.readers.archive import zip_bomb
from deepcite.ingest.readers.base import Block, ReadResult, document_from_blocks
from deepcite.ingest.readers.tables import table_lines

_HEADING_STYLES = ("heading", "title")
_MAX_TITLE_CHARS = 200  # a first paragraph this short stands in for a missing title


class DocxReader:
    """A DOCX file; Word has no fixed pages, so its chunks have no page."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        if bomb := zip_bomb(path, settings):
            return bomb
        document = docx.Document(str(path))
        blocks: list[Block] = []
        section: str | None = None
        title: str | None = None
        current: list[str] = []
        first: str | None = None
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                if rows := table_lines(_grid(item)):
                    if current:
                        blocks.append(Block("\n\n".join(current), None, section))
                        current = []
                    blocks.append(Block("\n".join(rows), None, section, table=True))
                continue
            text = item.text.strip()
            if not text:
                continue
            first = first or text
            if _is_heading(item):
                if current:
                    blocks.append(Block("\n\n".join(current), None, section))
                    current = []
                section = text
                title = title or text
            current.append(text)
        if current:
            blocks.append(Block("\n\n".join(current), None, section))
        core = document.core_properties
        return document_from_blocks(
            blocks,
            doc_id=doc_id,
            name=name,
            title=core.title or title or (first if first and len(first) <= _MAX_TITLE_CHARS else None),
            authors=[a.strip() for a in (core.author or "").split(";") if a.strip()],
            year=core.created.year if core.created and core.title else None,
        )


def _is_heading(paragraph: Paragraph) -> bool:
    """A paragraph in a Title or Heading style (by style id: resolving style names is slow)."""
    return (paragraph._p.style or "").lower().startswith(_HEADING_STYLES)


def _grid(table: Table) -> list[list[str]]:
    """The table's cell texts row by row (a merged cell repeats its text in each column it spans)."""
    return [[cell.text for cell in row.cells] for row in table.rows]
