"""Slides (PPTX) through python-pptx: one page per slide, the slide's title as its section; each table a
block of its own, read row by row with its header (:mod:`deepcite.ingest.readers.tables`). A text frame's
paragraphs (a slide's bullets) are paragraphs of their own, so each is a sentence unit: a bullet without a
full stop never runs on into the next."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.presentation import Presentation as PresentationFile
from pptx.shapes.base import BaseShape

from deepcite.config import IngestSettings
from deepcite.ingest.readers.archive import zip_bomb
from deepcite.ingest.readers.base import Block, ReadResult, document_from_blocks
from deepcite.ingest.readers.bibliographic import (
    Bibliographic,
    byline_names,
    real_authors,
    real_title,
    stated_year,
)
from deepcite.ingest.readers.tables import table_lines

_PARAGRAPH = "\n\n"  # between a slide's paragraphs: the chunker never runs a sentence across it
_TITLE_YEAR = re.compile(r"(?:\s[-–,:]\s*|\()((?:19|20)\d\d)\)?\s*$")  # "OWASP Top 10 - 2017", "… (2013)"
_MAX_SECTION_CHARS = 120  # a slide "title" that is a whole text box is cut to its first line, this long


class PptxReader:
    """Each slide's text frames, tables and speaker notes, in shape order, with its slide number."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        if bomb := zip_bomb(path, settings):
            return bomb
        deck = Presentation(str(path))
        blocks: list[Block] = []
        for number, slide in enumerate(deck.slides, start=1):
            title_shape = slide.shapes.title
            section = (_first_line(title_shape.text_frame.text) if title_shape is not None else None) or (
                f"Slide {number}"
            )
            lines: list[str] = []
            for shape in _shapes(slide.shapes):
                if getattr(shape, "has_table", False) and shape.has_table:
                    if rows := table_lines([[cell.text for cell in row.cells] for row in shape.table.rows]):
                        blocks.append(Block(_PARAGRAPH.join(line for line in lines if line), number, section))
                        blocks.append(Block("\n".join(rows), number, section, table=True))
                        lines = []
                elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                    frame = shape.text_frame
                    lines.append(
                        _PARAGRAPH.join(" ".join(p.text.split()) for p in frame.paragraphs if p.text.strip())
                    )
            if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
                lines.append(slide.notes_slide.notes_text_frame.text.strip())
            blocks.append(Block(_PARAGRAPH.join(line for line in lines if line), number, section))
        about = _deck_front(deck)
        result = document_from_blocks(
            blocks,
            doc_id=doc_id,
            name=name,
            about=about.merged(
                Bibliographic(
                    title=next((b.section for b in blocks if b.section and real_title(b.section)), "")
                )
            ),
        )
        result.pages = len(deck.slides)
        return result


def _deck_front(deck: PresentationFile) -> Bibliographic:
    """Title, authors and year of a deck: its core properties, unless the title slide names another title (the
    core properties are then a template's: its title and author are not this talk's), in which case the title
    slide's; the names the title slide gives under its title ('Josh Grossman, Head of …', 'Vishal Chauhan
    (@…)') where the core names none; the year its title ends with ('OWASP Top 10 - 2017') or its title slide's
    date line states, never the file's dates."""
    core = deck.core_properties
    slide = deck.slides[0] if len(deck.slides) else None
    shown = slide.shapes.title if slide is not None else None
    heading = real_title(shown.text_frame.text) if shown is not None else ""
    template = bool(heading and real_title(core.title)) and _words(heading) != _words(core.title)
    title = heading if template or not real_title(core.title) else real_title(core.title)
    authors = [] if template else real_authors((core.author or "").split(";"))
    texts = [
        shape.text_frame.text
        for shape in (_shapes(slide.shapes) if slide is not None else [])
        if getattr(shape, "has_text_frame", False)
        and shape.has_text_frame
        and (shown is None or shape.shape_id != shown.shape_id)
    ]
    if not authors:
        authors = next((names for text in texts if (names := _byline(text))), [])
    trailing = _TITLE_YEAR.search(title)
    return Bibliographic(
        title=title,
        authors=authors,
        year=int(trailing.group(1)) if trailing else stated_year("\n".join(texts)),
    )


def _byline(text: str) -> list[str]:
    """The names a text frame's first line opens with, when more follows them on the line or in the frame
    (who they are); a frame that is a short phrase alone ('Revisiting Insecure Design') names no one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    names = byline_names(lines[0]) if lines else []
    said = sum(len(n) for n in names) + 2 * max(len(names) - 1, 0)
    return names if names and (len(lines) > 1 or len(lines[0]) > said + 1) else []


def _words(text: str | None) -> list[str]:
    return re.findall(r"\w+", (text or "").lower())


def _first_line(text: str) -> str | None:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line[:_MAX_SECTION_CHARS] or None


def _shapes(shapes: Iterable[BaseShape]) -> Iterator[BaseShape]:
    """The shapes in order, group shapes opened."""
    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes(shape.shapes)
        else:
            yield shape
