"""PDF through PDFium (pypdfium2): text lines in reading order, cleaned, with pages and section headings.

deepcite's own idea here is the layout pass over PDFium's text segments:

- **Columns.** A page is two-column when most of its text sits in segments that stay on one side of the
  middle; its segments are then read band by band (a full-width segment, such as a figure caption or the
  title block, starts a new band), left column before right within a band.
- **Running headers and footers.** Lines in the top or bottom margin (``ingest.margin_share``) that repeat
  on at least ``ingest.repeated_line_share`` of the pages (digits ignored), and lone page numbers there,
  are dropped. Rotated text (the arXiv stamp in the margin) is dropped.
- **Words.** Ligatures and other compatibility characters are NFKC-normalised; a word hyphenated at a line
  end (PDFium marks such hyphens) is joined.
- **Sections.** A short line that numbers the next section in sequence ("3 Method", "3.2 Data"), or names a
  well-known one (Abstract, References …), starts a section; everything after "References" or
  "Bibliography" is labelled ``References`` until the next section heading.
- **Tables.** Where a table finder (:mod:`deepcite.ingest.readers.pdf_tables`) puts a table, the
  segments inside it are replaced by the table read row by row, each cell led by its column header
  (:mod:`deepcite.ingest.readers.tables`); the table keeps its place in the reading order and becomes a
  block of its own, which the chunker keeps whole row by row.
- **Scanned pages.** A page one image covers (``ingest.scanned_image_coverage``), or an image page with
  almost no text, is scanned: its text comes from tesseract (:mod:`deepcite.ingest.ocr`) when installed;
  otherwise the file is skipped as ``scanned`` with the fix to apply.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from deepcite.config import IngestSettings
from deepcite.ingest import ocr
from deepcite.ingest.readers.base import Block, ReadResult, SkipReason, document_from_blocks
from deepcite.ingest.readers.pdf_tables import Box, TableGrid, find_tables
from deepcite.ingest.readers.tables import table_lines

_SOFT_HYPHEN = "\x02"  # PDFium's mark for a hyphen it found at a line end
_HYPHEN_BREAK = re.compile(r"(\w)[\x02\-\u00ad]\n(?=[a-z])")
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)\]])")
_YEAR = re.compile(r"D:((?:19|20)\d\d)")
_NUMBERED = re.compile(
    r"^((?:\d{1,2})(?:\.\d{1,2}){0,2}|[A-H](?:\.\d{1,2}){0,2})\.?\s+([A-Z][^.!?:;]{1,70})$"
)
_NAMED = re.compile(
    r"^(?:\d{1,2}\.?\s+)?(abstract|introduction|related work|background|conclusions?|discussion|"
    r"acknowledge?ments?|references|bibliography|appendix|limitations|ethics statement|résumé)\s*$",
    re.IGNORECASE,
)
_REFERENCES = frozenset({"references", "bibliography"})
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_INCH = 72.0
# the title: looked for in the first 15 lines of page 1; starts at a line within 95% of the tallest height,
# keeps lines within 75% of it that follow within 1.6 line heights; at least 3 words, at most 300 chars
_TITLE_LINES, _TITLE_MIN_WORDS, _TITLE_MAX_CHARS = 15, 3, 300
_TITLE_START, _TITLE_KEEP, _TITLE_GAP = 0.95, 0.75, 1.6
_WORD_GAP = 0.2  # segments of one line further apart than this share of the line height are two words


@dataclass
class _Segment:
    left: float
    bottom: float
    right: float
    top: float
    text: str
    table: bool = False  # a whole table, its rows one a line


@dataclass
class _Line:
    text: str
    top: float
    height: float
    in_margin: bool
    table: bool = False


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
        pages: list[list[_Line]] = []
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
                pages[index] = [_Line(t, 0.0, 0.0, False) for t in ocr.page_text(pdf[index], settings)]
                ocr_pages += 1
        blocks = _blocks(_drop_running_lines(pages, settings))
        metadata = pdf.get_metadata_dict()
        first_page = "\n".join(line.text for line in pages[0])
        result = document_from_blocks(
            blocks,
            doc_id=doc_id,
            name=name,
            title=_clean(metadata.get("Title", "")) or ("" if 0 in scanned else _title(pages[0])),
            authors=[a.strip() for a in re.split(r"[;,]| and ", metadata.get("Author", "")) if a.strip()],
            doi=_first(_DOI, first_page),
            year=int(y) if (y := _first(_YEAR, metadata.get("CreationDate", ""))) else None,
        )
        result.pages = n_pages
        result.ocr_pages = ocr_pages
        return result


def _page_lines(
    page: pdfium.PdfPage, width: float, height: float, settings: IngestSettings, tables: list[TableGrid]
) -> list[_Line]:
    """The page's text lines in reading order; a table is one line of its own (its rows)."""
    textpage = page.get_textpage()
    try:
        segments = []
        for i in range(textpage.count_rects()):
            left, bottom, right, top = textpage.get_rect(i)
            text = textpage.get_text_bounded(left, bottom, right, top)
            if not text.strip():
                continue
            if (top - bottom) > 2 * (right - left) and len(text.strip()) > 2:
                continue  # rotated text: a margin stamp, an axis label
            segments.append(_Segment(left, bottom, right, top, text))
        for table in tables:
            segments = _with_table(segments, table, textpage)
    finally:
        textpage.close()
    middle = width / 2
    gap = settings.column_gap_share * width
    columns = _columns(segments, width, settings)
    if len(columns) > 2:
        in_column: list[list[_Segment]] = [[] for _ in columns]
        spanning = []
        for segment in segments:
            index = next(
                (i for i, (lo, hi) in enumerate(columns) if lo <= segment.left and segment.right <= hi), None
            )
            (spanning if index is None else in_column[index]).append(segment)
    else:  # two columns: split at the middle, as most papers are set
        in_column = [
            [s for s in segments if s.right <= middle + gap],
            [s for s in segments if s.left >= middle - gap and s.right > middle + gap],
        ]
        spanning = [s for s in segments if s.right > middle + gap and s.left < middle - gap]
    in_columns = sum(len(s.text) for column in in_column for s in column)
    across = sum(len(s.text) for s in spanning if not s.table)  # a table's rows say nothing of the columns
    if not (all(in_column) and in_columns > 2 * across):
        ordered = _lines(segments)
    else:
        ordered = []
        bands = sorted({s.top for s in spanning}, reverse=True)
        upper = float("inf")
        for cut in [*bands, float("-inf")]:
            band = lambda s, lo=cut, hi=upper: lo < s.top <= hi  # noqa: E731
            for column in in_column:
                ordered += _lines([s for s in column if band(s)])
            ordered += _lines([s for s in spanning if s.top == cut])
            upper = cut
    margin = settings.margin_share * height
    for line in ordered:
        line.in_margin = not line.table and (line.top > height - margin or line.top - line.height < margin)
    return ordered


def _columns(segments: list[_Segment], width: float, settings: IngestSettings) -> list[tuple[float, float]]:
    """The x-ranges of the page's text columns, left to right (each reaching to the middle of the gutters
    beside it), or ``[]`` for a page read as one column.

    A gutter is a vertical strip at least ``ingest.column_gutter_share`` of the page wide that the text
    crosses (full-width titles, captions) with less than a third of the characters that cross the fullest
    point of a column; a column holding less than ``ingest.column_min_share`` of the characters (a
    figure's labels, an indented list) is joined to its neighbour.
    """
    text = [s for s in segments if not s.table and s.text.strip()]  # a table's rows say nothing of columns
    if len(text) < 2:
        return []
    left, right = math.floor(min(s.left for s in text)), math.ceil(max(s.right for s in text))
    crossing = np.zeros(right - left + 2)
    for s in text:
        crossing[int(s.left) - left] += len(s.text.strip())
        crossing[math.ceil(s.right) - left + 1] -= len(s.text.strip())
    crossing = np.cumsum(crossing)[:-1]
    total = float(sum(len(s.text.strip()) for s in text))
    open_x = np.flatnonzero(crossing * 3 < crossing.max())
    gutters = [
        (float(run[0] + left), float(run[-1] + left + 1))
        for run in np.split(open_x, np.flatnonzero(np.diff(open_x) > 1) + 1)
        if run.size and run[-1] - run[0] + 1 >= settings.column_gutter_share * width
    ]
    while gutters:  # a column reaches to the middle of the gutters beside it
        edges = [float(left), *((lo + hi) / 2 for lo, hi in gutters), float(right) + 1]
        columns = list(zip(edges, edges[1:], strict=False))
        chars = [
            sum(len(s.text.strip()) for s in text if lo <= s.left and s.right <= hi) for lo, hi in columns
        ]
        smallest = min(range(len(columns)), key=chars.__getitem__)
        if chars[smallest] >= settings.column_min_share * total:
            return columns
        gutters.pop(min(smallest, len(gutters) - 1))
    return []


def _with_table(segments: list[_Segment], table: TableGrid, textpage: pdfium.PdfTextPage) -> list[_Segment]:
    """``segments`` with those inside ``table`` replaced by one segment holding the table's rows, each cell
    led by its header; unchanged when the table reads as fewer than two rows."""
    chars = _chars(textpage, table.box)
    grid = [line for row in table.rows for line in _row_lines(row, chars)]
    lines = table_lines(grid)
    outside = [s for s in segments if not _centre_in(s, table.box)]
    if len(lines) < 2 or len(outside) == len(segments):
        return segments
    left, bottom, right, top = table.box
    return [*outside, _Segment(left, bottom, right, top, "\n".join(lines), table=True)]


@dataclass
class _Char:
    text: str
    left: float
    right: float
    middle: float  # the vertical centre of its line box (PDFium's loose box: the same for a whole line)
    height: float


def _chars(textpage: pdfium.PdfTextPage, box: Box) -> list[_Char]:
    """The characters (generated spaces included) whose centre lies in ``box``."""
    left, bottom, right, top = box
    chars = []
    for index in range(textpage.count_chars()):
        text = chr(pdfium_c.FPDFText_GetUnicode(textpage, index))
        if text.isspace():
            continue  # spaces are put back from the gaps between characters
        x0, y0, x1, y1 = textpage.get_charbox(index, loose=True)
        if left <= (x0 + x1) / 2 <= right and bottom <= (y0 + y1) / 2 <= top:
            chars.append(_Char(text, x0, x1, (y0 + y1) / 2, y1 - y0))
    return chars


def _row_lines(row: list[Box | None], chars: list[_Char]) -> list[list[str]]:
    """One grid row's cell texts, printed line by line: a table finder can put several printed rows (not
    ruled off from each other) into one grid row. A line with text in one cell only continues the line
    above (a cell wrapped over two lines)."""
    boxes = [cell for cell in row if cell]
    if not boxes:
        return []
    bottom, top = min(b[1] for b in boxes), max(b[3] for b in boxes)
    printed: list[list[_Char]] = []
    for char in sorted((c for c in chars if bottom <= c.middle <= top), key=lambda c: -c.middle):
        if printed and abs(printed[-1][0].middle - char.middle) < max(char.height, 1.0) / 2:
            printed[-1].append(char)
        else:
            printed.append([char])
    lines: list[list[str]] = []
    for line in printed:
        cells = [
            _cell_text([c for c in line if cell[0] <= (c.left + c.right) / 2 <= cell[2]]) if cell else ""
            for cell in row
        ]
        if lines and sum(bool(c) for c in cells) <= 1:
            lines[-1] = [_continue(a, b) for a, b in zip(lines[-1], cells, strict=True)]
        else:
            lines.append(cells)
    return lines


def _continue(text: str, more: str) -> str:
    """A cell's text with the next printed line of it: joined at a line-end hyphen, else by a space."""
    return text + more if text.endswith("-") else f"{text} {more}".strip()


def _cell_text(chars: list[_Char]) -> str:
    """The characters left to right, a space where the gap between two is wider than a word gap."""
    text = ""
    previous: _Char | None = None
    for char in sorted(chars, key=lambda c: c.left):
        if previous and char.left - previous.right > _WORD_GAP * char.height:
            text += " "
        text += char.text
        previous = char
    return _join([_clean(text)])


def _centre_in(segment: _Segment, box: Box) -> bool:
    left, bottom, right, top = box
    return (
        left <= (segment.left + segment.right) / 2 <= right
        and bottom <= (segment.bottom + segment.top) / 2 <= top
    )


def _lines(segments: list[_Segment]) -> list[_Line]:
    """Segments grouped into lines (tops within half a line height), top to bottom, left to right."""
    lines: list[list[_Segment]] = []
    for segment in sorted(segments, key=lambda s: (-s.top, s.left)):
        height = segment.top - segment.bottom
        if (
            lines
            and not segment.table
            and not lines[-1][0].table
            and abs(lines[-1][0].top - segment.top) < max(height, 1.0) / 2
        ):
            lines[-1].append(segment)
        else:
            lines.append([segment])
    out = []
    for parts in lines:
        if parts[0].table:
            out.append(_Line(parts[0].text, parts[0].top, parts[0].top - parts[0].bottom, False, table=True))
            continue
        parts.sort(key=lambda s: s.left)
        text = ""
        previous: _Segment | None = None
        for part in parts:
            gap = part.left - previous.right if previous else 0.0
            height = part.top - part.bottom
            if (
                previous
                and gap > _WORD_GAP * height
                and not text.endswith((" ", _SOFT_HYPHEN))
                and not part.text.startswith(" ")
            ):
                text += " "
            text += part.text
            previous = part
        out.append(_Line(_clean(text), parts[0].top, parts[0].top - parts[0].bottom, False))
    return [line for line in out if line.text]


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text.replace("\r", " ").replace("\x00", ""))
    return re.sub(r"[ \t]+", " ", text).strip()


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
    page: pdfium.PdfPage, width: float, height: float, lines: list[_Line], settings: IngestSettings
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


def _drop_running_lines(pages: list[list[_Line]], settings: IngestSettings) -> list[list[_Line]]:
    """Pages without their running headers, footers and page numbers."""

    def key(line: _Line) -> str:
        return re.sub(r"\d+", "#", line.text.lower())

    seen = Counter(k for page in pages for k in {key(line) for line in page if line.in_margin})
    repeated = {
        k for k, n in seen.items() if len(pages) > 2 and n >= settings.repeated_line_share * len(pages)
    }
    return [
        [
            line
            for line in page
            if not (line.in_margin and (key(line) in repeated or _PAGE_NUMBER.match(line.text)))
        ]
        for page in pages
    ]


def _blocks(pages: list[list[_Line]]) -> list[Block]:
    """Blocks of text per page and section; hyphenated line ends joined."""
    blocks: list[Block] = []
    section: str | None = None
    last_number: list[int] = []
    seen_references = False
    for page_no, lines in enumerate(pages, start=1):
        current: list[str] = []
        for line in lines:
            if line.table:
                if current:
                    blocks.append(Block(_join(current), page_no, section))
                    current = []
                blocks.append(Block(line.text, page_no, section, table=True))
                continue
            heading = _heading(line.text, last_number, seen_references)
            if heading is not None:
                if current:
                    blocks.append(Block(_join(current), page_no, section))
                    current = []
                section = heading
                seen_references = seen_references or heading == "References"
            current.append(line.text)
        if current:
            blocks.append(Block(_join(current), page_no, section))
    return blocks


def _heading(text: str, last_number: list[int], after_references: bool) -> str | None:
    """The section a line starts, or ``None``; ``last_number`` tracks the top-level section number so a
    table row ("12 Paris 3.4") is not taken for a heading."""
    named = _NAMED.match(text)
    if named:
        word = named.group(1).lower()
        number = re.match(r"\d+", text)
        if number:
            last_number[:] = [int(number.group())]
        return "References" if word in _REFERENCES else text.strip()
    numbered = _NUMBERED.match(text)
    if not numbered or len(text) > 80 or not re.search(r"[^\W\d]{3}", numbered.group(2)):
        return None
    number = numbered.group(1)
    top = number.split(".")[0]
    if not top.isdigit() and not after_references:
        return None  # lettered sections are appendices, after the references
    if top.isdigit():
        value = int(top)
        current = last_number[0] if last_number else 0
        if "." in number and value != current:
            return None
        if "." not in number and value != current + 1:
            return None
        last_number[:] = [value]
    return text.strip()


def _join(lines: list[str]) -> str:
    text = "\n".join(lines)
    text = _HYPHEN_BREAK.sub(r"\1", text)
    return text.replace(_SOFT_HYPHEN, "-").replace("\n", " ")


def _title(lines: list[_Line]) -> str:
    """The tallest run of lines at the top of the first page that reads like a title (a few words, not the
    letters of a figure), when the metadata has none."""
    top = [line for line in lines[:_TITLE_LINES] if len(line.text) > 3]
    for tallest in sorted({line.height for line in top}, reverse=True):
        start = next(i for i, line in enumerate(top) if line.height >= tallest * _TITLE_START)
        while start > 0 and top[start - 1].height >= tallest * _TITLE_KEEP:
            start -= 1  # a title's first line can be a little shorter than its tallest
        run = [top[start].text]
        previous = top[start]
        for line in top[start + 1 :]:
            if line.height < tallest * _TITLE_KEEP or previous.top - line.top > _TITLE_GAP * tallest:
                break  # smaller text, or a gap: the authors
            run.append(line.text)
            previous = line
        title = " ".join(run)
        if len(title.split()) >= _TITLE_MIN_WORDS:
            return title[:_TITLE_MAX_CHARS]
    return ""


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None
