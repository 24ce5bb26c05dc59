"""The page a citation opens at: the page its quote starts on. The chunker keeps each sentence's page
(``Chunk.sentence_pages``), so a chunk that starts at the bottom of page 4 but is quoted for a sentence of
page 5 opens at page 5; the evidence table's page is that page too; citations stored before quote pages
(saved answers) open at their chunk's first page."""

from __future__ import annotations

from answer.conftest import HashingEmbedder
from deepcite.answer.citations import check_citations
from deepcite.answer.context import ContextChunk
from deepcite.answer.evidence import evidence_rows
from deepcite.answer.pipeline import AnswerResult, Citation
from deepcite.answer.support import CitationSupport
from deepcite.config import AnswerSettings, ChunkerSettings
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.readers.base import Block
from deepcite.models import Document

PAGE_4 = (
    "Methods were described in an earlier report. "
    "The crawler expands each seed paper by following its references"
)  # the sentence goes on over the page break
PAGE_5 = (
    "and its citations. Warfarin lowered the stroke rate by two thirds in the pooled trials. "
    "Bleeding was rare in every arm."
)
QUOTED = "Warfarin lowered the stroke rate by two thirds in the pooled trials."


def _crossing_chunk() -> ContextChunk:
    doc = Document(id="trial.pdf", text=f"{PAGE_4} {PAGE_5}", file="trial.pdf")
    blocks = [Block(PAGE_4, page=4, section="Results"), Block(PAGE_5, page=5, section="Results")]
    (chunk,) = chunk_document(doc, ChunkerSettings(), blocks)
    return ContextChunk(**chunk.model_dump(), id=1, score=1.0)


def test_a_chunk_keeps_the_page_each_sentence_starts_on() -> None:
    chunk = _crossing_chunk()
    assert (chunk.page, chunk.page_end) == (4, 5)
    assert chunk.sentences()[2] == QUOTED
    # the sentence cut by the page break starts on page 4; the quoted one is wholly on page 5
    assert chunk.sentence_pages == [4, 4, 5, 5]
    assert chunk.page_at(chunk.text.index(QUOTED)) == 5
    assert chunk.page_at(0) == 4


def test_a_citation_quoting_the_second_pages_sentence_opens_at_the_second_page() -> None:
    chunk = _crossing_chunk()
    support = CitationSupport(HashingEmbedder(), AnswerSettings())
    text, check = check_citations(
        f"{QUOTED} [1]", {1: chunk.text}, supports=lambda s, i: support.match(s, chunk)
    )
    assert [c.verdict for c in check.claims] == ["supported"]
    citation = Citation.from_chunk(chunk, check.claims)
    assert citation.quote == QUOTED
    assert citation.page == 4  # the chunk still starts on page 4
    assert citation.quote_page == 5  # the citation opens where its quote is
    result = AnswerResult(
        request_id="r", query="q", summary=text, answer=text, citations=[citation], citation_check=check
    )
    (row,) = evidence_rows(result)
    assert (row.quote, row.page, row.page_end) == (QUOTED, 5, None)


def test_a_citation_without_a_quote_opens_at_its_chunks_first_page() -> None:
    assert Citation.from_chunk(_crossing_chunk()).quote_page == 4


def test_chunks_and_citations_stored_before_sentence_pages_open_at_the_first_page() -> None:
    chunk = _crossing_chunk()
    older = chunk.model_copy(update={"sentence_pages": None})
    assert older.page_at(chunk.text.index(QUOTED)) == 4
    saved = chunk.model_dump(mode="json", exclude={"sentence_pages"})  # a saved answer's older citation
    loaded = Citation.model_validate({**saved, "quote": QUOTED, "quote_start": 0, "quote_end": len(QUOTED)})
    assert loaded.quote_page == 4


def test_text_without_pages_has_no_sentence_pages() -> None:
    (chunk,) = chunk_document(Document(id="d", text="One. Two."), ChunkerSettings())
    assert chunk.sentence_pages is None
    assert chunk.page_at(5) is None
