"""``GET /api/document-view``: a document's stored text for the viewer, with the cited passage whole.

The viewer page (``/view/{collection}/{document_id}``, :mod:`deepcite.server.ui`) shows where a citation's
quote lies: a PDF at its page through pdf.js with the quote marked in the text layer, and any other file
(HTML, DOCX, EPUB, PPTX, Markdown, text) as deepcite's own rendering of the passages it stored, the quote
marked in the cited passage. This route gives it that text. Consecutive passages overlap (the chunker
repeats ``chunking.overlap_tokens`` at each cut); :func:`reading_blocks` drops each repeat once, always from
the neighbour and never from the cited passage, so the citation's ``quote_start``/``quote_end`` offsets
still index the cited block's text. The same ACL rule as search applies: a document the caller may not read
is the same 404 as one that does not exist.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from deepcite.models import Chunk
from deepcite.server.resources import CallerDep, EngineDep
from deepcite.server.routes_files import check_document_id

router = APIRouter(tags=["files"])


class PassageBlock(BaseModel):
    """One stored passage as the viewer shows it: ``text`` is the passage's text from ``offset`` on, less
    the end it shares with the next passage (the cited passage is always whole: ``offset`` 0); ``position``
    is its place in the document (a citation's ``position``: the viewer finds the current text of a passage
    that changed after an answer cited it)."""

    chunk_id: str
    position: int = 0
    page: int | None = None
    page_end: int | None = None
    section: str | None = None
    offset: int = 0
    text: str


class DocumentView(BaseModel):
    """A document's passages in reading order, and its original's media type when a file is stored
    (``application/pdf`` opens in the PDF viewer at the cited passage's page)."""

    collection: str
    doc_id: str
    title: str = ""
    file: str | None = None
    media_type: str | None = None
    passage: str | None = None  # the cited passage's chunk id, when it is one of the document's
    passages: list[PassageBlock]


def shared_length(left: str, right: str) -> int:
    """The length of the longest end of ``left`` that ``right`` starts with (the chunker's overlap)."""
    for size in range(min(len(left), len(right)), 0, -1):
        if left.endswith(right[:size]):
            return size
    return 0


def reading_blocks(chunks: Sequence[Chunk], cited: str | None) -> list[PassageBlock]:
    """``chunks`` (in reading order) as blocks whose repeated overlaps are shown once; the overlap is
    dropped from the passage next to the cited one, so the cited passage keeps all of its text."""
    starts = [0] * len(chunks)
    ends = [len(chunk.text) for chunk in chunks]
    for index in range(1, len(chunks)):
        previous, current = chunks[index - 1], chunks[index]
        shared = shared_length(previous.text[starts[index - 1] :], current.text)
        if current.chunk_id == cited:
            ends[index - 1] = max(starts[index - 1], ends[index - 1] - shared)
        else:
            starts[index] = shared
    return [
        PassageBlock(
            chunk_id=chunk.chunk_id,
            position=chunk.position,
            page=chunk.page,
            page_end=chunk.page_end,
            section=chunk.section,
            offset=start,
            text=chunk.text[start:end],
        )
        for chunk, start, end in zip(chunks, starts, ends, strict=True)
        if end > start
    ]


@router.get(
    "/api/document-view",
    response_model=DocumentView,
    responses={
        400: {"description": "The collection name or document id is malformed."},
        404: {"description": "No such document, or none you may read."},
    },
)
async def document_view(
    engine: EngineDep,
    caller: CallerDep,
    collection: Annotated[str, Query(description="The collection the document is in.")],
    document: Annotated[str, Query(description="The document's id (a citation's doc_id).")],
    passage: Annotated[
        str | None, Query(description="The cited passage's chunk id: kept whole in the view.")
    ] = None,
) -> DocumentView:
    """A document's stored passages, for the viewer that marks a citation's quote."""
    check_document_id(document, engine.settings.server.max_document_id_chars)

    def build() -> DocumentView:
        chunks = engine.corpus.document_passages(collection, document, caller.groups)
        original = engine.corpus.original_record(collection, document, caller.groups)
        cited = passage if any(chunk.chunk_id == passage for chunk in chunks) else None
        return DocumentView(
            collection=collection,
            doc_id=document,
            title=chunks[0].title,
            file=chunks[0].file,
            media_type=original.media_type if original is not None else None,
            passage=cited,
            passages=reading_blocks(chunks, cited),
        )

    return await asyncio.to_thread(build)
