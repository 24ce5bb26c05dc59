"""Slides (PPTX) through python-pptx: one page per slide, the slide's title as its section."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.shapes.base import BaseShape

from deepcite.config import IngestSettings
from deepcite.ingest.readers.archive import zip_bomb
from deepcite.ingest.readers.base import Block, ReadResult, document_from_blocks

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
            title = _first_line(title_shape.text_frame.text) if title_shape is not None else None
            lines = list(_shape_lines(slide.shapes))
            if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
                lines.append(slide.notes_slide.notes_text_frame.text.strip())
            blocks.append(
                Block("\n".join(line for line in lines if line), number, title or f"Slide {number}")
            )
        core = deck.core_properties
        result = document_from_blocks(
            blocks,
            doc_id=doc_id,
            name=name,
            title=core.title or next((b.section for b in blocks if not b.section.startswith("Slide ")), None),
            authors=[a.strip() for a in (core.author or "").split(";") if a.strip()],
        )
        result.pages = len(deck.slides)
        return result


def _first_line(text: str) -> str | None:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line[:_MAX_SECTION_CHARS] or None


def _shape_lines(shapes: Iterable[BaseShape]) -> Iterator[str]:
    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shape_lines(shape.shapes)
        elif getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                cells = [" ".join(c.text.split()) for c in row.cells]
                yield " | ".join(c for c in cells if c)
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            yield "\n".join(" ".join(p.text.split()) for p in shape.text_frame.paragraphs if p.text.strip())
