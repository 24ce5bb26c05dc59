"""Word documents (DOCX) through python-docx: paragraphs and tables in body order, headings as sections;
each table a block of its own, read row by row with its header (:mod:`deepcite.ingest.readers.tables`).

A paragraph's text is built from its runs, so a superscript note number ("structure¹⁶¹", "(MMACE)⁹") is
left out instead of running into the word before it; a superscript after a digit (a power) is kept in
superscript digits. Hyphens a PDF-to-Word conversion left inside words ("algo-rithm") are removed where
the document writes the word whole elsewhere (:func:`deepcite.ingest.readers.clean.repair_inline_hyphens`).
Paragraphs under a heading that names a reference list are of kind ``reference``; headings are blocks of
kind ``heading``. A table of contents (paragraphs in a TOC style, or the entries that follow a "Contents"
line, each ending in its page number: "B. RECRUITMENT AND SELECTION2-1", "Methods\t12") is page furniture:
searchable, never an answer sentence.
"""

from __future__ import annotations

import re
from pathlib import Path

import docx
from docx.document import Document as DocxDocument
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from deepcite.config import IngestSettings
from deepcite.ingest.readers.archive import zip_bomb
from deepcite.ingest.readers.base import Block, ReadResult, TextKind, document_from_blocks
from deepcite.ingest.readers.bibliographic import (
    Bibliographic,
    front_authors,
    names_among,
    real_authors,
    real_title,
    stated_year,
)
from deepcite.ingest.readers.clean import is_note_marker, repair_inline_hyphens, word_forms
from deepcite.ingest.readers.markup import REFERENCE_HEADINGS, SUPERSCRIPT_DIGITS
from deepcite.ingest.readers.tables import table_lines

_HEADING_STYLES = ("heading", "title")
_MAX_TITLE_CHARS = 200  # a first paragraph this short stands in for a missing title
# the front matter: at most this many paragraphs before the one that starts the body (abstract, contents)
_FRONT_PARAGRAPHS = 12
_FRONT_END = re.compile(
    r"^(?:abstract|summary|table of contents|contents|introduction|\d+\.?\s+introduction)\b", re.I
)
_MAX_PUBLISHER_LINE = 80  # an organisation line above the title is shorter than this
_RUNS = "./w:r | ./w:hyperlink/w:r"
_VERT_ALIGN = f"{qn('w:rPr')}/{qn('w:vertAlign')}"
_CONTENTS = re.compile(r"^\s*(?:table of )?contents\s*$", re.IGNORECASE)
_TOC_STYLE = "toc"  # Word's TOC1 … TOC9 paragraph styles
# an entry's page number: after a tab, a dot leader or a run of spaces, or glued to the entry as a flattened
# TOC leaves it ("SURETY BONDS2-4", "(PII)4-24"); a chapter-page pair or up to four digits (roman after a gap)
_PAGE_REF = re.compile(
    r"(?:(?:\t|\.{2,}|…+| {2,})\s*(?:\d{1,4}(?:[-–]\d{1,4})?|[ivxlc]{1,7})"
    r"|(?<=[^\d\s])\d{1,3}[-–]\d{1,3}|(?<=[A-Za-z)])\d{1,4})\s*$"
)
_TOC_ENTRY_CHARS, _TOC_LOOKAHEAD = 200, 2  # an entry's longest text; how far a wrapped entry's page number is


class DocxReader:
    """A DOCX file; Word has no fixed pages, so its chunks have no page."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        if bomb := zip_bomb(path, settings):
            return bomb
        document = docx.Document(str(path))
        # ("table", grid) | ("heading", text) | ("text", text) | ("contents", text)
        items: list[tuple[str, object]] = []
        style_names = _style_names(document)
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                items.append(("table", _grid(item)))
            elif text := paragraph_text(item).strip():
                style = style_names.get(item._p.style or "", "")
                heading = style.startswith(_HEADING_STYLES) or bool(REFERENCE_HEADINGS.match(text))
                toc = style.startswith(_TOC_STYLE)
                items.append(("contents" if toc else "heading" if heading else "text", text))
        items = _mark_contents(items)
        vocabulary = word_forms(text for what, text in items if what == "text")
        blocks: list[Block] = []
        section: str | None = None
        kind = body_kind = TextKind.PROSE
        title: str | None = None
        current: list[str] = []
        first: str | None = None

        def flush() -> None:
            if current:
                blocks.append(Block("\n\n".join(current), None, section, kind=kind))
                current.clear()

        for what, value in items:
            if what == "contents":
                if kind != TextKind.FURNITURE:
                    flush()
                kind = TextKind.FURNITURE
                current.append(str(value))
                continue
            if kind == TextKind.FURNITURE:  # the contents end
                flush()
                kind = body_kind
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
                kind = body_kind = TextKind.REFERENCE if REFERENCE_HEADINGS.match(text) else TextKind.PROSE
                blocks.append(Block(text, None, section, kind=TextKind.HEADING))
                continue
            current.append(repair_inline_hyphens(text, vocabulary))
        flush()
        core = document.core_properties
        front = _front_matter(document)
        created = core.created.year if core.created and real_title(core.title) else None
        stated = Bibliographic(
            title=real_title(core.title),
            authors=real_authors((core.author or "").split(";")),
            year=None
            if front.year
            else created,  # the file's creation date only where the text dates nothing
        )
        shown = title or (first if first and len(first) <= _MAX_TITLE_CHARS else "")
        # the cover's title and author line before the core properties', which are often a template's or the
        # last editor's ('Adam Fourney' for a paper by fourteen authors); but where the cover lists the core's
        # names, the core's list stands, and a cover title that starts the core title is one set in two sizes,
        # which the core holds whole
        partial = " ".join(stated.title.lower().split()).startswith(" ".join(front.title.lower().split()))
        agree = names_among(stated.authors, front.authors)
        cover = Bibliographic(title="" if partial else front.title, authors=[] if agree else front.authors)
        about = cover.merged(stated).merged(front)
        about = about.merged(Bibliographic(title=shown))
        return document_from_blocks(blocks, doc_id=doc_id, name=name, about=about)


def _front_matter(document: DocxDocument) -> Bibliographic:
    """Title, authors, year and publisher from the paragraphs before the abstract or contents: the title the
    run of paragraphs in the largest type, the names right under it, the organisation lines above it, and a
    date line of its own."""
    front: list[tuple[str, float]] = []
    for paragraph in document.paragraphs:
        text = " ".join(paragraph.text.split())
        if not text:
            continue
        if _FRONT_END.match(text) or len(front) == _FRONT_PARAGRAPHS:
            break
        sizes = [run.font.size.pt for run in paragraph.runs if run.font.size and run.text.strip()]
        style = (
            paragraph.style.font.size.pt if paragraph.style is not None and paragraph.style.font.size else 0.0
        )
        front.append((text, max(sizes, default=style)))
    if not front:
        return Bibliographic()
    largest = max(size for _, size in front)
    start = next(i for i, (_, size) in enumerate(front) if size == largest)
    end = next((i for i in range(start, len(front)) if front[i][1] != largest), len(front))
    if largest <= min(size for _, size in front):  # one type size throughout: no title to tell
        return Bibliographic(year=stated_year("\n".join(text for text, _ in front)))
    above = [text for text, _ in front[:start] if len(text) <= _MAX_PUBLISHER_LINE]
    return Bibliographic(
        title=" ".join(text for text, _ in front[start:end]),
        authors=front_authors([text for text, _ in front[end:]]),
        year=stated_year("\n".join(text for text, _ in front[end:])),
        venue=", ".join(above) if 0 < len(above) <= 3 else "",
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


def _mark_contents(items: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """``items`` with a table of contents marked ``contents``: a "Contents" line and the entries after it,
    each ending in a page number or wrapped onto a line whose page number follows within a few lines."""
    marked = list(items)
    i = 0
    while i < len(marked):
        what, value = marked[i]
        if what == "table" or not _CONTENTS.match(str(value)):
            i += 1
            continue
        marked[i] = ("contents", value)
        i += 1
        while i < len(marked) and _toc_entry(marked, i):
            marked[i] = ("contents", marked[i][1])
            i += 1
    return marked


def _toc_entry(items: list[tuple[str, object]], index: int) -> bool:
    what, value = items[index]
    if what == "table" or len(str(value)) > _TOC_ENTRY_CHARS:
        return False
    ahead = items[index : index + 1 + _TOC_LOOKAHEAD]
    return any(w != "table" and _PAGE_REF.search(str(v)) for w, v in ahead)


def _style_names(document: DocxDocument) -> dict[str, str]:
    """Each paragraph style's id -> its built-in name, lower case: a Word set to French names its heading styles'
    ids "Titre1" while their names stay "heading 1" (resolved once per document: per paragraph it is slow)."""
    return {
        style.style_id: (style.name or "").lower()
        for style in document.styles
        if style.type == WD_STYLE_TYPE.PARAGRAPH and style.style_id
    }


def _grid(table: Table) -> list[list[str]]:
    """The table's cell texts row by row (a merged cell repeats its text in each column it spans)."""
    return [[cell.text for cell in row.cells] for row in table.rows]
