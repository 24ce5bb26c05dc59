"""Slides (PPTX) through python-pptx: one page per slide, the slide's title as its section; each table a
block of its own, read row by row with its header (:mod:`deepcite.ingest.readers.tables`). A text frame's
paragraphs (a slide's bullets) are paragraphs of their own, so each is a sentence unit: a bullet without a
full stop never runs on into the next."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.shapes.base import BaseShape

from deepcite.config import IngestSettings
from deepcite.ingest.readers.archive import zip_bomb
from deepcite.ingest.readers.base import Block, ReadResult, document_from_blocks
from deepcite.ingest.readers.bibliographic import Bibliographic, real_authors, real_title
from deepcite.ingest.readers.tables import table_lines

_PARAGRAPH = "\n\n"  # between a slide's paragraphs: the chunker never runs a sentence across it
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
        core = deck.core_properties
        result = document_from_blocks(
            blocks,
            doc_id=doc_id,
            name=name,
            about=Bibliographic(
                title=real_title(core.title)
                or next((b.section for b in blocks if b.section and real_title(b.section)), ""),
                authors=real_authors((core.author or "").split(";")),
            ),
        )
        result.pages = len(deck.slides)
        return result


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
