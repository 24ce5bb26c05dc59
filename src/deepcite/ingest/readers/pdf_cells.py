"""A found table's cells read from PDFium's characters: each grid row's printed lines, each cell's text with
its word gaps, so the table can be written row by row with its header (:mod:`deepcite.ingest.readers.tables`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from deepcite.ingest.readers.clean import join_lines
from deepcite.ingest.readers.pdf_layout import WORD_GAP, clean
from deepcite.ingest.readers.pdf_segments import Segment
from deepcite.ingest.readers.pdf_tables import Box, TableGrid
from deepcite.ingest.readers.tables import table_lines


def with_table(segments: list[Segment], table: TableGrid, textpage: pdfium.PdfTextPage) -> list[Segment]:
    """``segments`` with those inside ``table`` replaced by one segment holding the table's rows, each cell
    led by its header; unchanged when the table reads as fewer than two rows."""
    chars = _chars(textpage, table.box)
    grid = [line for row in table.rows for line in _row_lines(row, chars)]
    lines = table_lines(grid)
    outside = [s for s in segments if not _centre_in(s, table.box)]
    if len(lines) < 2 or len(outside) == len(segments):
        return segments
    left, bottom, right, top = table.box
    return [*outside, Segment(left, bottom, right, top, "\n".join(lines), table=True)]


@dataclass
class _Char:
    text: str
    left: float
    right: float
    middle: float  # the vertical centre of its line box (PDFium's loose box: the same for a whole line)
    height: float


def _chars(textpage: pdfium.PdfTextPage, box: Box) -> list[_Char]:
    """The characters whose centre lies in ``box``: a space only where the page sets one (PDFium's generated
    spaces and line breaks are put back from the gaps between characters)."""
    left, bottom, right, top = box
    chars = []
    for index in range(textpage.count_chars()):
        text = chr(pdfium_c.FPDFText_GetUnicode(textpage, index))
        if text.isspace() and (text != " " or pdfium_c.FPDFText_IsGenerated(textpage, index)):
            continue
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
    """The characters left to right, a space where the page sets one or the gap between two is wider than a
    word gap (a tightly set space can be narrower: "number of firearms")."""
    text = ""
    previous: _Char | None = None
    for char in sorted(chars, key=lambda c: c.left):
        if previous and char.left - previous.right > WORD_GAP * char.height:
            text += " "
        text += char.text
        previous = char
    return join_lines([clean(text)], Counter())


def _centre_in(segment: Segment, box: Box) -> bool:
    left, bottom, right, top = box
    return (
        left <= (segment.left + segment.right) / 2 <= right
        and bottom <= (segment.bottom + segment.top) / 2 <= top
    )
