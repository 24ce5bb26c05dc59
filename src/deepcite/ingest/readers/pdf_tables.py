"""Where the tables of a PDF's pages are: PyMuPDF's table finder, when it is installed (the ``tables`` extra).

PyMuPDF is AGPL-3.0 (or Artifex's commercial licence), so it is optional and deepcite asks it only for the
boxes of tables and their cells; the cells' text is read by PDFium like the rest of the page
(:mod:`deepcite.ingest.readers.pdf`). How it was chosen over pdfplumber and camelot: docs/document-readers.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

Box = tuple[float, float, float, float]  # left, bottom, right, top in PDF points, origin bottom-left


@dataclass(frozen=True)
class TableGrid:
    """A table found on a page: its box and its rows of cell boxes (``None`` where a merged cell sits)."""

    box: Box
    rows: list[list[Box | None]]


def find_tables(
    path: Path, pages: list[int], *, min_rows: int, min_columns: int
) -> dict[int, list[TableGrid]]:
    """The tables of the given pages (0-based indexes), at least ``min_rows`` by ``min_columns``, by page;
    nothing when PyMuPDF is not installed."""
    try:
        import pymupdf
    except ImportError:
        return {}
    tables: dict[int, list[TableGrid]] = {}
    with pymupdf.open(path) as doc:
        for index in pages:
            page = doc[index]
            to_pdf = ~page.transformation_matrix
            for table in page.find_tables().tables:
                if table.row_count < min_rows or table.col_count < min_columns:
                    continue
                rows = [
                    [_pdf_box(pymupdf.Rect(cell) * to_pdf) if cell else None for cell in row.cells]
                    for row in table.rows
                ]
                grid = TableGrid(_pdf_box(pymupdf.Rect(table.bbox) * to_pdf), rows)
                tables.setdefault(index, []).append(grid)
    return tables


def _pdf_box(rect: object) -> Box:
    x0, y0, x1, y1 = rect  # type: ignore[misc]
    return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)
