"""Tables read as tables: rows with their column headers, never split from them, on the right page.

Fixtures (tests/fixtures/docs, see its README): two pages of a real two-column paper with ruled result
tables (pasa.pdf pages 7-8), a DOCX and a PPTX with a small table (python-docx/python-pptx), and a
three-column page made with reportlab.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deepcite.config import ChunkerSettings, IngestSettings
from deepcite.evaluation.documents import CheckQuestion, holds
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.readers import ReadResult, read_file
from deepcite.ingest.readers.base import Block
from deepcite.ingest.readers.tables import split_row, table_lines
from deepcite.models import Chunk, Document

DOCS = Path(__file__).resolve().parent.parent / "fixtures" / "docs"
SMALL = ChunkerSettings(max_tokens=40, overlap_tokens=8)


def read(name: str, **settings: object) -> ReadResult:
    path = DOCS / name
    return read_file(path, doc_id=name, name=name, settings=IngestSettings(**settings))


def chunks_of(result: ReadResult, settings: ChunkerSettings = SMALL) -> list[Chunk]:
    (read_doc,) = result.documents
    return chunk_document(read_doc.document, settings, read_doc.blocks)


def test_header_rows_two_levels_merged_labels_and_tables_without_header() -> None:
    grid = [
        ["Training", "Retriever", "Top-20", ""],
        ["", "", "NQ", "TriviaQA"],
        ["Single", "BM25", "59.1", "66.9"],
        ["", "DPR", "78.4", "79.4"],
    ]
    assert table_lines(grid) == [
        "Training: Single | Retriever: BM25 | Top-20 NQ: 59.1 | TriviaQA: 66.9",
        "Training: Single | Retriever: DPR | Top-20 NQ: 78.4 | TriviaQA: 79.4",
    ]
    # a first row holding a figure is data: no header is made up from it
    assert table_lines([["Total papers", "81.1M"], ["Papers w/ PDF", "28.9M (35.6%)"]]) == [
        "Total papers | 81.1M",
        "Papers w/ PDF | 28.9M (35.6%)",
    ]
    # a merged header cell repeated across columns is written once
    assert table_lines([["Provisions:", "Provisions:"], ["11 U.S.C. § 343", "11 U.S.C. § 343"]]) == [
        "Provisions: 11 U.S.C. § 343"
    ]


def test_a_row_longer_than_the_budget_is_cut_between_cells_each_piece_led_by_its_label() -> None:
    row = "Method: SSD | " + " | ".join(f"Metric {i}: {i}.5" for i in range(12))
    pieces = split_row(row, 12)
    assert len(pieces) > 1
    assert all(piece.startswith("Method: SSD | ") for piece in pieces)
    assert all(len(piece.split()) <= 12 for piece in pieces)
    cells = [cell for piece in pieces for cell in piece.split(" | ")[1:]]
    assert cells == row.split(" | ")[1:]


def test_chunker_never_splits_a_table_row_and_keeps_its_page() -> None:
    rows = [f"Method: M{i} | Speed (fps): {i}0.5 | mAP: {i}1.2" for i in range(20)]
    blocks = [
        Block("Detectors differ in speed. " * 5, 3, "Results"),
        Block("\n".join(rows), 4, "Results", table=True),
        Block("The fastest is M19.", 4, "Results"),
    ]
    doc = Document(id="d", text="\n\n".join(b.text for b in blocks), title="t")
    chunks = chunk_document(doc, ChunkerSettings(max_tokens=30, overlap_tokens=0), blocks)
    for row in rows:
        holding = [c for c in chunks if row.split(" | ")[0] + " |" in c.text]
        assert holding and all(row in c.text for c in holding)
        assert all(c.page == 4 or c.page_end == 4 for c in holding)


def test_pdf_tables_are_read_row_by_row_with_headers_on_their_page() -> None:
    pytest.importorskip("pymupdf", reason="PDF tables need the `tables` extra (PyMuPDF)")
    result = read("pasa-tables-pages-7-8.pdf")
    (doc,) = result.documents
    tables = [b for b in doc.blocks if b.table]
    assert [b.page for b in tables] == [1, 2, 2]  # Table 4 on page 7, Tables 5 and 6 on page 8
    lines = tables[1].text.splitlines()
    assert len(lines) == 8
    assert "Method: Google Scholar" in lines[1] and "Recall@20: 0.0609" in lines[1]
    assert all(line.startswith("Method: ") for line in lines)
    # the table's cells are no longer in the prose around it, which still reads column by column
    prose = " ".join(b.text for b in doc.blocks if not b.table)
    assert "0.0609" not in prose
    assert "PaSa-7b demonstrates a 9.64% improvement in recall with comparable precision" in prose
    chunks = chunks_of(result)
    holding = [c for c in chunks if "0.0609" in c.text]
    assert holding and all("Method: Google Scholar" in c.text and c.page == 2 for c in holding)


def test_pdf_tables_off_leaves_the_page_as_text() -> None:
    result = read("pasa-tables-pages-7-8.pdf", pdf_tables=False)
    (doc,) = result.documents
    assert not any(b.table for b in doc.blocks)
    assert "0.0609" in doc.document.text


@pytest.mark.parametrize(("name", "page"), [("detectors-table.docx", None), ("detectors-table.pptx", 2)])
def test_docx_and_pptx_tables_keep_their_header_with_every_row(name: str, page: int | None) -> None:
    result = read(name)
    (doc,) = result.documents
    (table,) = [b for b in doc.blocks if b.table]
    assert table.page == page
    assert table.text.splitlines() == [
        "Method: SSD | Speed (fps): 215.7 | mAP: 74.3",
        "Method: YOLOv2 | Speed (fps): 67.0 | mAP: 76.8",
        "Method: Faster R-CNN | Speed (fps): 7.0 | mAP: 73.2",
    ]
    chunks = chunks_of(result, ChunkerSettings(max_tokens=12, overlap_tokens=0))
    for value, label in (("215.7", "Method: SSD"), ("73.2", "Method: Faster R-CNN")):
        holding = [c for c in chunks if value in c.text]
        assert holding and all(label in c.text and c.page == page for c in holding)


def test_a_check_answer_of_several_phrases_needs_them_all_in_one_text() -> None:
    question = CheckQuestion(
        id="q", file="f", question="?", answer=["Google Scholar", "0.0609"], kind="table"
    )
    assert holds("Method: Google Scholar | Recall@20: 0.0609", question)
    assert not holds("Method: Google Scholar | Recall@20: 0.1514", question)


def test_a_three_column_page_reads_column_by_column() -> None:
    # paragraphs 1..24 flow down the first column, then the second, then the third; a paragraph cut at
    # the foot of a column goes on at the head of the next
    (doc,) = read("three-column-notice.pdf").documents
    text = " ".join(doc.document.text.split())
    assert [int(n) for n in re.findall(r"Paragraph (\d+)\.", text)] == list(range(1, 25))
    for topic in ("sampling", "permits", "tribal consultation"):
        sentence = f"The agency proposes that each regulated facility keep records of {topic} for five years"
        assert sentence in text
    assert text.startswith("Notice of Proposed Rulemaking: Water Quality Standards Paragraph 1.")
