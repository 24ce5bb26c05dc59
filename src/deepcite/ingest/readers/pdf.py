"""PDF through PDFium (pypdfium2): text lines in reading order, cleaned, with pages, sections and kinds.

The reader runs one module per job:

- :mod:`~deepcite.ingest.readers.pdf_segments`: PDFium's text segments, each with its own characters, font size
  and letter gaps (rotated text dropped);
- :mod:`~deepcite.ingest.readers.pdf_layout`: the layout pass over them (columns, reading order, lines;
  superscript note markers dropped; ligatures NFKC-normalised);
- :mod:`~deepcite.ingest.readers.pdf_tables` finds ruled tables, :mod:`~deepcite.ingest.readers.pdf_cells`
  reads their cells, and the table replaces its segments, read row by row with each cell led by its column
  header (:mod:`deepcite.ingest.readers.tables`); it keeps its place in the reading order as a block of
  its own, which the chunker keeps whole row by row;
- :mod:`~deepcite.ingest.readers.pdf_text`: running heads and page numbers dropped, sections found,
  captions, page furniture, equations and reference lists labelled, line-end hyphens joined;
- this module: the file as a whole, the pages' limits, scanned pages, and what the file says about itself
  (:mod:`~deepcite.ingest.readers.bibliographic`: title, authors, year, venue).

**Scanned pages.** A page one image covers (``ingest.scanned_image_coverage``), or an image page with
almost no text, is scanned: its text comes from tesseract (:mod:`deepcite.ingest.ocr`) when installed;
otherwise the file is skipped as ``scanned`` with the fix to apply.
"""

from __future__ import annotations

import re
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from deepcite.config import IngestSettings
from deepcite.ingest import ocr
from deepcite.ingest.readers.base import ReadResult, SkipReason, document_from_blocks
from deepcite.ingest.readers.bibliographic import (
    Bibliographic,
    authors_after,
    copyright_line_year,
    names_among,
    real_authors,
    real_title,
    stated_venue,
    stated_year,
    year_of,
)
from deepcite.ingest.readers.pdf_cells import with_table
from deepcite.ingest.readers.pdf_figures import find_figures, with_figures
from deepcite.ingest.readers.pdf_front import layout_authors
from deepcite.ingest.readers.pdf_layout import Line, clean, reading_order
from deepcite.ingest.readers.pdf_segments import text_segments
from deepcite.ingest.readers.pdf_tables import TableGrid, find_tables
from deepcite.ingest.readers.pdf_text import drop_running_lines, page_blocks

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)\]])")
_INCH = 72.0
# the title: looked for in the first 15 lines of page 1; starts at a line within 95% of the tallest height,
# keeps lines within 75% of it that follow within 1.6 line heights (2.6 for lines in capitals); at least 3
# words, at most 300 chars
_TITLE_LINES, _TITLE_MIN_WORDS, _TITLE_MAX_CHARS = 15, 3, 300
_TITLE_START, _TITLE_KEEP, _TITLE_GAP = 0.95, 0.75, 1.6
_TITLE_CAPS_GAP = 2.6  # a title in capitals: its lines may be this many line heights apart


class PdfReader:
    """PDFs with a text layer, and scanned PDFs through OCR."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        try:
            pdf = pdfium.PdfDocument(path)
        except pdfium.PdfiumError as exc:
            if "password" in str(exc).lower():
                return ReadResult.skipped(
                    SkipReason.ENCRYPTED,
                    "the PDF is encrypted; save a copy without a password and ingest that",
                )
            return ReadResult.skipped(
                SkipReason.CORRUPT, f"not a readable PDF ({exc}); the file may be damaged"
            )
        try:
            return self._read(pdf, path, doc_id=doc_id, name=name, settings=settings)
        finally:
            pdf.close()

    def _read(
        self, pdf: pdfium.PdfDocument, path: Path, *, doc_id: str, name: str, settings: IngestSettings
    ) -> ReadResult:
        n_pages = len(pdf)
        if n_pages == 0:
            return ReadResult.skipped(SkipReason.EMPTY, "the PDF has no pages; nothing to ingest")
        if n_pages > settings.max_pages:
            return ReadResult.skipped(
                SkipReason.TOO_LARGE,
                f"the PDF has {n_pages} pages, over the {settings.max_pages} limit (setting ingest.max_pages)",
            )
        tables = (
            find_tables(
                path,
                [i for i in range(n_pages) if _ruled(pdf[i], settings)],
                min_rows=settings.table_min_rows,
                min_columns=settings.table_min_columns,
            )
            if settings.pdf_tables
            else {}
        )
        pages: list[list[Line]] = []
        scanned: list[int] = []
        for index in range(n_pages):
            page = pdf[index]
            try:
                width, height = page.get_size()
                if width * height > settings.max_page_area_sq_in * _INCH * _INCH:
                    return ReadResult.skipped(
                        SkipReason.TOO_LARGE,
                        f"page {index + 1} is {width / _INCH:.0f} x {height / _INCH:.0f} inches, over the "
                        f"{settings.max_page_area_sq_in:g} square-inch limit (setting ingest.max_page_area_sq_in)",
                    )
                lines = _page_lines(page, width, height, settings, tables.get(index, []))
                if _is_scanned(page, width, height, lines, settings):
                    scanned.append(index)
                pages.append(lines)
            finally:
                page.close()
        ocr_pages = 0
        if scanned:
            if not (settings.ocr and ocr.available(settings)):
                return ReadResult.skipped(
                    SkipReason.SCANNED,
                    f"scanned, no text layer: install tesseract-ocr to OCR it ({len(scanned)} of {n_pages} "
                    "pages are images)",
                )
            for index in scanned:
                pages[index] = [Line(t, 0.0, 0.0, False) for t in ocr.page_text(pdf[index], settings)]
                ocr_pages += 1
        blocks = page_blocks(drop_running_lines(pages, settings))
        first_page = "\n".join(line.text for line in pages[0])
        result = document_from_blocks(
            blocks,
            doc_id=doc_id,
            name=name,
            doi=_first(_DOI, first_page),
            about=_bibliographic(pdf, pages[0], pages[1:2], scanned=0 in scanned),
        )
        result.pages = n_pages
        result.ocr_pages = ocr_pages
        return result


def _page_lines(
    page: pdfium.PdfPage, width: float, height: float, settings: IngestSettings, tables: list[TableGrid]
) -> list[Line]:
    """The page's text lines in reading order; a table is one line of its own (its rows)."""
    textpage = page.get_textpage()
    try:
        segments = text_segments(textpage)
        for table in tables:
            segments = with_table(segments, table, textpage)
        segments = with_figures(segments, find_figures(page, width, height, settings), settings)
    finally:
        textpage.close()
    return reading_order(segments, width, height, settings)


def _ruled(page: pdfium.PdfPage, settings: IngestSettings) -> bool:
    """Whether the page draws at least ``ingest.table_min_rules`` horizontal rules, as a ruled table does:
    only such pages are given to the table finder, which finds tables by their rules."""
    rules = 0
    try:
        for path in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=3):
            left, bottom, right, top = path.get_bounds()
            rules += (
                top - bottom <= settings.table_rule_max_thickness
                and right - left >= settings.table_rule_min_width
            )
            if rules >= settings.table_min_rules:
                return True
    finally:
        page.close()
    return False


def _is_scanned(
    page: pdfium.PdfPage, width: float, height: float, lines: list[Line], settings: IngestSettings
) -> bool:
    """Images and next to no text, or one image covering the page under an invisible text layer (the
    mark of an OCR layer laid over a scan)."""
    images = list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2))
    if not images:
        return False
    if sum(len(line.text) for line in lines) < settings.scanned_min_chars:
        return True
    covered = False
    for image in images:
        left, bottom, right, top = image.get_bounds()
        covered = (
            covered or (right - left) * (top - bottom) >= settings.scanned_image_coverage * width * height
        )
    if not covered:
        return False
    texts = list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT], max_depth=2))
    invisible = sum(
        pdfium_c.FPDFTextObj_GetTextRenderMode(t.raw) == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE for t in texts
    )
    return invisible * 2 >= len(texts)


def _bibliographic(
    pdf: pdfium.PdfDocument, first: list[Line], then: list[list[Line]], *, scanned: bool
) -> Bibliographic:
    """Title, authors, year and venue from the PDF's metadata, else its first page (a scanned page states
    nothing the reader trusts): the title run, the names under it, the year a proceedings or copyright line, an
    arXiv stamp or a date line states (else the copyright line of the page after it, ``then``: a report's
    notices page), and the proceedings named. The metadata's creation date dates the
    document only when the metadata names its title too (an authored export, not a scanner's or a
    converter's file)."""
    metadata = pdf.get_metadata_dict()
    title = real_title(clean(metadata.get("Title", "")))
    authors = real_authors(re.split(r"[;,]| and ", metadata.get("Author", "")))
    found = Bibliographic(
        title=title, authors=authors, year=year_of(metadata.get("CreationDate")) if title else None
    )
    if scanned:
        return found
    textpage = pdf[0].get_textpage()
    raw = textpage.get_text_range()  # every line of page 1, the margin's arXiv stamp too
    run, bottom = _title(first)
    # the names under the title from the page's layout (a grid of names and affiliations), else as the file
    # holds its lines: the layout pass drops the marks between names
    laid = (layout_authors(textpage, bottom) or authors_after(raw, run)) if run else []
    notices = "\n".join(line.text for page in then for line in page)
    page = Bibliographic(
        title=real_title(run),
        authors=laid,
        year=stated_year(raw) or copyright_line_year(notices),
        venue=stated_venue(raw),
    )
    return Bibliographic(
        title=found.title or page.title,
        # the page's list where it names the metadata's author (often the one who saved the file) and more
        authors=page.authors
        if len(page.authors) > len(found.authors) and names_among(found.authors, page.authors)
        else found.authors or page.authors,
        year=page.year or found.year,  # what the page states before the file's own date
        venue=page.venue,
    )


def _title(lines: list[Line]) -> tuple[str, float]:
    """The tallest run of lines at the top of the first page that reads like a title (a few words, not the
    letters of a figure), and where its last line ends (the page's y of its bottom); ("", 0.0) when none does."""
    top = [line for line in lines[:_TITLE_LINES] if len(line.text) > 3 and not (line.table or line.figure)]
    for tallest in sorted({line.height for line in top}, reverse=True):
        start = next(i for i, line in enumerate(top) if line.height >= tallest * _TITLE_START)
        while start > 0 and top[start - 1].height >= tallest * _TITLE_KEEP:
            start -= 1  # a title's first line can be a little shorter than its tallest
        run = [top[start].text]
        previous = top[start]
        for line in top[start + 1 :]:
            # a title set in capitals may be spaced wider: its next capitals line of its height continues it
            capitals = (
                line.text.isupper() and previous.text.isupper() and line.height >= previous.height * 0.95
            )
            gap = (_TITLE_CAPS_GAP if capitals else _TITLE_GAP) * tallest
            if line.height < tallest * _TITLE_KEEP or previous.top - line.top > gap:
                break  # smaller text, or a gap: the authors
            run.append(line.text)
            previous = line
        title = " ".join(run)
        if len(title.split()) >= _TITLE_MIN_WORDS:
            return title[:_TITLE_MAX_CHARS], previous.top - previous.height
    return "", 0.0


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None
