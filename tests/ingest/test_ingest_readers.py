"""Every reader on small real files (tests/fixtures/docs, cut from ../shared/datasets/real_docs)."""

from __future__ import annotations

import shutil
import unicodedata
import zipfile
from pathlib import Path

import pypdf
import pytest

from deepcite.config import ChunkerSettings, IngestSettings
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.isolate import read_file_isolated
from deepcite.ingest.readers import ReadResult, SkipReason, detect_kind, read_file
from deepcite.ingest.readers.pdf_layout import Line
from deepcite.ingest.readers.pdf_text import drop_running_lines
from deepcite.text import split_sentences

DOCS = Path(__file__).resolve().parent.parent / "fixtures" / "docs"


def read(path: Path, settings: IngestSettings | None = None) -> ReadResult:
    return read_file(path, doc_id=path.name, name=path.name, settings=settings or IngestSettings())


def norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("two-column-page.pdf", "pdf"),
        ("paper-excerpt.docx", "docx"),
        ("directorate.pptx", "pptx"),
        ("winter-sports.epub", "epub"),
        ("flag_day.html", "html"),
        ("records-jsonl.json", "jsonl"),
    ],
)
def test_types_are_found_by_content_not_by_name(tmp_path: Path, name: str, kind: str) -> None:
    renamed = tmp_path / "no-suffix.txt"
    shutil.copy(DOCS / name, renamed)
    assert detect_kind(DOCS / name) == kind
    if kind not in ("html", "jsonl"):  # those two use the suffix only to break ties
        assert detect_kind(renamed) == kind


def test_two_column_pdf_page_reads_left_column_first_with_sections_and_pages() -> None:
    result = read(DOCS / "two-column-page.pdf")
    (doc,) = result.documents
    text = norm(doc.document.text)
    # the end of the left column runs on into the right column's first section, in that order
    assert text.index("2 Background") < text.index("3 Dense Passage Retriever (DPR)")
    assert "{" not in text[:20] and "ﬁ" not in text  # ligatures NFKC-normalised
    assert {b.section for b in doc.blocks} >= {
        "2 Background",
        "3 Dense Passage Retriever (DPR)",
        "3.1 Overview",
    }
    assert {b.page for b in doc.blocks} == {1}
    assert "-\n" not in doc.document.text and "\x02" not in doc.document.text  # hyphenated words joined
    chunks = chunk_document(doc.document, ChunkerSettings(max_tokens=80, overlap_tokens=10), doc.blocks)
    assert all(c.page == 1 and c.page_end is None for c in chunks)
    assert {c.section for c in chunks} >= {"2 Background", "3.1 Overview"}


def test_running_headers_and_page_numbers_are_dropped_references_labelled() -> None:
    real = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "real_docs" / "files" / "pasa.pdf"
    if not real.exists():
        pytest.skip("../shared/datasets/real_docs is not beside the checkout")
    (doc,) = read(real).documents
    sections = {b.section for b in doc.blocks}
    assert "References" in sections
    pages = {}
    for block in doc.blocks:
        pages.setdefault(block.page, []).append(block.text)
    assert len(pages) == 15
    # no page ends on its own page number
    assert not any(" ".join(texts).rstrip().endswith(f" {n}") for n, texts in pages.items())


def test_running_lines_in_their_variants_and_above_the_margin_band_are_dropped() -> None:
    """A datasheet's header comes in three variants (the link before, after or without it) and none alone is on
    enough pages; a word processor's footer (title and page number) sits above the margin band, and a table
    page reads it mid-page. Each word of the header is in the band on every page, and the footer's words end
    every page: both go, with the lone page numbers at the pages' foot; body lines stay, one at a page's edge
    too, and a line every page repeats away from its edges."""
    headers = [
        "SNAS433D - REVISED MAY 2013 www.ti.com",
        "www.ti.com SNAS433D - REVISED MAY 2013",
        "SNAS433D - REVISED MAY 2013",
    ]
    topics = ["fan speed", "thermal diode", "fault queue", "lookup table", "tachometer", "register map"]
    pages = []
    for n, topic in enumerate(topics, start=1):
        pages.append(
            [
                Line(headers[n % 3], 735.0, 5.0, True),
                Line(f"This page is about the {topic}.", 600.0, 9.0, False),
                Line("The same closing remark ends every page.", 120.0, 9.0, False),
                Line("De-risking custom technology projects", 89.0, 7.0, False),
                Line(str(n + 10), 89.0, 7.0, False),
            ]
        )
    kept = drop_running_lines(pages, IngestSettings())
    assert [line.text for line in kept[0]] == [
        "This page is about the fan speed.",
        "The same closing remark ends every page.",
    ]
    assert all(len(page) == 2 for page in kept)
    real = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "real_docs" / "files" / "fr_olap.pdf"
    if real.exists():  # odd and even pages' heads: the title and the authors, alternating
        (doc,) = read(real).documents
        assert "J. Aligon et al." not in doc.document.text


def test_encrypted_and_corrupt_pdfs_are_skipped_with_their_reason() -> None:
    encrypted = read(DOCS / "encrypted.pdf")
    assert encrypted.skip and encrypted.skip.reason is SkipReason.ENCRYPTED
    assert "without a password" in encrypted.skip.message
    corrupt = read(DOCS / "corrupt.pdf")
    assert corrupt.skip and corrupt.skip.reason is SkipReason.CORRUPT


def test_scanned_pdf_without_tesseract_is_reported_as_scanned() -> None:
    result = read(DOCS / "scanned-letter.pdf", IngestSettings(tesseract_cmd="no-such-tesseract"))
    assert result.skip and result.skip.reason is SkipReason.SCANNED
    assert result.skip.message.startswith("scanned, no text layer: install tesseract-ocr to OCR it")


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed (make ocr)")
def test_scanned_pdf_is_read_through_ocr() -> None:
    result = read(DOCS / "scanned-letter.pdf")
    (doc,) = result.documents
    assert result.ocr_pages == 1
    assert "Foundation" in doc.document.text
    assert doc.blocks[0].page == 1


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed (make ocr)")
@pytest.mark.parametrize("threads", [1, 2])
def test_tesseract_runs_with_the_configured_openmp_threads(tmp_path: Path, threads: int) -> None:
    """ingest.ocr_threads reaches tesseract as OMP_THREAD_LIMIT (its waiting threads spin on the cores the
    embedder needs); a wrapper records it and runs the real binary."""
    seen = tmp_path / "omp"
    wrapper = tmp_path / "tesseract"
    wrapper.write_text(
        f'#!/bin/sh\necho "$OMP_THREAD_LIMIT" > {seen}\nexec {shutil.which("tesseract")} "$@"\n'
    )
    wrapper.chmod(0o755)
    result = read(
        DOCS / "scanned-letter.pdf", IngestSettings(tesseract_cmd=str(wrapper), ocr_threads=threads)
    )
    assert seen.read_text().strip() == str(threads)
    assert "Foundation" in result.documents[0].document.text


def test_docx_keeps_headings_as_sections_and_core_properties() -> None:
    (doc,) = read(DOCS / "paper-excerpt.docx").documents
    assert doc.document.title == "A Perspective on Explanations of Molecular Prediction Models"
    assert doc.document.authors[0] == "Geemi P. Wellawatte"
    assert {"Abstract", "Introduction", "Tables"} <= {b.section for b in doc.blocks}
    assert "Method: SHAP | Explanation type: Feature attribution" in doc.document.text  # rows with headers
    assert all(b.page is None for b in doc.blocks)


def test_docx_headings_found_by_style_name_when_word_localises_the_style_ids(tmp_path: Path) -> None:
    """A Word set to French saves its heading styles with ids "Titre1", "Titre2" (their names stay "heading 1"):
    the headings are still headings, so a "References" section ends at the next one and the prose after it
    is prose, not reference entries (a blind-set file lost every answer past its references this way)."""
    import docx

    written = docx.Document()
    for style in written.styles:
        if style.name in ("Heading 1", "Heading 2"):
            style.element.set(docx.oxml.ns.qn("w:styleId"), "Titre" + style.name[-1])
    written.add_heading("References", level=1)
    written.add_paragraph("ONNX IR specification https://github.com/onnx/onnx/blob/main/docs/IR.md")
    written.add_heading("Function vs Operator", level=1)
    written.add_heading("Opset resolution", level=2)
    written.add_paragraph("There is no clear rationale to choose between each possibility of the two.")
    written.save(tmp_path / "notes.docx")
    assert {p._p.style for p in docx.Document(str(tmp_path / "notes.docx")).paragraphs} == {
        "Titre1",
        "Titre2",
        None,
    }

    (doc,) = read(tmp_path / "notes.docx").documents
    kinds = {b.text: b.kind.value for b in doc.blocks}
    assert kinds["Function vs Operator"] == kinds["Opset resolution"] == "heading"
    assert kinds["There is no clear rationale to choose between each possibility of the two."] == "prose"
    assert kinds["ONNX IR specification https://github.com/onnx/onnx/blob/main/docs/IR.md"] == "reference"


def test_pptx_slides_are_pages_titled_by_their_slide() -> None:
    (doc,) = read(DOCS / "directorate.pptx").documents
    assert [(b.page, b.section) for b in doc.blocks] == [
        (1, "Sciences and Exploration Directorate"),
        (2, "Earth Sciences Division"),
        (3, "Heliophysics"),
    ]
    assert "Speaker note for slide 2." in doc.blocks[1].text


def test_a_slides_paragraphs_are_sentences_of_their_own() -> None:
    """A bullet without a full stop never runs on into the next: each paragraph of a text frame is a unit."""
    (doc,) = read(DOCS / "directorate.pptx").documents
    for block in doc.blocks:
        paragraphs = [p for p in block.text.split("\n\n") if p.strip()]
        assert all("\n" not in p for p in paragraphs)
        sentences = [s for p in paragraphs for s in split_sentences(p)]
        assert len(sentences) >= len(paragraphs)


def test_html_keeps_the_article_and_drops_navigation_and_hidden_blocks(tmp_path: Path) -> None:
    (doc,) = read(DOCS / "flag_day.html").documents
    text = doc.document.text
    assert "National Flag of Canada Day" in doc.document.title
    assert "commonly shortened to Flag Day" in norm(text)
    assert "Jump to content" not in text and "Privacy policy" not in text  # page furniture
    page = tmp_path / "filing.html"
    page.write_text(
        "<html><body><ix:header><ix:hidden>dei:EntityCentralIndexKey 0001</ix:hidden></ix:header>"
        "<div style='display:none'>hidden context 123</div><script>var x = 1;</script>"
        "<article><h1>Annual report</h1><p>"
        + "Revenue grew in the year because table games sold well. " * 8
        + "</p></article></body></html>"
    )
    (filing,) = read(page).documents
    assert "Revenue grew" in filing.document.text
    assert (
        "EntityCentralIndexKey" not in filing.document.text and "hidden context" not in filing.document.text
    )
    assert "var x" not in filing.document.text


def test_a_markdown_slide_deck_in_a_web_page_is_read_slide_by_slide(tmp_path: Path) -> None:
    """A remark.js deck: the slides are Markdown in a textarea the page renders by script. Each slide is a page,
    its heading a section and each bullet a paragraph; a slide's properties and presenter notes stay out; a form's
    text box is no deck."""
    deck = tmp_path / "deck.html"
    deck.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Policing the police</title></head><body>"
        "<textarea id='source'>\nclass: center, middle\n# Policing the police\n---\nname: findings\n"
        "## Findings\n- Complaints rose by **40 per cent** between 2015 and 2020.\n--\n"
        "- Only 3 of 120 complaints led to charges.\n???\nSay the charges figure slowly.\n---\n## Methods\n"
        "We read 120 complaint files from five states.\n</textarea>"
        "<script src='remark.min.js'></script><script>var slideshow = remark.create();</script></body></html>",
        encoding="utf-8",
    )
    (doc,) = read(deck).documents
    pages = {(b.page, b.section, b.text) for b in doc.blocks if b.kind.value == "prose"}
    assert (2, "Findings", "Complaints rose by 40 per cent between 2015 and 2020.") in {
        (p, sec, t.split("\n")[0]) for p, sec, t in pages
    }
    assert any(p == 3 and "120 complaint files" in t for p, _, t in pages)
    text = doc.document.text
    assert "class: center" not in text and "name: findings" not in text and "slowly" not in text
    assert "**" not in text and "---" not in text
    form = tmp_path / "form.html"
    form.write_text(
        "<html><body><article><h1>Contact</h1><p>"
        + "Write to us about the survey and its findings. " * 8
        + "</p><form><textarea name='msg'>Your message</textarea></form></article></body></html>",
        encoding="utf-8",
    )
    (page,) = read(form).documents
    assert "Write to us" in page.document.text and all(b.page is None for b in page.blocks)


def test_a_posts_date_line_and_byline_open_its_text_and_page_furniture_stays_out(tmp_path: Path) -> None:
    body = "Emscripten now emits standalone Wasm files that run without the JS runtime. " * 6
    page = tmp_path / "post.html"
    page.write_text(
        "<html><head><meta charset='utf-8'></head><body><nav><p>By Site Editors</p><time datetime='2020-01-01'>1 January 2020</time></nav>"
        "<article><header><h1>Outside the web</h1><p class='meta'>Published "
        "<time datetime='2019-11-21'>21 November 2019</time> · Tagged with <a href='/t'>WebAssembly</a></p>"
        f"</header><div><p>{body}</p><p>{body}</p></div>"
        "<footer><div><img src='a.jpg'><p>Posted by Alon Zakai.</p></div></footer></article>"
        "<div class='authority-control'>Authority control databases</div>"
        "<footer><p>By using this site you agree to the terms.</p></footer></body></html>"
    )
    (post,) = read(page).documents
    opening = post.document.text.split("Emscripten now")[0]
    assert "Published 21 November 2019 · Tagged with WebAssembly" in opening
    assert "Posted by Alon Zakai." in opening
    assert (
        "Site Editors" not in post.document.text and "1 January 2020" not in post.document.text
    )  # navigation
    assert "Authority control" not in opening and "agree to the terms" not in post.document.text
    (plain,) = read(page, IngestSettings(html_front_matter_chars=0)).documents
    assert "Published" not in plain.document.text and "Posted by" not in plain.document.text


def test_epub_chapters_in_spine_order_with_titles_as_sections() -> None:
    (doc,) = read(DOCS / "winter-sports.epub").documents
    assert doc.document.title == "Winter Sports in Switzerland"
    assert doc.document.authors == ["E. F. Benson"]
    sections = [b.section for b in doc.blocks]
    assert sections.index("CHAPTER I THE SUN-SEEKER") < sections.index("CHAPTER II RINKS AND SKATERS")
    assert "Project Gutenberg" in doc.document.text  # nothing dropped, the licence included


def test_json_lines_named_json_loads_record_by_record() -> None:
    result = read(DOCS / "records-jsonl.json")
    assert [d.document.id for d in result.documents] == ["r1", "r2"]
    assert result.documents[0].document.file == "records-jsonl.json"


def test_zip_bomb_inside_a_docx_fails_that_file_from_the_zip_directory(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"\0" * 20_000_000)
    result = read(bomb)
    assert result.skip and result.skip.reason is SkipReason.TOO_LARGE
    assert "zip bomb" in result.skip.message


def test_unsupported_empty_and_oversized_files_are_skipped_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (tmp_path / "empty.txt").write_bytes(b"")
    big = tmp_path / "big.txt"
    big.write_text("word " * 300_000)
    assert read(tmp_path / "image.png").skip.reason is SkipReason.UNSUPPORTED
    assert read(tmp_path / "empty.txt").skip.reason is SkipReason.EMPTY
    assert read(big, IngestSettings(max_file_mb=1)).skip.reason is SkipReason.TOO_LARGE


def test_isolated_reading_bounds_time_and_memory() -> None:
    ok = read_file_isolated(DOCS / "two-column-page.pdf", doc_id="p", name="p", settings=IngestSettings())
    assert ok.documents and ok.kind == "pdf"
    slow = read_file_isolated(
        DOCS / "winter-sports.epub", doc_id="e", name="e", settings=IngestSettings(timeout_s=0.001)
    )
    assert slow.skip and slow.skip.reason is SkipReason.TIMEOUT
    starved = read_file_isolated(
        DOCS / "winter-sports.epub", doc_id="e", name="e", settings=IngestSettings(memory_limit_mb=64)
    )
    assert starved.skip and starved.skip.reason is SkipReason.OUT_OF_MEMORY
    assert "ingest.memory_limit_mb" in starved.skip.message


def test_a_child_reads_with_the_date_parser_already_set_up(tmp_path: Path) -> None:
    """The fork server compiles dateparser's patterns for every language once (readers.warm), so a child
    reading a web page whose date htmldate hands to dateparser does not compile them again."""
    page = tmp_path / "note.txt"
    page.write_text("a plain text file, read by the probe reader")
    settings = IngestSettings(readers={"text": "ingest.warm_probe:LanguagesReady"})
    result = read_file_isolated(page, doc_id="n", name="n", settings=settings)
    ready = int(result.documents[0].document.text.split()[0])
    assert ready >= 100  # dateparser 1.2 knows some 200 languages


def test_a_file_is_chunked_in_the_child_that_read_it_with_its_acl() -> None:
    """With a chunker, read_file_report's child chunks what it read (off the ingesting process's GIL): the
    chunks the ingesting process would make, every one carrying the acl groups."""
    from deepcite.config import ChunkerSettings
    from deepcite.ingest.chunker import chunk_reads
    from deepcite.ingest.report import read_file_report

    chunker = ChunkerSettings()
    file, result = read_file_report(
        DOCS / "paper-excerpt.docx", "paper.docx", ["team"], IngestSettings(), chunker
    )
    assert result.chunks is not None and file.doc_ids == ["paper.docx"]
    assert result.chunks == chunk_reads(result.documents, chunker)
    assert {tuple(c.acl) for chunks in result.chunks.values() for c in chunks} == {("team",)}
    _, plain = read_file_report(DOCS / "paper-excerpt.docx", "paper.docx", ["team"], IngestSettings())
    assert plain.chunks is None  # no chunker, no chunks: the caller chunks


def _fails(result: ReadResult) -> None:
    raise ValueError("the work after reading failed")


def test_work_after_reading_that_fails_returns_what_was_read() -> None:
    read = read_file_isolated(
        DOCS / "paper-excerpt.docx", doc_id="p", name="p", settings=IngestSettings(), then=_fails
    )
    assert read.documents and read.skip is None and read.chunks is None


def test_an_enormous_page_fails_its_file(tmp_path: Path) -> None:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=14_400, height=14_400)  # 200 x 200 inches, the most PDF allows
    huge = tmp_path / "huge.pdf"
    with huge.open("wb") as fh:
        writer.write(fh)
    result = read(huge)
    assert result.skip and result.skip.reason is SkipReason.TOO_LARGE
    assert "page 1 is 200 x 200 inches" in result.skip.message


def test_a_skip_message_never_shows_the_path_the_file_was_read_from(tmp_path: Path) -> None:
    broken = tmp_path / "upload-3f2a.docx"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("word/document.xml", "<not-docx/>")
    result = read_file(broken, doc_id="report.docx", name="report.docx", settings=IngestSettings())
    assert result.skip and result.skip.reason is SkipReason.CORRUPT
    assert str(tmp_path) not in result.skip.message


def test_json_lines_named_json_loads_through_the_corpus_loaders_too() -> None:
    from deepcite.ingest import InputFormat, detect_format, iter_documents

    path = DOCS / "records-jsonl.json"
    assert detect_format(path) is InputFormat.JSONL
    assert [d.id for d in iter_documents(path)] == ["r1", "r2"]  # not "malformed JSON (Extra data)"


def test_what_a_file_states_about_itself_read_as_it_is_printed(tmp_path: Path) -> None:
    """Blind-set misreadings, each on a crafted file: JSON-LD inside CDATA (a 2019 Wikipedia page), a site's
    name after the title, names written surname first, a copyright range, and a DOCX re-saved years after it
    was written (its core creation date is the file's, not the document's)."""
    import docx

    page = tmp_path / "page.html"
    page.write_text(
        '<html><head><meta charset="utf-8"><title>Outside the web · V8</title>'
        '<meta name="DC.Creator" content="Tiruveedhi, Charan"><meta name="DC.Creator" content="Jong, Michiel de">'
        "</head><body><p>Some text of the page, long enough to be read as its body.</p></body></html>"
    )
    (doc,) = read(page).documents
    assert doc.document.title == "Outside the web"
    assert doc.document.authors == ["Charan Tiruveedhi", "Michiel de Jong"]
    wrapped = tmp_path / "wrapped.html"
    wrapped.write_text(
        "<html><head><title>New Zealand - Wikipedia</title><script type='application/ld+json'>"
        '<![CDATA[ {"@type": "Article", "name": "New Zealand", "datePublished": "2001-10-29T01:59:14Z", '
        '"author": {"@type": "Organization", "name": "Contributors to Wikimedia projects"}} ]]></script>'
        "</head><body><p>New Zealand is an island country in the Pacific Ocean, it says here.</p></body></html>"
    )
    (doc,) = read(wrapped).documents
    assert (doc.document.title, doc.document.authors, doc.document.year) == (
        "New Zealand",
        ["Contributors to Wikimedia projects"],
        2001,
    )
    resaved = docx.Document()
    resaved.core_properties.title = "OWASP Top Ten List"
    resaved.core_properties.created = __import__("datetime").datetime(2025, 7, 12)
    for line in ("OWASP Top 10", "2007 Update", "© 2002-2007 OWASP Foundation", "Introduction"):
        resaved.add_paragraph(line)
    resaved.add_paragraph("The body of the document follows here, in a paragraph of its own.")
    resaved.save(tmp_path / "top10.docx")
    (doc,) = read(tmp_path / "top10.docx").documents
    assert doc.document.year == 2007  # the range's end; 2025 is when the file was saved again
