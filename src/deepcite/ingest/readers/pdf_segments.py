"""A PDF page's text segments from PDFium: each of its rectangles of text with its own characters, whether it is
set in a monospaced font, its font size and the gaps between its letters (what the layout pass,
:mod:`deepcite.ingest.readers.pdf_layout`, reads words and lines from). Rotated text (an arXiv stamp, an axis
label) is dropped.
"""

from __future__ import annotations

import ctypes
import math
import re
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_LINE_BREAKS = frozenset((10, 13))
EDGE = 0.01  # points: a character's centre on its rectangle's edge is inside it
# a monospaced (typewriter) font, as code listings are set: by PDFium's fixed-pitch flag, or by name when an
# embedded font does not set it (TeX's cmtt, cm-super's sftt, Latin Modern Mono; Courier, Consolas …)
_FIXED_PITCH = 1
_MONO_FONT = re.compile(
    r"mono|courier|consol|typewriter|menlo|inconsolata|(?:^|\+)(?:sftt|cmtt|lmtt|ectt|txtt|pcrr|t1-lmtt|rm-lmtt)",
    re.IGNORECASE,
)


@dataclass
class Segment:
    left: float
    bottom: float
    right: float
    top: float
    text: str
    table: bool = False  # a whole table, its rows one a line
    figure: bool = False  # the text of a whole figure, its lines one a line (pdf_figures)
    mono: bool = False  # set in a monospaced font
    em: float = 0.0  # its font size on the page, in points (the largest of its characters'); 0: not known
    # the gaps between its letters and digits set next to each other (no space between), in points: a line's
    # letter spacing is read from them (:func:`deepcite.ingest.readers.pdf_layout.letter_spacing`)
    letter_gaps: tuple[float, ...] = ()

    @property
    def whole(self) -> bool:
        """A table or a figure: one line of its own, saying nothing of the page's columns."""
        return self.table or self.figure


def text_segments(textpage: pdfium.PdfTextPage) -> list[Segment]:
    """The page's text segments (PDFium's rectangles of text, each with its own characters), rotated text
    left out."""
    segments = []
    rects = [textpage.get_rect(i) for i in range(textpage.count_rects())]
    for (left, bottom, right, top), owned in zip(rects, rect_texts(textpage, rects), strict=True):
        if not owned.text.strip():
            continue
        if (top - bottom) > 2 * (right - left) and len(owned.text.strip()) > 2:
            continue  # rotated text: a margin stamp, an axis label
        mono = _monospaced(textpage, left, bottom, top)
        segments.append(
            Segment(
                left, bottom, right, top, owned.text, mono=mono, em=owned.em, letter_gaps=tuple(owned.gaps)
            )
        )
    return segments


@dataclass
class RectText:
    """A rectangle's own characters, its font size (points, the largest of its characters') and the gaps
    between its letters and digits set next to each other."""

    codes: list[int]
    em: float = 0.0
    gaps: list[float] = field(default_factory=list)
    # where its last character ends, and whether it is a letter or digit (None after a space)
    last: tuple[float, bool] | None = None

    @property
    def text(self) -> str:
        # PDFium gives UTF-16 code units: a character beyond the BMP (a math italic letter) comes as a pair
        return (
            "".join(map(chr, self.codes)).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        )


def rect_texts(
    textpage: pdfium.PdfTextPage, rects: list[tuple[float, float, float, float]]
) -> list[RectText]:
    """Each rectangle's own characters, in the page's text order: a character belongs to the rectangle that
    holds the centre of its box, and a space PDFium generated to the rectangle before it (a line break it
    generated to none). PDFium's text of a rectangle's bounds takes every character whose box touches them:
    where glyph boxes overlap (a bold or tightly kerned face; small capitals), the neighbours' edge characters
    came twice ("does not t prohibit", "Macr" + "crovision")."""
    owned = [RectText([]) for _ in rects]
    edges = [ctypes.c_double() for _ in range(4)]
    matrix = pdfium_c.FS_MATRIX()
    current: int | None = None
    for index in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage, index)
        pdfium_c.FPDFText_GetCharBox(textpage, index, *(ctypes.byref(e) for e in edges))
        left, right, bottom, top = (e.value for e in edges)
        if pdfium_c.FPDFText_IsGenerated(textpage, index) or (right <= left and top <= bottom):
            if current is not None and code not in _LINE_BREAKS:
                owned[current].codes.append(code)
                owned[current].last = None  # a space between: no letter gap
            continue
        current = _holder(rects, (left + right) / 2, (bottom + top) / 2, current or 0)
        if current is None:
            continue
        rect = owned[current]
        rect.codes.append(code)
        # the font size in page points: the size set times the scale of the character's matrix (a PDF may set
        # size 1 and scale its text matrix)
        pdfium_c.FPDFText_GetMatrix(textpage, index, ctypes.byref(matrix))
        scale = math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))
        rect.em = max(rect.em, pdfium_c.FPDFText_GetFontSize(textpage, index) * scale)
        letter = chr(code).isalnum()
        if rect.last is not None and rect.last[1] and letter:
            rect.gaps.append(left - rect.last[0])
        rect.last = (right, letter)
    return owned


def _holder(rects: list[tuple[float, float, float, float]], x: float, y: float, near: int) -> int | None:
    """The rectangle holding the point: looked for from ``near`` on first (rectangles follow the text order)."""
    for i in (*range(near, min(near + 4, len(rects))), *range(len(rects))):
        left, bottom, right, top = rects[i]
        if left - EDGE <= x <= right + EDGE and bottom - EDGE <= y <= top + EDGE:
            return i
    return None


def _monospaced(textpage: pdfium.PdfTextPage, left: float, bottom: float, top: float) -> bool:
    """Whether the segment starting at ``left`` is set in a monospaced font (its first character's)."""
    index = pdfium_c.FPDFText_GetCharIndexAtPos(textpage, left + 0.5, (bottom + top) / 2, 1.0, 1.0)
    if index < 0:
        return False
    name = ctypes.create_string_buffer(128)
    flags = ctypes.c_int(0)
    if not pdfium_c.FPDFText_GetFontInfo(textpage, index, name, len(name), ctypes.byref(flags)):
        return False
    return bool(flags.value & _FIXED_PITCH) or bool(_MONO_FONT.search(name.value.decode("latin-1")))
