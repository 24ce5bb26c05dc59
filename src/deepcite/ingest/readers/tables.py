"""Tables as text a search can match: one line per row, each cell led by its column's header.

deepcite's idea: a row read alone ("Google Scholar 0.1130 0.0970 0.0609") does not say what its numbers
are, so every cell carries its header ("Method: Google Scholar | Recall@20: 0.0609"). A row is then a
self-contained unit the chunker never splits from its header. The readers (PDF, DOCX, PPTX) give the
grid of cell texts; this module decides which leading rows are headers and writes the rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# a cell that is a figure: a number with optional sign, unit, spread or footnote mark ("-0.5", "35.6%",
# "8.1M", "90.41 ± 0.06", "93.3*"); a row holding one is data, not a header
_FIGURE = re.compile(r"^[\s\-+−±~<>≈(]*\d[\d.,]*\s*(?:%|[kKMBx])?\)?(?:\s*±\s*[\d.]+)?\s*[*†‡]?$")
_CELL_SEPARATOR = " | "


def table_lines(grid: list[list[str]]) -> list[str]:
    """The rows of ``grid`` (rows of cell texts, header rows first) as lines ``"header: value | …"``.

    The first row is the header; a following row with an empty first cell and no figure continues it
    (a two-level header: "Top-20" over "NQ"), and its text is appended to the column's header. A body
    row with an empty first cell takes the label of the row above (a label merged over rows). Empty
    cells are left out; a cell under an empty header is written alone; a merged cell repeated across
    columns is written once. A table of one row, or whose first row is empty or holds a figure (no
    header: "Total papers | 81.1M"), is written as plain cells.
    """
    rows = [[" ".join(cell.split()) for cell in row] for row in grid]
    rows = [row for row in rows if any(row)]
    if not rows:
        return []
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    header_count = 1
    while header_count < len(rows) - 1 and _continues_header(rows[header_count]):
        header_count += 1
    headers = [
        " ".join(part for part in (row[i].rstrip(":").strip() for row in rows[:header_count]) if part)
        for i in range(width)
    ]
    if len(rows) == 1 or not any(headers) or any(_FIGURE.match(cell) for cell in rows[0] if cell):
        return [_CELL_SEPARATOR.join(_distinct(row)) for row in rows]
    lines = []
    label = ""
    for row in rows[header_count:]:
        if not row[0] and any(row[1:]):  # a row label merged over several rows: carried down
            row = [label, *row[1:]]
        label = row[0]
        cells = _distinct(
            f"{header}: {value}" if header else value
            for header, value in zip(headers, row, strict=True)
            if value
        )
        lines.append(_CELL_SEPARATOR.join(cells))
    return lines


def _continues_header(row: list[str]) -> bool:
    return not row[0] and not any(_FIGURE.match(cell) for cell in row if cell)


def _distinct(cells: Iterable[str]) -> list[str]:
    """Cells without the consecutive repeats a merged cell leaves."""
    out: list[str] = []
    for cell in cells:
        if cell and (not out or out[-1] != cell):
            out.append(cell)
    return out


def split_row(row: str, max_words: int) -> list[str]:
    """A row line of :func:`table_lines` in pieces of at most ``max_words`` words, cut between cells; each
    piece after the first starts with the row's first cell (its label), so no cell loses its row. A single
    cell longer than the budget is cut into word windows."""
    if len(row.split()) <= max_words:
        return [row]
    label, *cells = row.split(_CELL_SEPARATOR)
    if len(label.split()) >= max_words // 2:  # no room for a label: cut between cells only
        label, cells = "", [label, *cells]
    head = [label] if label else []
    pieces: list[str] = []
    current = list(head)
    for cell in cells:
        words = cell.split()
        too_long = len(words) > max_words
        if current != head and (too_long or len(_CELL_SEPARATOR.join([*current, cell]).split()) > max_words):
            pieces.append(_CELL_SEPARATOR.join(current))
            current = list(head)
        if too_long:
            pieces += [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]
        else:
            current.append(cell)
    if current != head:
        pieces.append(_CELL_SEPARATOR.join(current))
    return pieces
