"""Cut a Document into Chunks along sentence boundaries, within a token budget, with overlap.

Usage::

    from deepcite.config import ChunkerSettings
    from deepcite.ingest.chunker import chunk_document

    chunks = chunk_document(doc, ChunkerSettings(max_tokens=200, overlap_tokens=40))

Tokens are counted as whitespace-separated words (:func:`count_tokens`): cheap, deterministic and
independent of any model. A sub-word tokenizer such as MiniLM's WordPiece makes roughly 1.3 tokens of
an English word (more for biomedical terms), so keep ``max_tokens`` below the embedder's sequence
length divided by that ratio when no passage should be truncated at embedding time.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

from deepcite.config import ChunkerSettings
from deepcite.errors import ConfigError
from deepcite.ingest.readers.base import Block, ReadDocument, TextKind
from deepcite.ingest.readers.tables import split_row
from deepcite.models import Chunk, Document, SourceFields
from deepcite.text import SENTENCE_END, split_sentences

CHUNK_HASH_CHARS = 12
# the document's source fields every chunk carries; the chunk's section is the one it falls in
_CARRIED = set(SourceFields.model_fields) - {"section"}
# sentences never cross a blank line: splitting paragraph by paragraph keeps the sentence splitter's
# cost linear in a long document
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def count_tokens(text: str) -> int:
    """The chunker's token count: the number of whitespace-separated words."""
    return len(text.split())


def chunk_id(doc_id: str, position: int, text: str) -> str:
    """``"<doc id>::<position>::<first 12 hex of sha256(text)>"``.

    Same input, same id, so re-ingesting writes nothing new and an interrupted ingest resumes without
    duplicates. The doc id keeps identical passages of different documents apart and lets a document's
    chunks be found by prefix; the position keeps a passage that repeats inside one document apart; the
    content hash changes the id when the text at that position changes (an edited document, other
    chunker settings), so a store can tell a stale chunk from a current one by id alone.
    """
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:CHUNK_HASH_CHARS]
    return f"{doc_id}::{position}::{digest}"


def chunk_document(doc: Document, settings: ChunkerSettings, blocks: Sequence[Block] = ()) -> list[Chunk]:
    """The chunks of ``doc``, in order, each carrying the document's title, ids and metadata.

    Sentences (:func:`deepcite.text.split_sentences`) are packed greedily up to ``settings.max_tokens``
    words; each new chunk starts with the last whole sentences of the previous one that fit in
    ``settings.overlap_tokens`` words. So a chunk starts and ends on a sentence boundary, except where one
    sentence is longer than the budget: it is cut into word windows of ``max_tokens`` words. A document
    within the budget is one chunk; an empty text gives no chunks. Each chunk records its sentences'
    character offsets (``Chunk.sentence_spans``), so nothing segments its text again.

    ``blocks`` (from a file reader) give the text with its pages and section headings: a chunk never
    spans two sections; a sentence cut by a page break (a block ending without closing punctuation) is
    joined with its end on the next page. A table block's rows are units of their own (a row longer than
    the budget is cut between cells, each piece led by the row's first cell: :func:`split_row`). A chunk
    records the page its first sentence starts on and, when its last sentence ends on a later page,
    ``page_end``, and the page each sentence starts on (``Chunk.sentence_pages``: a quote opens at its own
    page, not the chunk's first). Without blocks the document's text is one run in
    ``doc.section``.

    Each sentence keeps its block's kind (prose, table, heading, caption, furniture, equation, reference:
    :class:`~deepcite.models.TextKind`): ``Chunk.sentence_kinds`` when a chunk holds any that is not prose,
    and ``Chunk.kind`` what the chunk is (:func:`_chunk_kind`), so what is not prose stays searchable
    but is never an answer sentence (``Chunk.answer_sentences``). A prose sentence cut by a table, figure, caption
    or page furniture set in the middle of it goes on after it.
    """
    _check(settings)
    runs = blocks or [Block(doc.text, None, doc.section)]
    chunks: list[Chunk] = []
    for section, run in groupby(runs, key=lambda block: block.section):
        units = [
            _Unit(piece, page, page_last, kind)
            for sentence, page, page_last, kind in _located_sentences(run)
            for piece in (
                split_row(sentence, settings.max_tokens)
                if kind == TextKind.TABLE
                else _fit(sentence, settings.max_tokens)
            )
        ]
        for packed in _pack_apart(units, settings):
            pages = [page for unit in packed for page in (unit.page, unit.page_last) if page is not None]
            first, last = (min(pages), max(pages)) if pages else (None, None)
            text, spans = _join(packed)
            pages_span = (first, last if last != first else None)
            chunks.append(_make_chunk(doc, len(chunks), text, spans, packed, section, *pages_span))
    return chunks


def chunk_reads(reads: Sequence[ReadDocument], settings: ChunkerSettings) -> dict[str, list[Chunk]]:
    """The chunks of each document read (its blocks' pages and sections kept), by document id."""
    return {r.document.id: chunk_document(r.document, settings, r.blocks) for r in reads}


@dataclass(frozen=True)
class _Unit:
    """A sentence (or a word window of a long one) and the pages it starts and ends on."""

    text: str
    page: int | None
    page_last: int | None
    kind: TextKind = TextKind.PROSE


# a sentence (or a table row), the page it starts on, the page it ends on, and its kind
_Located = tuple[str, int | None, int | None, TextKind]
# what a sentence cut by a page break or a column goes on past: a table, a figure, a caption or page
# furniture set in the middle of it; a heading, an equation or a reference list ends it
_CARRIED_PAST = frozenset({TextKind.TABLE, TextKind.FIGURE, TextKind.CAPTION, TextKind.FURNITURE})


def _located_sentences(run: Iterable[Block]) -> Iterator[_Located]:
    """The sentences of one section's blocks, paragraph by paragraph, with their pages and kinds. A prose
    block whose text ends mid-sentence (a page break inside a sentence) carries that sentence on into the
    next prose block, past a table, caption or page furniture in between."""
    carried: _Located | None = None
    for block in run:
        if block.kind == TextKind.TABLE:  # one unit per row: a row (its cells led by their headers) is whole
            rows = (row for row in block.text.splitlines() if row.strip())
            yield from ((row, block.page, block.page, TextKind.TABLE) for row in rows)
            continue  # a sentence cut by a page break goes on after the table
        if block.kind != TextKind.PROSE:
            if carried is not None and block.kind not in _CARRIED_PAST:
                yield carried
                carried = None
            for paragraph in _PARAGRAPH_BREAK.split(block.text):
                if paragraph.strip():
                    yield from ((s, block.page, block.page, block.kind) for s in split_sentences(paragraph))
            continue
        paragraphs = [p for p in _PARAGRAPH_BREAK.split(block.text) if p.strip()]
        for i, paragraph in enumerate(paragraphs):
            start_page = block.page
            if carried is not None:
                paragraph, start_page, carried = f"{carried[0]} {paragraph}", carried[1], None
            sentences = split_sentences(paragraph)
            located = [
                (s, start_page if j == 0 else block.page, block.page, TextKind.PROSE)
                for j, s in enumerate(sentences)
            ]
            if located and i == len(paragraphs) - 1 and not SENTENCE_END.search(sentences[-1]):
                carried = located.pop()
            yield from located
    if carried is not None:
        yield carried


def _sentence_pages(units: Sequence[_Unit]) -> list[int] | None:
    """The page each unit starts on, or None when some unit has no page (text without pages)."""
    pages = [unit.page for unit in units]
    return None if None in pages else [page for page in pages if page is not None]


def _join(units: Sequence[_Unit]) -> tuple[str, list[tuple[int, int]]]:
    """The units' texts joined by one space, and each one's (start, end) offsets in the result."""
    spans: list[tuple[int, int]] = []
    start = 0
    for unit in units:
        spans.append((start, start + len(unit.text)))
        start += len(unit.text) + 1
    return " ".join(unit.text for unit in units), spans


def _pack(units: list[_Unit], settings: ChunkerSettings, *, overlap: bool = True) -> list[list[_Unit]]:
    chunks: list[list[_Unit]] = []
    current: list[_Unit] = []
    size = 0
    for unit in units:
        n = count_tokens(unit.text)
        if current and size + n > settings.max_tokens:
            chunks.append(current)
            current = _overlap(current, settings.overlap_tokens, settings.max_tokens - n) if overlap else []
            size = sum(count_tokens(u.text) for u in current)
        current.append(unit)
        size += n
    if current:
        chunks.append(current)
    return chunks


# what is chunked apart from the prose around it, with the captions next to it: a table's rows, a figure's text
_APART = frozenset({TextKind.TABLE, TextKind.FIGURE})


def _pack_apart(units: list[_Unit], settings: ChunkerSettings) -> list[list[_Unit]]:
    """Chunks of the units, a table or figure (with the captions next to it) apart from the text around it:
    a table's chunks hold its rows and caption and no prose, so neither crowds the other out of a chunk (or
    out of the embedder's window). A caption is carried into each chunk of its table, before the rows, when
    it takes at most half the budget; rows carry no overlap (each row is led by its headers)."""
    chunks: list[list[_Unit]] = []
    for apart, group in _apart_groups(units):
        if not apart:
            chunks += _pack(group, settings)
            continue
        captions = [u for u in group if u.kind == TextKind.CAPTION]
        body = [u for u in group if u.kind != TextKind.CAPTION]
        size = sum(count_tokens(u.text) for u in captions)
        if not captions or size > settings.max_tokens // 2:
            chunks += _pack(group, settings, overlap=False)
            continue
        budget = ChunkerSettings(max_tokens=settings.max_tokens - size, overlap_tokens=0)
        chunks += [captions + packed for packed in _pack(body, budget, overlap=False)]
    return chunks


def _apart_groups(units: list[_Unit]) -> list[tuple[bool, list[_Unit]]]:
    """The units in runs: (True, a table's or figure's units with the captions right before or after it) or
    (False, the text between). A table or figure after a caption that follows another starts a run of its
    own, so each keeps its own caption."""
    apart = [unit.kind in _APART for unit in units]
    for i, unit in enumerate(units):  # captions next to a table or figure go with it
        if unit.kind == TextKind.CAPTION and not apart[i]:
            j = i
            while j < len(units) and units[j].kind == TextKind.CAPTION:
                j += 1
            before = i > 0 and apart[i - 1]
            if before or (j < len(units) and units[j].kind in _APART):
                apart[i:j] = [True] * (j - i)
    groups: list[tuple[bool, list[_Unit]]] = []
    for i, unit in enumerate(units):
        new_body = (
            unit.kind in _APART
            and groups
            and groups[-1][0]
            and any(u.kind in _APART for u in groups[-1][1])
            and groups[-1][1][-1].kind == TextKind.CAPTION
        )
        if not groups or groups[-1][0] != apart[i] or new_body:
            groups.append((apart[i], []))
        groups[-1][1].append(unit)
    return groups


def _fit(sentence: str, max_tokens: int) -> list[str]:
    """The sentence, or word windows of it when it is longer than the budget."""
    words = sentence.split()
    if len(words) <= max_tokens:
        return [sentence]
    return [" ".join(words[i : i + max_tokens]) for i in range(0, len(words), max_tokens)]


def _overlap(previous: list[_Unit], overlap_tokens: int, room: int) -> list[_Unit]:
    """The longest run of whole trailing sentences of ``previous`` within the overlap and the room left
    for the next sentence; never all of ``previous`` (the next chunk must move on)."""
    budget = min(overlap_tokens, room)
    carried: list[_Unit] = []
    size = 0
    for unit in reversed(previous[1:]):
        size += count_tokens(unit.text)
        if size > budget:
            break
        carried.insert(0, unit)
    return carried


def _make_chunk(
    doc: Document,
    position: int,
    text: str,
    spans: list[tuple[int, int]],
    units: Sequence[_Unit],
    section: str | None,
    page: int | None,
    page_end: int | None,
) -> Chunk:
    kinds = [unit.kind for unit in units]
    return Chunk(
        **doc.model_dump(include=_CARRIED),
        chunk_id=chunk_id(doc.id, position, text),
        doc_id=doc.id,
        text=text,
        section=section,
        page=page,
        page_end=page_end,
        position=position,
        sentence_spans=spans,
        sentence_pages=_sentence_pages(units),
        kind=_chunk_kind(kinds),
        sentence_kinds=None if set(kinds) <= {TextKind.PROSE} else [str(kind) for kind in kinds],
    )


def _chunk_kind(kinds: Sequence[TextKind]) -> TextKind:
    """What a chunk is: the kind its sentences share, a heading over them aside ("References" over its
    entries); prose when it holds any prose, else table when it holds a table row, else its commonest."""
    body = [kind for kind in kinds if kind != TextKind.HEADING] or list(kinds)
    if len(set(body)) == 1:
        return body[0]
    for kind in (TextKind.PROSE, TextKind.TABLE):
        if kind in body:
            return kind
    return Counter(body).most_common(1)[0][0]


def _check(settings: ChunkerSettings) -> None:
    if settings.max_tokens < 1:
        raise ConfigError(f"chunker.max_tokens must be at least 1, not {settings.max_tokens}")
    if not 0 <= settings.overlap_tokens < settings.max_tokens:
        raise ConfigError(
            f"chunker.overlap_tokens must be between 0 and max_tokens - 1 ({settings.max_tokens - 1}), "
            f"not {settings.overlap_tokens}"
        )
