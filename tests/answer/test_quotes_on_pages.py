"""Quotes on a real PDF: an answer over the chunks of a two-page paper excerpt (tests/fixtures/uploads,
pasa-p1-2.pdf) cites passages whose quotes are the chunk text at their offsets and lie on the page each
citation opens at (the page its quote starts on), as the reader read them
(deepcite.evaluation.documents.check_quotes, which `deepcite eval documents` reports over the real
documents)."""

from __future__ import annotations

from pathlib import Path

from answer.conftest import HashingEmbedder
from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.pipeline import answer_context
from deepcite.answer.support import CitationSupport
from deepcite.config import AnswerSettings, ChunkerSettings, IngestSettings
from deepcite.evaluation.documents import check_quotes, page_texts
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.readers import read_file
from deepcite.models import Candidate, EvidencePack
from deepcite.saved_answers import cited_citations

PDF = Path(__file__).parents[1] / "fixtures" / "uploads" / "pasa-p1-2.pdf"
QUESTION = "How does the PaSa crawler find relevant papers, and how does it compare with Google Scholar?"


async def test_quotes_of_an_answer_over_a_pdf_lie_in_their_chunks_and_on_their_pages() -> None:
    result = read_file(PDF, doc_id="pasa.pdf", name="pasa.pdf", settings=IngestSettings())
    (read,) = result.documents
    chunks = chunk_document(read.document, ChunkerSettings(), read.blocks)
    assert {c.page for c in chunks} == {1, 2}
    pack = EvidencePack(
        question=QUESTION,
        final_evidence=[Candidate(chunk=c, score=1.0 / (1 + i)) for i, c in enumerate(chunks)],
    )
    settings = AnswerSettings()
    embedder = HashingEmbedder()
    ctx = ResponseContext.from_pack(pack, settings, request_id="pdf-quotes")
    answered = await answer_context(
        ctx, ExtractiveGenerator(embedder, settings), settings, CitationSupport(embedder, settings)
    )
    cited = cited_citations(answered)
    assert len(cited) >= 3
    pages = page_texts(result)
    check = check_quotes(cited, lambda name: pages if name == "pasa.pdf" else {})
    assert check.citations == check.in_chunk == check.paged == len(cited)
    assert check.on_chunk_pages == check.paged
    # each citation opens at the page its quote starts on, so the quote is there even when its chunk began
    # on the page before
    assert check.on_cited_page == check.paged
    assert check.on_first_page <= check.on_cited_page
