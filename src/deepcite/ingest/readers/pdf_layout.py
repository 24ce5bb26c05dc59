"""The layout pass over PDFium's text segments: columns, reading order, lines.

deepcite's own idea (see :mod:`deepcite.ingest.readers.pdf`): a page is two-column when most of its text
sits in segments that stay on one side of the middle (or between gutters the text leaves open); its segments
are then read band by band (a full-width segment, such as a figure caption or the title block, starts a new
band), left column before right within a band. A note marker set as a superscript after a word ("practice²",
"end.⁵"), a smaller segment raised above its line that holds only a number, is dropped. The segments come from
:mod:`deepcite.ingest.readers.pdf_segments`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from deepcite.config import IngestSettings
from deepcite.ingest.readers.pdf_segments import EDGE, Segment

WORD_GAP = 0.2  # segments of one line further apart than this share of the line height are two words
# closing punctuation is a word of its own only further off than this share of the line's height: the
# bearings of "1" and ";" leave 0.2-0.36 of it ("2021; Clark", "§2.1. The"); a space in code or math ", "
# leaves 0.7 and more (measured over the shared and first blind set's PDFs)
CLOSING_GAP = 0.4
# a superscript note marker: a segment at most this share of its line's height, its bottom raised by at
# least this share of it, holding a number, a list or range of numbers, or a dagger, and set against the
# word before it (digits on the baseline have boxes up to ~0.75 of a line's and sit ~0.25 above its
# descenders: "Table 2", "{20, 100}" stay)
_SUPERSCRIPT_HEIGHT, _SUPERSCRIPT_RAISE = 0.65, 0.4
_MARKER = re.compile(r"^(?:\d{1,3}(?:[,–-]\d{1,3})*|[*†‡§¶])$")
_PUNCTUATION = re.compile(r"^[.,;:·∙⋅]$")
_CLOSING = frozenset(".,;:)]")
# a run set inside a line is at most this share of the line's height: a subscript, a decimal point, or a run of
# letters without ascenders or descenders ("e", "au", "n": their boxes are 0.5-0.67 of a line's)
_SMALL_RUN = 0.75


@dataclass
class Line:
    text: str
    top: float
    height: float
    in_margin: bool
    table: bool = False
    figure: bool = False
    mono_share: float = 0.0  # the share of its characters set in a monospaced font (a code listing's lines)


def reading_order(
    segments: list[Segment], width: float, height: float, settings: IngestSettings
) -> list[Line]:
    """The page's lines in reading order (columns left to right within a band); a table is one line of its
    own (its rows). Each line knows whether it lies in the top or bottom margin. Columns are found on runs
    (:func:`_stream_runs`), not on PDFium's segments: justified text can come one segment a word."""
    middle = width / 2
    gap = settings.column_gap_share * width
    runs = _stream_runs(segments, gap)
    boxes = [_bounds(run) for run in runs]
    members = {id(box): run for box, run in zip(boxes, runs, strict=True)}

    def lines_of(chosen: list[Segment]) -> list[Line]:
        return segment_lines([segment for box in chosen for segment in members[id(box)]], settings)

    columns = _columns(boxes, width, settings)
    if len(columns) > 2:
        in_column: list[list[Segment]] = [[] for _ in columns]
        spanning = []
        for box in boxes:
            index = next(
                (i for i, (lo, hi) in enumerate(columns) if lo <= box.left and box.right <= hi), None
            )
            (spanning if index is None else in_column[index]).append(box)
    else:  # two columns: split at the middle, as most papers are set
        # a short run that fits either side of the gutter ("(" opening a right-column line) goes by its centre
        right = [
            s.left >= middle - gap and (s.right > middle + gap or s.left + s.right > 2 * middle)
            for s in boxes
        ]
        in_column = [
            [s for s, r in zip(boxes, right, strict=True) if s.right <= middle + gap and not r],
            [s for s, r in zip(boxes, right, strict=True) if r],
        ]
        spanning = [s for s in boxes if s.right > middle + gap and s.left < middle - gap]
    in_columns = sum(len(s.text) for column in in_column for s in column)
    across = sum(len(s.text) for s in spanning if not s.whole)  # a table's rows say nothing of the columns
    if not (all(in_column) and in_columns > 2 * across):
        ordered = segment_lines(segments, settings)
    else:
        ordered = []
        bands = sorted({s.top for s in spanning}, reverse=True)
        # a column's segment on a spanning segment's line is read with it ("T" "ABLE" "F" "ORMER" in small
        # capitals left of the middle, ": Robust Transformer …" across it: one title line)
        beside = {
            id(s): cut
            for column in in_column
            for s in column
            for cut in bands
            if any(
                not p.whole and p.top == cut and abs(p.top - s.top) < (p.top - p.bottom) / 2 for p in spanning
            )
        }
        upper = float("inf")
        for cut in [*bands, float("-inf")]:
            band = lambda s, lo=cut, hi=upper: lo < s.top <= hi and id(s) not in beside  # noqa: E731
            for column in in_column:
                ordered += lines_of([s for s in column if band(s)])
            with_line = [s for column in in_column for s in column if beside.get(id(s)) == cut]
            ordered += lines_of([s for s in spanning if s.top == cut] + with_line)
            upper = cut
    margin = settings.margin_share * height
    for line in ordered:
        line.in_margin = not (line.table or line.figure) and (
            line.top > height - margin or line.top - line.height < margin
        )
    return ordered


def _stream_runs(segments: list[Segment], gap: float) -> list[list[Segment]]:
    """The segments in runs: a run is a chain of segments that follow one another in PDFium's text order on
    one line, each starting right of the one before and less than ``gap`` after its end. A column's line ends
    at the gutter and the text goes on down the column; a page-wide line set in pieces goes on to its right
    (measured: a white paper's justified text came one segment a word, and its lines were read as two
    columns' halves)."""
    runs: list[list[Segment]] = []
    for segment in segments:
        previous = runs[-1][-1] if runs else None
        if (
            previous is not None
            and not (segment.whole or previous.whole)
            and previous.left < segment.left < previous.right + gap
            and min(segment.top, previous.top) - max(segment.bottom, previous.bottom)
            > min(segment.top - segment.bottom, previous.top - previous.bottom) / 2
        ):
            runs[-1].append(segment)
        else:
            runs.append([segment])
    return runs


def _bounds(run: list[Segment]) -> Segment:
    """A run as one segment: its box and its characters (the segment itself for a run of one)."""
    if len(run) == 1:
        return run[0]
    return Segment(
        min(s.left for s in run),
        min(s.bottom for s in run),
        max(s.right for s in run),
        max(s.top for s in run),
        "".join(s.text for s in run),
    )


def _columns(segments: list[Segment], width: float, settings: IngestSettings) -> list[tuple[float, float]]:
    """The x-ranges of the page's text columns, left to right (each reaching to the middle of the gutters
    beside it), or ``[]`` for a page read as one column.

    A gutter is a vertical strip at least ``ingest.column_gutter_share`` of the page wide that the text
    crosses (full-width titles, captions) with less than a third of the characters that cross the fullest
    point of a column; a column holding less than ``ingest.column_min_share`` of the characters (a
    figure's labels, an indented list) is joined to its neighbour.
    """
    text = [s for s in segments if not s.whole and s.text.strip()]  # a table's rows say nothing of columns
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


def _inside(segment: Segment, line: list[Segment]) -> bool:
    """Whether ``segment`` is a small run set inside ``line``: at most ``_SMALL_RUN`` of the line's height, lying between
    its lowest bottom and highest top (a decimal point, a comma or a centred dot in a formula, a subscript:
    "λ = 1.1", "λ · sim(q, p)", "k1"). Its box is the glyph's, well below the line's top, so the rule of tops
    within half a height would set it on a line of its own, read after the line ("λ = 1 1 … in .")."""
    if not line or line[0].whole:
        return False
    bottom, top = min(s.bottom for s in line), max(s.top for s in line)
    return (
        segment.top - segment.bottom <= _SMALL_RUN * (top - bottom)
        and bottom - EDGE <= segment.bottom
        and segment.top <= top + EDGE
    )


def segment_lines(segments: list[Segment], settings: IngestSettings) -> list[Line]:
    """Segments grouped into lines (tops within half a line height, and the small runs set inside a line),
    top to bottom, left to right; note markers set as superscripts left out.

    Two segments of a line that meet between letters or digits are two words when the gap between them is
    wider than the line's letter spacing (:func:`letter_spacing`) by more than ``ingest.pdf_word_gap`` of the
    larger font size of the two: measured on one small glyph's box, a letter-spaced heading's gap between "u"
    and "n" passed for a word gap ("Backgrou nd"). Other gaps (at punctuation, or where a font size is not known:
    a figure's or a table's text) are word gaps over ``WORD_GAP`` of the taller segment's height."""
    lines: list[list[Segment]] = []
    for segment in sorted(segments, key=lambda s: (-s.top, s.left)):
        height = segment.top - segment.bottom
        if (
            lines
            and not segment.whole
            and not lines[-1][0].whole
            and (abs(lines[-1][0].top - segment.top) < max(height, 1.0) / 2 or _inside(segment, lines[-1]))
        ):
            lines[-1].append(segment)
        else:
            lines.append([segment])
    out = []
    for parts in lines:
        if parts[0].whole:
            whole = parts[0]
            out.append(
                Line(whole.text, whole.top, whole.top - whole.bottom, False, whole.table, whole.figure)
            )
            continue
        parts.sort(key=lambda s: s.left)
        marker = [len(parts) > 1 and _superscript_marker(p, parts) for p in parts]
        placed = [p for p, dropped in zip(parts, marker, strict=True) if not dropped]
        text = ""
        previous: Segment | None = None
        reach = 0.0  # where the previous part, or a note marker dropped after it, ends
        mono = sum(len(p.text.strip()) for p in placed if p.mono)
        line_height = max(p.top - p.bottom for p in placed)
        spacing = letter_spacing(placed, settings.pdf_spaced_letters)
        for part, dropped in zip(parts, marker, strict=True):
            if dropped:  # "arXiv⁶, using": the gap to the comma is measured from the marker
                reach = part.right if previous else reach
                continue
            gap = part.left - reach if previous else 0.0
            if previous and previous.em > 0 and part.em > 0 and _between_letters(previous, part):
                least = spacing + settings.pdf_word_gap * max(part.em, previous.em)
            else:
                least = WORD_GAP * max(
                    part.top - part.bottom, previous.top - previous.bottom if previous else 0.0
                )
            if previous and _PUNCTUATION.match(previous.text.strip()):
                least = WORD_GAP * line_height  # a glyph box narrower than its advance: "1.1", not "1 . 1"
            if part.text[:1] in _CLOSING:
                least = CLOSING_GAP * line_height  # "2021; Clark", "§2.1. The", not "2021 ; Clark"
            if (
                previous
                and gap > least
                and not text.endswith((" ", "\x02"))
                and not part.text.startswith(" ")
            ):
                text += " "
            text += part.text
            previous, reach = part, part.right
        chars = sum(len(p.text.strip()) for p in placed) or 1
        out.append(
            Line(clean(text), placed[0].top, placed[0].top - placed[0].bottom, False, mono_share=mono / chars)
        )
    return [line for line in out if line.text]


def _between_letters(before: Segment, after: Segment) -> bool:
    """Whether ``before`` ends and ``after`` starts with a letter or digit, no space between."""
    return before.text[-1:].isalnum() and after.text[:1].isalnum()


def letter_spacing(line: list[Segment], spaced_letters: int) -> float:
    """The line's letter spacing in points: the median gap between its letters and digits set next to each
    other, inside its segments, and between segments of one character each where the line holds at least
    ``spaced_letters`` such gaps (``ingest.pdf_spaced_letters``: a heading set a letter at a time, "B" "a" "c"
    … "d"; "x" "y" are two words). Set tight, it is the glyphs' side bearings; a letter-spaced line ("docu me
    nts", "Backgrou nd") widens every gap by its spacing, word gaps as much as letter gaps."""
    gaps = [gap for segment in line for gap in segment.letter_gaps]
    singles = [
        after.left - before.right
        for before, after in zip(line, line[1:], strict=False)
        if len(before.text.strip()) == 1
        and len(after.text.strip()) == 1
        and before.text.strip().isalnum()
        and after.text.strip().isalnum()
        and not before.text.endswith(" ")
        and not after.text.startswith(" ")
    ]
    if len(singles) >= spaced_letters:
        gaps += singles
    return max(0.0, float(np.median(gaps))) if gaps else 0.0


def _superscript_marker(part: Segment, line: list[Segment]) -> bool:
    """Whether ``part`` is a note marker set as a superscript: a number in a much smaller segment raised
    well above the bottom of the line's tallest segment, glued to the word before it (or opening the line,
    as a footnote's number does)."""
    if not _MARKER.match(part.text.strip()):
        return False
    body = max(line, key=lambda s: s.top - s.bottom)
    height = body.top - body.bottom
    index = line.index(part)
    glued = index == 0 or part.left - line[index - 1].right <= WORD_GAP * height
    return (
        part is not body
        and glued
        and part.top - part.bottom <= _SUPERSCRIPT_HEIGHT * height
        and part.bottom >= body.bottom + _SUPERSCRIPT_RAISE * height
    )


def clean(text: str) -> str:
    """Compatibility characters (ligatures) NFKC-normalised, runs of blanks one space."""
    text = unicodedata.normalize("NFKC", text.replace("\r", " ").replace("\x00", ""))
    return re.sub(r"[ \t]+", " ", text).strip()
