"""Word documents (DOCX) through python-docx: paragraphs and tables in body order, headings as sections;
each table a block of its own, read row by row with its header (:mod:`deepcite.ingest.readers.tables`).

A paragraph's text is built from its runs, so a superscript note number ("structure¹⁶¹", "(MMACE)⁹") is
left out instead of running into the word before it; a superscript after a digit (a power) is kept in
superscript digits. Hyphens a PDF-to-Word conversion left inside words ("algo-rithm") are removed where
the document writes the word whole elsewhere (:func:`deepcite.ingest.readers.clean.repair_inline_hyphens`).
Paragraphs under a heading that names a reference list are of kind ``reference``; headings are blocks of
kind ``heading``.
"""

from __future__ import annotations

from pathlib import Path

import docx
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from deepcite.config import IngestSettings
from deepcite.ingest.readers.archive import zip_bomb
from deepcite.ingest.readers.base import Block, ReadResult, TextKind, document_from_blocks
from deepcite.ingest.readers.clean import is_note_marker, repair_inline_hyphens, word_forms
from deepcite.ingest.readers.markup import REFERENCE_HEADINGS, SUPERSCRIPT_DIGITS
from deepcite.ingest.readers.tables import table_lines

_HEADING_STYLES = ("heading", "title")
_MAX_TITLE_CHARS = 200  # a first paragraph this short stands in for a missing title
_RUNS = "./w:r | ./w:hyperlink/w:r"
_VERT_ALIGN = f"{qn('w:rPr')}/{qn('w:vertAlign')}"


class DocxReader:
    """A DOCX file; Word has no fixed pages, so its chunks have no page."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        if bomb := zip_bomb(path, settings):
            return bomb
        document = docx.Document(str(path))
        items: list[tuple[str, object]] = []  # ("table", grid) | ("heading", text) | ("text", text)
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                items.append(("table", _grid(item)))
            elif text := paragraph_text(item).strip():
                heading = _is_heading(item) or bool(REFERENCE_HEADINGS.match(text))
                items.append(("heading" if heading else "text", text))
        vocabulary = word_forms(text for what, text in items if what == "text")
        blocks: list[Block] = []
        section: str | None = None
        kind = TextKind.PROSE
        title: str | None = None
        current: list[str] = []
        first: str | None = None

        def flush() -> None:
            if current:
                blocks.append(Block("\n\n".join(current), None, section, kind=kind))
                current.clear()

        for what, value in items:
            if what == "table":
                if rows := table_lines(value):  # type: ignore[arg-type]
                    flush()
                    blocks.append(Block("\n".join(rows), None, section, table=True))
                continue
            text = str(value)
            first = first or text
            if what == "heading":
                flush()
                section, title = text, title or text
                kind = TextKind.REFERENCE if REFERENCE_HEADINGS.match(text) else TextKind.PROSE
                blocks.append(Block(text, None, section, kind=TextKind.HEADING))
                continue
            current.append(repair_inline_hyphens(text, vocabulary))
        flush()
        core = document.core_properties
        return document_from_blocks(
            blocks,
            doc_id=doc_id,
            name=name,
            title=core.title or title or (first if first and len(first) <= _MAX_TITLE_CHARS else None),
            authors=[a.strip() for a in (core.author or "").split(";") if a.strip()],
            year=core.created.year if core.created and core.title else None,
        )


def paragraph_text(paragraph: Paragraph) -> str:
    """The paragraph's text run by run (hyperlinks' runs too), superscript note markers left out."""
    parts: list[str] = []
    for run in paragraph._p.xpath(_RUNS):
        text = run.text
        if not text:
            continue
        align = run.find(_VERT_ALIGN)
        if align is not None and align.get(qn("w:val")) == "superscript" and is_note_marker(text):
            before = "".join(parts).rstrip()
            if before[-1:].isdigit() and text.strip().isdigit():  # a power: 10⁶
                parts.append(text.strip().translate(SUPERSCRIPT_DIGITS))
            continue
        parts.append(text)
    return "".join(parts)


def _is_heading(paragraph: Paragraph) -> bool:
    """A paragraph in a Title or Heading style (by style id: resolving style names is slow)."""
    return (paragraph._p.style or "").lower().startswith(_HEADING_STYLES)


def _grid(table: Table) -> list[list[str]]:
    """The table's cell texts row by row (a merged cell repeats its text in each column it spans)."""
    return [[cell.text for cell in row.cells] for row in table.rows]
