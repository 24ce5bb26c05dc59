"""Clean text from every reader (issue 33): no markup, escapes, note markers or numbers fused to words in
prose, hyphenated line ends joined as the document spells the word, and what is not prose (headings,
captions, page furniture, equations, reference entries) labelled so it is searchable but never an answer
sentence. Fixtures: ``tests/fixtures/hygiene`` (see its README)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from deepcite.config import ChunkerSettings, IngestSettings
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.readers import read_file
from deepcite.ingest.readers.base import Block
from deepcite.ingest.readers.clean import (
    drop_note_markers,
    hyphen_join,
    join_lines,
    repair_inline_hyphens,
    word_forms,
)
from deepcite.models import Chunk, Document, TextKind

HYGIENE = Path(__file__).resolve().parent.parent / "fixtures" / "hygiene"
_MARKUP = re.compile(r"</?[a-z][a-z0-9]*[\s>/]|\\[\[\]*_#]|(?:^|\s)#{1,6}\s|\|\s*-{3}|\[edit\]|\w\[\d+\]")


def _read(path: Path) -> tuple[list[Block], list[Chunk]]:
    result = read_file(path, doc_id=path.name, name=path.name, settings=IngestSettings())
    assert result.skip is None, result.skip
    (read,) = result.documents
    chunks = chunk_document(read.document, ChunkerSettings(max_tokens=200, overlap_tokens=0), read.blocks)
    return read.blocks, chunks


def _by_kind(blocks: list[Block]) -> dict[TextKind, list[str]]:
    found: dict[TextKind, list[str]] = {}
    for block in blocks:
        found.setdefault(block.kind, []).append(block.text)
    return found


def test_a_web_page_reads_as_prose_with_headings_as_sections_and_tables_as_rows() -> None:
    blocks, chunks = _read(HYGIENE / "wiki_page.html")
    text = "\n".join(block.text for block in blocks)
    assert not _MARKUP.search(text), _MARKUP.search(text)
    assert "[1]" not in text and "[a]" not in text and "^" not in text
    kinds = _by_kind(blocks)
    assert kinds[TextKind.HEADING] == ["Harbour Day", "History", "References"]
    assert "Harbour Day: Date | June 3" in kinds[TextKind.TABLE][0].splitlines()
    prose = " ".join(kinds[TextKind.PROSE])
    assert "commemorate the opening of the new harbour in 1911. The day is marked" in prose
    assert "a cost of 2 million pounds. Its basin covers 40 km² and holds 10⁶ tonnes" in prose
    assert "drew 4,000 visitors. Later ones" in prose
    assert [b.section for b in blocks if b.kind == TextKind.REFERENCE] == ["References"]
    assert "Smith, J. (1912). The New Harbour." in kinds[TextKind.REFERENCE][0]
    # chunks: the reference entries and headings are searchable but never an answer sentence
    references = [c for c in chunks if c.section == "References"]
    assert references and all("Retrieved" not in s for c in references for s in c.answer_sentences())
    assert any("Retrieved" in c.text for c in references)
    everything = [s for c in chunks for s in c.answer_sentences()]
    assert "History" not in everything and "Harbour Day" not in everything
    assert any(s.startswith("Harbour Day: Date | June 3") for s in everything)  # table rows can answer


def test_a_page_of_cards_side_by_side_reads_every_card() -> None:
    """Issue 45: trafilatura took the first of the page's ``<article>`` cards for its main content, and what it
    recovered from the rest of the page left out the other cards' names and labels ("Private · Est. 2004")."""
    blocks, _ = _read(HYGIENE / "cards.html")
    kinds = _by_kind(blocks)
    assert kinds[TextKind.HEADING] == [
        "Choosing a Water Provider in the Valley",
        "Providers in the Valley",
        "North Water Company",
        "Cedar Springs Ltd",
        "Valley Wells Co-operative",
    ]
    cards = {b.section: b.text for b in blocks if b.kind == TextKind.PROSE}
    assert cards["Cedar Springs Ltd"].startswith("Private · Est. 2004")
    assert cards["Valley Wells Co-operative"].startswith("Co-operative · Est. 1987")
    prose = " ".join(kinds[TextKind.PROSE])
    assert (
        "Most households pay for water twice a year, and one in five said they had changed provider." in prose
    )
    assert "62%" in prose and "Households on a meter" in prose
    assert "Home" not in prose and "class project" not in prose  # navigation and footer stay out


def test_docx_superscript_reference_numbers_stay_out_of_words() -> None:
    blocks, chunks = _read(HYGIENE / "superscripts.docx")
    prose = " ".join(b.text for b in blocks if b.kind == TextKind.PROSE)
    assert "MMACE (Model Agnostic Counterfactual) needs no gradients." in prose
    assert "structure-property relationships. The data hold 10⁶ molecules." in prose
    assert "The algorithm is well-known; the algorithm mutates strings and ranks" in prose
    assert not re.search(r"[a-z)][.,]?\d", prose.replace("10⁶", ""))
    assert _by_kind(blocks)[TextKind.REFERENCE] == [
        "1. Smith, J. Counterfactuals. J. Chem. 12, 1-9 (2020).\n\n2. Doe, A. Explanations. Nature 600, 10-20 (2021)."
    ]
    reference_chunks = [c for c in chunks if c.section == "References"]
    assert reference_chunks and all(c.kind == TextKind.REFERENCE for c in reference_chunks)
    assert all(not c.answer_sentences() for c in reference_chunks)


def test_pdf_glyphs_whose_boxes_overlap_are_read_once() -> None:
    """A bold face set tight: each glyph's box overlaps its neighbours', and a word breaks over two text objects.
    PDFium's text of each object's bounds took the neighbour's edge letter too ("Macro" + "rovision")."""
    blocks, _ = _read(HYGIENE / "overlap.pdf")
    text = " ".join(b.text for b in blocks)
    assert "Section 1201 does not prohibit the act of circumvention." in text
    assert "The Macrovision rule applies to analog video recorders." in text


def test_a_short_run_by_the_gutter_stays_in_its_column() -> None:
    """A "(" set on its own at the start of a right-column line fits either side of the gutter: it was read into
    the left column ("out-of-the-box ( tools"), and the right column lost it."""
    blocks, _ = _read(HYGIENE / "gutter.pdf")
    text = " ".join(b.text for b in blocks)
    assert "GROBID is the best among ten out-of-the-box tools for parsing bibliographies" in text
    assert "compare it with the (original model on the same tasks)" in text


def test_justified_text_set_a_word_at_a_time_is_one_column() -> None:
    """Every word its own text object: no segment crosses the middle, so the page was read as two columns, each
    line's left half before its right halves ("essential for advanced economies", the rest pages later)."""
    blocks, _ = _read(HYGIENE / "justified.pdf")
    text = " ".join(b.text for b in blocks)
    assert (
        "Deep capital markets are essential for a country's prosperity, distinguishing advanced economies"
        in text
    )
    assert "Most bonds pay a coupon every six months until they mature." in text


def test_letters_set_apart_one_at_a_time_read_as_words() -> None:
    """Issue 45: a heading and a sentence set a letter at a time with extra spacing read "B a c kg r o u n d"
    ("Backgrou nd" in blind13's white paper): a gap between two letters is measured against the line's letter
    spacing and its font size, not the height of one small glyph's box."""
    blocks, _ = _read(HYGIENE / "letter_spaced.pdf")
    kinds = _by_kind(blocks)
    assert kinds[TextKind.HEADING] == ["Background"]
    prose = " ".join(kinds[TextKind.PROSE])
    assert "Some source documents were scanned and not born digital." in prose
    assert "The reader keeps every real word gap in this line." in prose


def test_pdf_hyphens_superscripts_and_what_is_not_prose() -> None:
    blocks, chunks = _read(HYGIENE / "hygiene.pdf")
    kinds = _by_kind(blocks)
    prose = " ".join(kinds[TextKind.PROSE])
    assert "Structure-property relationships are learned by the agent." in prose  # a break hyphen
    assert "Our model PaSa-7b outperforms GPT-4o on recall" in prose  # hyphens that are part of names
    assert "as often observed in practice and the agent stops" in prose  # the superscript note left out
    assert kinds[TextKind.HEADING] == ["1 Introduction"]
    assert kinds[TextKind.CAPTION] == ["Figure 1: Overview of the agent and its two components."]
    assert kinds[TextKind.EQUATION] == ["L(theta) = E[min(r * A, clip(r) * A)] (5)"]
    (furniture,) = kinds[TextKind.FURNITURE]
    assert "c 2020 Association for Computational Linguistics" in furniture
    (chunk,) = chunks
    answerable = chunk.answer_sentences()
    assert all(k in {TextKind.PROSE, TextKind.TABLE} or k is None for k in [chunk.kind])
    assert Counter(chunk.sentence_kinds or []) >= Counter({"heading": 1, "caption": 1, "equation": 1})
    assert "Figure 1" not in " ".join(answerable) and "Association" not in " ".join(answerable)
    assert "The crawler collects papers and the selector reads them." in answerable
    # every sentence's span still indexes the chunk's own text, so quotes stay exact
    assert chunk.sentence_spans is not None and chunk.sentence_kinds is not None
    assert len(chunk.sentence_kinds) == len(chunk.sentence_spans)
    assert "Figure 1: Overview of the agent and its two components." in chunk.sentences()


def test_markdown_and_text_lose_their_syntax_and_glued_note_markers(tmp_path: Path) -> None:
    md = tmp_path / "page.md"
    md.write_text(
        "# Gravity hill\n\nA gravity hill is a place where a slope *appears* uphill.[1] See "
        "[the list](https://example.org/list) \\[sic\\].\n\n## Sites\n\n| Site | Country |\n|---|---|\n"
        "| Electric Brae | Scotland |\n\n## References\n\n1. ^ Bressan, P. (2003). Perception.\n",
        encoding="utf-8",
    )
    blocks, _ = _read(md)
    text = "\n".join(b.text for b in blocks)
    assert not _MARKUP.search(text) and "*" not in text and "](" not in text
    assert "A gravity hill is a place where a slope appears uphill. See the list [sic]." in text
    assert _by_kind(blocks)[TextKind.TABLE] == ["Site: Electric Brae | Country: Scotland"]
    assert [b.text for b in blocks if b.kind == TextKind.HEADING] == ["Gravity hill", "Sites", "References"]
    assert _by_kind(blocks)[TextKind.REFERENCE] == ["Bressan, P. (2003). Perception."]
    txt = tmp_path / "notes.txt"
    txt.write_text(
        "He was born in Bangor on 26 June 1968,[1] and grew up in Barmouth.[2][3]", encoding="utf-8"
    )
    blocks, _ = _read(txt)
    assert blocks[0].text == "He was born in Bangor on 26 June 1968, and grew up in Barmouth."


@pytest.mark.parametrize(
    ("left", "right", "seen", "joined"),
    [
        ("re", "lationships", "", "relationships"),  # lower-case continuation: a break
        ("PaSa", "7b", "", "PaSa-7b"),  # a digit: the hyphen is the name's
        ("GPT", "4o", "", "GPT-4o"),
        ("GROBID", "parsed", "", "GROBID-parsed"),  # an acronym before a lower-case word: a compound
        ("AutoScholar", "Query", "the AutoScholarQuery set", "AutoScholarQuery"),  # written whole elsewhere
        (
            "state",
            "of-the-art",
            "a state-of-the-art model",
            "state-of-the-art",
        ),  # written hyphenated elsewhere
    ],
)
def test_a_line_end_hyphen_is_joined_as_the_document_spells_the_word(
    left: str, right: str, seen: str, joined: str
) -> None:
    assert hyphen_join(left, right, word_forms([seen])) == joined


def test_lines_are_joined_without_a_stray_space_and_note_markers_dropped() -> None:
    vocabulary = word_forms(["random mutations"])
    assert join_lines(["the re-", "lationships of PaSa-", "7b and GPT\x02", "4o"], vocabulary) == (
        "the relationships of PaSa-7b and GPT-4o"
    )
    assert repair_inline_hyphens("ran-dom string, a well-known method", vocabulary) == (
        "random string, a well-known method"
    )
    assert drop_note_markers("in 1965.[1] The flag[a] History[edit], as in [12]") == (
        "in 1965. The flag History, as in [12]"
    )


def test_old_chunks_without_kinds_answer_from_all_their_sentences() -> None:
    doc = Document(id="d", text="One sentence here. Another one there.")
    (chunk,) = chunk_document(doc, ChunkerSettings(max_tokens=50, overlap_tokens=0))
    assert chunk.kind == TextKind.PROSE and chunk.sentence_kinds is None
    assert chunk.answer_sentences() == chunk.sentences()
    stored = Chunk.model_validate(
        {k: v for k, v in chunk.model_dump().items() if k not in {"kind", "sentence_kinds"}}
    )
    assert stored.answer_sentences() == chunk.sentences()


def test_surrogate_pairs_from_a_text_layer_become_their_character_and_lone_ones_a_replacement() -> None:
    # pypdfium2 gave a paper's math italic letters as UTF-16 surrogate pairs; hashing the chunk then failed
    from deepcite.ingest.readers.base import Block, valid_unicode

    block = Block(text="Reading Difficulty | \ud835\udc43 \u2212 \ud835\udc44 and a lone \ud800 half")
    assert block.text == "Reading Difficulty | \U0001d443 \u2212 \U0001d444 and a lone \ufffd half"
    block.text.encode("utf-8")  # valid Unicode now: it hashes, stores and serves
    assert valid_unicode("plain text") == "plain text"


def test_a_figures_own_text_and_a_code_listing_are_read_apart_from_the_prose() -> None:
    # a chart embedded as a form XObject (grid lines and its own labels), a caption under it, a listing set
    # in Courier with line numbers in Helvetica, and a figure's source line
    blocks, chunks = _read(HYGIENE / "figure_code.pdf")
    kinds = _by_kind(blocks)
    (figure,) = kinds[TextKind.FIGURE]
    assert "k: # of retrieved passages" in figure and "# Train: 10k" in figure and "20 40 60 80" in figure
    prose = " ".join(kinds[TextKind.PROSE])
    assert "# Train" not in prose and "retrieved passages" not in prose.replace(
        "few passages are retrieved", ""
    )
    assert kinds[TextKind.CAPTION] == [
        "Figure 1: Accuracy against the number of retrieved passages.",
        "Source: the authors' analysis of the corpus.",
    ]
    (listing,) = kinds[TextKind.EQUATION]
    assert listing.startswith("1 from datasets import load_dataset 2 # Download the corpus")
    answerable = " ".join(sentence for chunk in chunks for sentence in chunk.answer_sentences())
    assert "The script below loads the data set." in answerable
    assert "#" not in answerable and "load_dataset" not in answerable and "Source:" not in answerable


def test_a_table_and_its_caption_are_chunked_apart_from_the_prose_caption_first() -> None:
    rows = "\n".join(f"Model: M{i} | NQ: {i}.5 | WQ: {i}.0" for i in range(12))
    blocks = [
        Block("We use the batch size of 16. Table 4 summarizes our final results.", 1, "Results"),
        Block(rows, 1, "Results", table=True),
        Block("Table 4: End-to-end QA (Exact Match) Accuracy.", 1, "Results", kind=TextKind.CAPTION),
        Block("From the table, we see that higher retriever accuracy leads to better results.", 1, "Results"),
    ]
    doc = Document(id="d", text="\n\n".join(b.text for b in blocks))
    chunks = chunk_document(doc, ChunkerSettings(max_tokens=40, overlap_tokens=10), blocks)
    tables = [c for c in chunks if c.kind == TextKind.TABLE]
    assert len(tables) >= 2  # the rows did not fit one chunk: each chunk leads with the caption
    for chunk in tables:
        assert chunk.sentences()[0] == "Table 4: End-to-end QA (Exact Match) Accuracy."
        assert "batch size" not in chunk.text and "From the table" not in chunk.text
    assert sorted(row for c in tables for row in c.sentences()[1:]) == sorted(rows.splitlines())
    prose = [c for c in chunks if c.kind == TextKind.PROSE]
    assert [c.text for c in prose] == [blocks[0].text, blocks[3].text]


def test_a_docx_table_of_contents_is_page_furniture() -> None:
    blocks, chunks = _read(HYGIENE / "contents.docx")
    kinds = _by_kind(blocks)
    (contents,) = kinds[TextKind.FURNITURE]
    assert contents.startswith("Table of Contents") and "IDENTIFIABLE INFORMATION (PII)1-2" in contents
    assert contents.endswith("B. SURETY BONDS1-4")
    prose = " ".join(kinds[TextKind.PROSE])
    assert "CHAPTER 1" in prose and "All credit card bills must be paid in full" in prose
    answerable = " ".join(sentence for chunk in chunks for sentence in chunk.answer_sentences())
    assert "PURPOSE1-1" not in answerable and "(PII)1-2" not in answerable


def test_the_hygiene_check_counts_reader_defects_not_the_documents_own_text() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from text_hygiene import problems

    words = {"structure", "relationships", "insider", "query", "tool", "the", "we", "use"}
    # reader defects
    assert "fused_number" in problems("It models structure161 well.", "", words)
    assert "fused_number" in problems("It learns the relationships.114–116", "", words)
    assert "fused_number" in problems("a generator (MMACE)9 needs", "", words)
    assert "html_tag" in problems("the flag<sup>[1]</sup> flies")
    assert "markdown" in problems("# National Flag of Canada Day")
    # the documents' own text
    assert problems("We use the cld2 tool.", "", words) == {}  # a name: "cld" is never a word of its own
    assert problems("The format is: [“query1”, “query2”, ...]", "", words) == {}  # quoted literals
    assert problems("or is an insider.11", "U.S.C. §§ 101, 1302(a).", words) == {}  # a code's title number
    assert problems("incorporating 11 U.S.C. § 704(a)(2),28 C.F.R. § 58.4", "", words) == {}
    assert problems("This yields a set of <user query, paper> pairs.") == {}  # a placeholder, no HTML tag
    assert problems("Type of evaluation: None | # papers: 101 | % papers: 62%") == {}  # a table's header
    assert "markdown" in problems("| Site | Country |")  # a Markdown table row written as text
    assert problems("|Csumm|") == {}  # a formula's bars: the size of a set
    assert problems("| K ∪ ( cover( D) ∩ cover(A)) | .") == {}


def test_a_formula_s_punctuation_stays_in_its_place_in_the_line() -> None:
    """A decimal point, a comma, a centred dot or a subscript set as a glyph run of its own (a formula in a
    paper) has a box far below its line's top: it once formed a line of its own, read after the line ("We used λ = 1 1 …
    in . the development set", "· , We used"), and the figure asked for was lost."""
    blocks, _ = _read(Path(__file__).resolve().parent.parent / "fixtures" / "docs" / "dpr-page-5.pdf")
    text = " ".join(b.text for b in blocks)
    assert "We used λ = 1.1 based on the retrieval accuracy in the development set." in text
    assert "BM25(q,p) + λ · sim(q, p) as the ranking function." in text
    # a subscript and a decimal point in a footnote's formula: "k1 = 0.9", once "k = 0 9 (term frequency 1 ."
    assert "b = 0.4 (document length normalization) and k1 = 0.9 (term frequency scaling)" in text


def test_closing_punctuation_joins_the_word_before_it() -> None:
    """The bearings of a digit and a comma or full stop leave a gap of 0.2-0.36 of the line's height, and a
    dropped note marker another: each once read as a space ("Section 5.1 .", "ChatGPT , powered by")."""
    blocks, _ = _read(
        Path(__file__).resolve().parent.parent / "fixtures" / "docs" / "pasa-tables-pages-7-8.pdf"
    )
    text = " ".join(b.text for b in blocks)
    assert "parameter settings in Section 5.1. " in text
    assert "submitted directly to Google Scholar, with the" in text
    assert "the scholar query to ChatGPT, powered by" in text
    assert not re.search(r"\w [,;] ", text)  # no comma or semicolon set off from its word
