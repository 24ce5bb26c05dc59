"""A document as a loader reads it, and the chunk it is cut into: the unit indexed, retrieved and cited."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from deepcite.text import sentence_spans


class TextKind(StrEnum):
    """What a run of text is. Prose and table rows can be an answer sentence (:data:`ANSWER_KINDS`); the rest
    is kept and searchable but never quoted as an answer."""

    PROSE = "prose"
    TABLE = "table"  # table rows, each cell led by its column header
    HEADING = "heading"  # a section heading on its own
    CAPTION = "caption"  # a figure's or table's caption
    FIGURE = "figure"  # the text drawn inside a figure: axis labels, legends, a diagram's boxes
    FURNITURE = "furniture"  # running heads, copyright, licence and venue lines, a footnote's lone link
    EQUATION = "equation"  # display equations, code lines and other runs of symbols
    REFERENCE = "reference"  # bibliography, footnote-list and link-list entries


ANSWER_KINDS = frozenset({TextKind.PROSE, TextKind.TABLE})


class SourceFields(BaseModel):
    """What a document says about its source, carried onto every chunk of it (the chunk's ``section`` is the
    one it falls in)."""

    title: str = ""
    section: str | None = None
    pmid: str | None = None
    doi: str | None = None
    year: int | None = None
    url: str | None = None
    source: str | None = None
    authors: list[str] = Field(default_factory=list)
    venue: str | None = None  # the journal, proceedings or publisher the document names for itself
    file: str | None = None  # path of the original file, relative to the ingested folder
    acl: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def byline(self, most_authors: int = 3) -> str:
        """Who, when and where, as far as known: ``Kyle Lo, Lucy Lu Wang, Mark Neumann et al. · 2020 ·
        Proceedings of …`` ("" when nothing is)."""
        names = ", ".join(self.authors[:most_authors]) + (
            " et al." if len(self.authors) > most_authors else ""
        )
        return " · ".join(part for part in (names, str(self.year or ""), self.venue or "") if part)


class Document(SourceFields):
    """One source record as a loader reads it, before chunking."""

    id: str
    text: str


class Chunk(SourceFields):
    """A passage of a document: the unit that is indexed, retrieved and cited."""

    chunk_id: str  # stable: same input, same id
    doc_id: str
    text: str
    page: int | None = None  # 1-based page (slide number for slides) the chunk starts on
    page_end: int | None = None  # last page when the chunk crosses a page break, else None
    position: int = 0  # index of the chunk within its document
    # the chunk's sentences as the chunker segmented them at ingest: (start, end) character offsets into
    # ``text``, in order; None for chunks stored before offsets were recorded (their text is split on use)
    sentence_spans: list[tuple[int, int]] | None = None
    # the page each of those sentences starts on, parallel to ``sentence_spans``; None for chunks without
    # pages or stored before sentence pages were recorded (they fall back to ``page``)
    sentence_pages: list[int] | None = None
    # what the chunk's text is: the kind its sentences share (a heading over them aside), ``prose`` when it
    # holds any prose, else ``table`` when it holds a table row, else the commonest; ``sentence_kinds``
    # gives each sentence's kind, parallel to ``sentence_spans`` (None when all are prose, or for chunks
    # stored before kinds were recorded)
    kind: TextKind = TextKind.PROSE
    sentence_kinds: list[TextKind] | None = None

    def page_at(self, offset: int) -> int | None:
        """The page the sentence holding character ``offset`` of ``text`` starts on (:attr:`sentence_pages`),
        else the chunk's first page."""
        if self.sentence_pages is None or self.sentence_spans is None:
            return self.page
        for (_, end), page in zip(self.sentence_spans, self.sentence_pages, strict=True):
            if offset < end:
                return page
        return self.page

    def spans(self) -> list[tuple[int, int]]:
        """Where the chunk's sentences lie in ``text``: :attr:`sentence_spans`, else found now (older chunks)."""
        return self.sentence_spans if self.sentence_spans is not None else list(sentence_spans(self.text))

    def sentences(self) -> list[str]:
        """The chunk's sentences, as :meth:`spans` places them."""
        return [self.text[start:end] for start, end in self.spans()]

    def answer_sentences(self, run_on_words: int = 0) -> list[str]:
        """The sentences that may be an answer sentence: prose and table rows, not headings, captions, page
        furniture, equations or reference entries (:attr:`sentence_kinds`). One that ends in a colon ("The
        server is started by running the command:") says what follows, not a statement of its own: it runs on
        into the next sentence (a command, a list's first item) when the two hold at most ``run_on_words``
        words (0: never)."""
        if self.sentence_kinds is None or self.sentence_spans is None:
            if self.kind not in ANSWER_KINDS:
                return []
            spans = self.spans()
            kinds = [TextKind.PROSE] * len(spans)
        else:
            spans, kinds = self.sentence_spans, self.sentence_kinds
        out = []
        for n, ((start, end), kind) in enumerate(zip(spans, kinds, strict=True)):
            if kind not in ANSWER_KINDS:
                continue
            if (
                run_on_words
                and n + 1 < len(spans)
                and self.text[start:end].rstrip().endswith(":")
                and len(self.text[start : spans[n + 1][1]].split()) <= run_on_words
            ):
                end = spans[n + 1][1]
            out.append(self.text[start:end])
        return out
