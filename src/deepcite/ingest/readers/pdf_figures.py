"""A PDF page's figures: the text drawn inside an embedded chart or diagram, read apart from the prose.

deepcite's idea: a figure a paper includes from a plotting or drawing program is a form XObject of its own
on the page, drawing lines, shapes or images and holding its own text (axis ticks, axis titles, legends, a
diagram's boxes). PDFium's text segments know nothing of it, so that text was read into the prose around
it ("… from mul- 20 40 60 k: # of retrieved passages tiple datasets …"). A form is a figure when it covers
at most ``ingest.figure_max_page_share`` of the page (a page wrapped whole in one form is not one), is at
least ``ingest.figure_min_side`` points on each side, and draws at least ``ingest.figure_min_graphics``
paths, images or shadings along with some text of its own. The segments over that text are replaced by one
segment marked ``figure`` holding it line by line (:func:`with_figures`), which keeps its place in the
reading order and becomes a block of kind ``figure``: searchable, never an answer sentence. A form nested in
a figure is part of it. Nested objects' bounds are in their form's space, so each is mapped to the page
through the matrices of the forms around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from deepcite.config import IngestSettings
from deepcite.ingest.readers.pdf_layout import segment_lines
from deepcite.ingest.readers.pdf_segments import Segment
from deepcite.ingest.readers.pdf_tables import Box

_GRAPHICS = frozenset(
    {pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_SHADING}
)
_MAX_DEPTH = 15
_TOLERANCE = 1.0  # points: a text segment whose centre lies this close to a figure's text object is its


@dataclass
class Figure:
    """One figure on a page: its box and the boxes of the text it draws (page coordinates)."""

    box: Box
    texts: list[Box] = field(default_factory=list)
    graphics: int = 0


def find_figures(page: pdfium.PdfPage, width: float, height: float, settings: IngestSettings) -> list[Figure]:
    """The figures of ``page`` (see the module docstring), outermost first; none nested in another."""
    figures: list[Figure] = []
    chain: list[pdfium.PdfMatrix] = []  # the matrices of the forms around the current object, outermost first
    open_forms: list[tuple[int, Figure | None]] = []  # (level, the figure it is, or is inside, if any)
    for obj in page.get_objects(max_depth=_MAX_DEPTH):
        level = obj.level
        while open_forms and open_forms[-1][0] >= level:
            open_forms.pop()
            chain.pop()
        box = _on_page(obj.get_bounds(), chain)
        inside = open_forms[-1][1] if open_forms else None
        if obj.type == pdfium_c.FPDF_PAGEOBJ_FORM:
            figure = inside
            if figure is None and _figure_sized(box, width, height, settings):
                figure = Figure(box)
                figures.append(figure)
            open_forms.append((level, figure))
            chain.append(obj.get_matrix())
        elif inside is not None:
            if obj.type == pdfium_c.FPDF_PAGEOBJ_TEXT:
                inside.texts.append(box)
            elif obj.type in _GRAPHICS:
                inside.graphics += 1
    return [f for f in figures if f.texts and f.graphics >= settings.figure_min_graphics]


def _on_page(box: Box, chain: list[pdfium.PdfMatrix]) -> Box:
    """``box`` (in the space of the innermost form of ``chain``) in page coordinates."""
    for matrix in reversed(chain):
        box = matrix.on_rect(*box)
    return box


def _figure_sized(box: Box, width: float, height: float, settings: IngestSettings) -> bool:
    left, bottom, right, top = box
    w, h = right - left, top - bottom
    return min(w, h) >= settings.figure_min_side and w * h <= settings.figure_max_page_share * width * height


def in_figure(left: float, bottom: float, right: float, top: float, figure: Figure) -> bool:
    """Whether a text segment's centre lies on one of ``figure``'s text objects."""
    x, y = (left + right) / 2, (bottom + top) / 2
    return any(
        lo - _TOLERANCE <= x <= hi + _TOLERANCE and b - _TOLERANCE <= y <= t + _TOLERANCE
        for lo, b, hi, t in figure.texts
    )


def with_figures(segments: list[Segment], figures: list[Figure], settings: IngestSettings) -> list[Segment]:
    """``segments`` with those over each figure's text replaced by one segment marked ``figure`` holding
    that text line by line (a table found on the page stays a table)."""
    for figure in figures:
        inside = [s for s in segments if not s.whole and in_figure(s.left, s.bottom, s.right, s.top, figure)]
        if not inside:
            continue
        text = " ".join(line.text for line in segment_lines(inside, settings))
        left, bottom = min(s.left for s in inside), min(s.bottom for s in inside)
        right, top = max(s.right for s in inside), max(s.top for s in inside)
        segments = [s for s in segments if not any(s is i for i in inside)]
        segments.append(Segment(left, bottom, right, top, text, figure=True))
    return segments
