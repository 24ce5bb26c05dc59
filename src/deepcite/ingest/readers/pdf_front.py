"""A PDF's author block read from the first page's layout: names side by side, in a grid with an affiliation
under each, or on one line with affiliation marks, told from the affiliations by the type they are set in.

The text layer's lines run a grid's cells together ("Yusuke Shinyama Satoshi Sekine", a name and the next
column's e-mail address), so this reads the page's characters (PDFium) into runs of one font, size and baseline:
a run ends at a line break, at a gap wider than its letters are tall (names a quad apart), at a change of font or
size, and at a raised or lowered character (an affiliation mark, "Lane^a,c,*"). The author block lies under the
title and above the abstract (or the first line of prose, or a "Received …" line). Its names are the runs set in
the type of the first run that holds nothing but names; each name is in a cell, and a name set right under
another (centred, left- or right-aligned on it: "Kyle Lo" over "Doug Downey") shares its cell. Cells are read
row by row, left to right, each top to bottom.

    names = layout_authors(textpage, below=title_bottom)  # ['Joseph Chee Chang', 'Amy X. Zhang', …]
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from deepcite.ingest.readers.bibliographic import AFFILIATION, NAME_MARKS, real_authors

_LINE_BREAKS = frozenset((10, 13))
_SPACE = 32
_BASELINE_SHIFT = 0.2  # a character whose baseline is off the run's by this share of its height starts a run
_WIDE_GAP = 1.0  # a gap wider than this share of the run's letter height starts a run
_ROW = 0.5  # runs whose tops are within this share of a letter height are on one row
_ALIGNED = 0.25  # a name under another whose centre or edge is within this share of its height shares a cell
_PROSE_WORDS = 10  # a run this long that is no affiliation is the body's first line: the block ends above it
_END = re.compile(
    r"^\s*(?:a\s?b\s?s\s?t\s?r\s?a\s?c\s?t|abstract|summary|keywords|introduction|received)\b", re.I
)
_PARTICLES = frozenset(
    {"de", "da", "di", "do", "dos", "du", "del", "der", "den", "la", "le", "van", "von", "ter", "bin"}
)
_AFFILIATED = re.compile(
    rf"{AFFILIATION.pattern}|\.(?:com|org|edu|net)\b", re.I
)  # an affiliation or an address
_NAME_WORD = re.compile(r"^[A-ZÀ-ÖØ-Þ][\w'’.-]*$")


@dataclass
class _Run:
    codes: list[int]
    left: float
    right: float
    top: float
    bottom: float
    baseline: float
    font: tuple[str, float]
    space: bool = False  # a space came after the last character

    @property
    def text(self) -> str:
        return " ".join(
            "".join(map(chr, self.codes))
            .encode("utf-16-le", "surrogatepass")
            .decode("utf-16-le", "replace")
            .split()
        )

    @property
    def height(self) -> float:
        return max(self.top - self.bottom, 1.0)


def layout_authors(textpage: pdfium.PdfTextPage, below: float) -> list[str]:
    """The names of the author block under the title (its lowest line's bottom at ``below``), in reading order;
    [] when no run there holds nothing but names (module docstring)."""
    zone: list[_Run] = []
    for run in _rows([r for r in _runs(textpage) if r.top <= below + 1.0]):
        text = run.text
        words = len(text.split())
        if _END.match(text) or (words >= _PROSE_WORDS and not AFFILIATION.search(text)):
            break
        zone.append(run)
    named = [(run, names) for run in zone if (names := _names(run.text))]
    if not named:
        return []
    font = named[0][0].font
    named = [(run, names) for run, names in named if run.font == font]
    after = zone[zone.index(named[0][0]) + 1 :]
    if len(named) == 1 and len(named[0][1]) == 1 and not any(_AFFILIATED.search(r.text) for r in after):
        return []  # one "name" with no affiliation or address after it: a subtitle ("Vendor Resource Summary")
    cells: list[list[list[str]]] = []
    below_names: list[tuple[_Run, list[list[str]]]] = []  # the last name run of each cell, and the cell
    for row in _split_rows(named):
        for run, names in row:
            # a name alone on its row, right under a name: the same cell ("Kyle Lo" over "Doug Downey")
            cell = (
                next((c for above, c in below_names if _under(run, above)), None) if len(row) == 1 else None
            )
            if cell is None:
                cell = []
                cells.append(cell)
            cell.append(names)
            below_names = [(a, c) for a, c in below_names if c is not cell] + [(run, cell)]
    return real_authors(_capitalised(name) for cell in cells for names in cell for name in names)


def _runs(textpage: pdfium.PdfTextPage) -> list[_Run]:
    """The page's characters as runs of one font, size and baseline (module docstring)."""
    runs: list[_Run] = []
    current: _Run | None = None
    box = [ctypes.c_double() for _ in range(4)]
    x, y = ctypes.c_double(), ctypes.c_double()
    name = ctypes.create_string_buffer(96)
    flags = ctypes.c_int(0)
    for index in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage, index)
        if code in _LINE_BREAKS:
            current = None
            continue
        pdfium_c.FPDFText_GetCharBox(textpage, index, *(ctypes.byref(e) for e in box))
        left, right, bottom, top = (e.value for e in box)
        if (
            code == _SPACE
            or pdfium_c.FPDFText_IsGenerated(textpage, index)
            or (right <= left and top <= bottom)
        ):
            if current is not None:
                current.space = True
            continue
        pdfium_c.FPDFText_GetCharOrigin(textpage, index, ctypes.byref(x), ctypes.byref(y))
        pdfium_c.FPDFText_GetFontInfo(textpage, index, name, len(name), ctypes.byref(flags))
        font = (name.value.decode("latin-1"), round(pdfium_c.FPDFText_GetFontSize(textpage, index), 1))
        height = max(top - bottom, 1.0)
        if (
            current is None
            or font != current.font
            or abs(y.value - current.baseline) > _BASELINE_SHIFT * max(height, current.height)
            or left - current.right > _WIDE_GAP * current.height
            or left < current.left
        ):
            current = _Run([], left, right, top, bottom, y.value, font)
            runs.append(current)
        if current.space and current.codes:
            current.codes.append(_SPACE)
        current.codes.append(code)
        current.space = False
        current.right = max(current.right, right)
        current.top, current.bottom = max(current.top, top), min(current.bottom, bottom)
    return [run for run in runs if run.text]


def _split_rows(runs: list[tuple[_Run, list[str]]]) -> list[list[tuple[_Run, list[str]]]]:
    """Runs (each with what it holds) top to bottom in rows (tops within half a letter height), each row left
    to right; ``runs`` come top to bottom."""
    rows: list[list[tuple[_Run, list[str]]]] = []
    for item in sorted(runs, key=lambda r: -r[0].top):
        first = rows[-1][0][0] if rows else None
        if first is not None and first.top - item[0].top < _ROW * first.height:
            rows[-1].append(item)
        else:
            rows.append([item])
    return [sorted(row, key=lambda r: r[0].left) for row in rows]


def _rows(runs: list[_Run]) -> list[_Run]:
    """The runs in reading order: row by row, each row left to right."""
    return [run for row in _split_rows([(r, []) for r in runs]) for run, _ in row]


def _under(run: _Run, above: _Run) -> bool:
    """Whether ``run`` is set right under ``above`` in the same cell: the next line, centred or aligned on it."""
    if not 0 <= above.bottom - run.top < above.height:
        return False
    slack = _ALIGNED * above.height
    return (
        abs((run.left + run.right) - (above.left + above.right)) / 2 <= slack
        or abs(run.left - above.left) <= slack
        or abs(run.right - above.right) <= slack
    )


def _names(text: str) -> list[str]:
    """The names a run holds when it holds nothing else (commas, "and", marks between them); else []."""
    parts = [" ".join(p.split()) for p in re.split(r",|;|\band\b|&", NAME_MARKS.sub(",", text))]
    parts = [p for p in parts if p]
    return parts if parts and all(_person(p) for p in parts) else []


def _person(text: str) -> bool:
    words = text.split()
    return (
        2 <= len(words) <= 5
        and not AFFILIATION.search(text)
        and all(_NAME_WORD.match(w) or w.lower() in _PARTICLES for w in words)
        and _NAME_WORD.match(words[0]) is not None
    )


def _capitalised(name: str) -> str:
    """A name set in capitals ('MARTI A. HEARST') as it is written ('Marti A. Hearst')."""
    if not name.isupper():
        return name
    return re.sub(r"[A-Z]{2,}", lambda m: m.group(0)[0] + m.group(0)[1:].lower(), name)
