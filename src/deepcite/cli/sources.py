"""How the command line names where a passage comes from: ``pasa.pdf p. 7``, ``report.docx``, ``p. 7–8``."""

from __future__ import annotations

from deepcite.models import Chunk


def page_label(chunk: Chunk) -> str:
    """``p. 7``, ``p. 7–8`` for a chunk that crosses a page break, or ``""`` when the page is unknown."""
    if chunk.page is None:
        return ""
    if chunk.page_end is not None and chunk.page_end != chunk.page:
        return f"p. {chunk.page}–{chunk.page_end}"
    return f"p. {chunk.page}"


def source_label(chunk: Chunk) -> str:
    """The chunk's file and page (``pasa.pdf p. 7``), either alone when only one is known, else ``""``."""
    return " ".join(part for part in (chunk.file or "", page_label(chunk)) if part)
