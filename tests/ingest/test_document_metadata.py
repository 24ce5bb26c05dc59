"""Title, authors and year as a file states them, read the general way (issue 47): a PDF's author grid from the
first page's layout, a web page's byline without the words around it, a year stated where the readers look."""

from __future__ import annotations

import ctypes
import zipfile
from pathlib import Path

import docx
import docx.shared
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from pptx import Presentation

from deepcite.config import IngestSettings
from deepcite.ingest.readers import read_file
from deepcite.ingest.readers.bibliographic import (
    byline_names,
    copyright_line_year,
    real_title,
    stated_year,
    year_of,
)
from deepcite.models import Document

Text = tuple[float, float, str, str, float]  # x, y, text, standard font, size


def text_page(pdf: pdfium.PdfDocument, texts: list[Text]) -> None:
    """A page added to ``pdf`` by PDFium with ``texts`` placed where they say (in PDFium's standard fonts)."""
    page = pdf.new_page(612, 792)
    for x, y, text, font, size in texts:
        obj = pdfium_c.FPDFPageObj_CreateTextObj(
            pdf.raw, pdfium_c.FPDFText_LoadStandardFont(pdf.raw, font.encode()), size
        )
        data = (text + "\x00").encode("utf-16-le")
        pdfium_c.FPDFText_SetText(obj, (ctypes.c_ushort * (len(data) // 2)).from_buffer_copy(data))
        pdfium_c.FPDFPageObj_Transform(obj, 1, 0, 0, 1, x, y)
        pdfium_c.FPDFPage_InsertObject(page.raw, obj)
    pdfium_c.FPDFPage_GenerateContent(page.raw)


def text_pdf(path: Path, texts: list[Text]) -> Path:
    """A one-page PDF written by PDFium with ``texts`` placed where they say."""
    pdf = pdfium.PdfDocument.new()
    text_page(pdf, texts)
    pdf.save(path)
    pdf.close()
    return path


def read(path: Path) -> Document:
    return read_file(path, doc_id=path.name, name=path.name, settings=IngestSettings()).documents[0].document


def cell(x: float, y: float, *names: str, affiliation: str = "") -> list[Text]:
    """A cell of an author grid: names one under the other in 12 pt, then an affiliation in 9 pt."""
    lines = [*((x, y - 14 * i, name, "Helvetica", 12) for i, name in enumerate(names))]
    return lines + ([(x, y - 14 * len(names), affiliation, "Helvetica", 9)] if affiliation else [])


GRID = [  # names side by side (PDFium's text runs them together), an affiliation under each in smaller type, and
    # a cell holding two names one under the other: read row by row, each cell top to bottom
    *cell(80, 660, "Ann Marie Carter", affiliation="University of Leeds"),
    *cell(260, 660, "Bob Evans", affiliation="Allen Institute for AI"),
    *cell(440, 660, "Chen Li", affiliation="Google Assistant"),
    *cell(80, 610, "Dana Scully"),
    *cell(260, 610, "Emil Zola", "Fox Mulder", affiliation="Paris Lab"),
    *cell(440, 610, "Gil Grissom"),
    (80, 550, "Abstract", "Helvetica-Bold", 11),
]
CAPITALS = [  # a journal's names in capitals, each followed by its affiliation in smaller type
    (72, 670, "TAL AUGUST,", "Helvetica", 11),
    (150, 670, "University of Washington, USA", "Helvetica", 9),
    (72, 654, "MARTI A. HEARST,", "Helvetica", 11),
    (170, 654, "University of California, Berkeley, USA", "Helvetica", 9),
]


@pytest.mark.parametrize(
    ("front", "names"),
    [
        (
            GRID,
            [
                "Ann Marie Carter",
                "Bob Evans",
                "Chen Li",
                "Dana Scully",
                "Emil Zola",
                "Fox Mulder",
                "Gil Grissom",
            ],
        ),
        (CAPITALS, ["Tal August", "Marti A. Hearst"]),
    ],
    ids=["grid", "capitals"],
)
def test_the_names_under_a_title_are_read_from_the_pages_layout(
    tmp_path: Path, front: list[Text], names: list[str]
) -> None:
    body = "We read the names of the authors from the layout of the first page of a paper, not its text."
    title = "Reading Grids of Names on the First Page"
    title_line = (72, 700, title, "Helvetica-Bold", 18)
    found = read(text_pdf(tmp_path / "paper.pdf", [title_line, *front, (72, 530, body, "Helvetica", 10)]))
    assert (found.title, found.authors, found.year) == (title, names, None)  # nothing on the page dates it


@pytest.mark.parametrize(
    ("byline", "names"),
    [
        ("Posted by Alon Zakai.", ["Alon Zakai"]),
        (
            "By Jens Manuel Krogstad and Jeffrey S. Passel24 comments",
            ["Jens Manuel Krogstad", "Jeffrey S. Passel"],
        ),
        ("Chi Wang Principal Researcher at Microsoft Research", ["Chi Wang"]),
        ("Written by Rob Ewaschuk Edited by Betsy Beyer", ["Rob Ewaschuk"]),
        (
            "Published by Daniel Lemire A computer science professor. View all posts by Daniel Lemire",
            ["Daniel Lemire"],
        ),
        ("Antonio Regalado Editor View Profile » Follow RSS", ["Antonio Regalado"]),
        ("By the editors", []),
    ],
)
def test_a_byline_gives_its_names_without_the_words_around_them(byline: str, names: list[str]) -> None:
    assert byline_names(byline) == names


def test_a_copyright_line_dates_by_its_last_year() -> None:
    assert copyright_line_year("Chapter text.\nCopyright © 2017 Google, Inc. Published by O'Reilly") == 2017
    assert copyright_line_year("© 2002-2007 The OWASP Foundation") == 2007
    assert copyright_line_year("Copyright © 2008–2019, 2021, 2022 Anthony Green and Red Hat, Inc.") == 2022
    assert copyright_line_year("In 2017 the copyright office said so.") is None


def test_a_post_is_titled_by_its_heading_dated_by_its_time_element_and_signed_by_its_byline(
    tmp_path: Path,
) -> None:
    body = "Emscripten now emits standalone Wasm files that run without the JS runtime. " * 6
    page = tmp_path / "post.html"
    page.write_text(
        "<html><head><meta charset='utf-8'><title>Engineering blog</title></head><body>"
        "<article><header><h1>Outside the web</h1><p class='meta'>Published "
        "<time datetime='2019-11-21'>21 November 2019</time></p></header>"
        f"<div><p>{body}</p><p>{body}</p></div>"
        "<footer><p>Posted by Alon Zakai. View all posts</p></footer></article>"
        "<footer><p>Copyright © 2024 Example Inc.</p></footer></body></html>"
    )
    found = read(page)
    assert (found.title, found.authors, found.year) == ("Outside the web", ["Alon Zakai"], 2019)


@pytest.mark.parametrize(
    ("front", "year"),
    [
        ("Journal of Hydrology 310 (2005) 253–265", 2005),
        ("Vol. 85, No. 152\nThursday, August 6, 2020", 2020),
        ("Last Updated: Nov. 12, 2020", 2020),
        ("Josh Grossman, Head of Security Services\nJanuary 2020 - MyDevSecOps", 2020),
        ("Copyright, 1916, By Sam'l Gabriel Sons & Company", 1916),
        ("© Copyright IBM Corp. 2014. All rights reserved.", 2014),
        ("In March 2020 the team met.\nThe Copyright Act of 1976 applies.", None),  # prose and a law's year
        ("Table 14. School years 2003–04 through 2021–22", None),
    ],
)
def test_the_year_a_front_page_states(front: str, year: int | None) -> None:
    assert stated_year(front) == year


def test_a_pdf_date_and_titles_that_are_no_titles() -> None:
    assert year_of("D:20171211093519-06'00'") == 2017
    for name in (
        "FedRAMP_OSCAL_Vendor_Resources",
        "doi:10.1016/j.jhydrol.2005.01.006",
        "Page 1 of 205",
        "Abstract¶",
    ):
        assert real_title(name) == ""
    assert real_title("OWASP Top 10 - 2017") == "OWASP Top 10 - 2017"


def test_a_title_in_spaced_capitals_and_a_notices_page_copyright(tmp_path: Path) -> None:
    body = "The overview is structured around twelve tables drawn from the existing studies of the sector."
    report = tmp_path / "report.pdf"
    pdf = pdfium.PdfDocument.new()
    for texts in (
        [
            (72, 740, "CHAPTER 6 – AN OVERVIEW OF MARKET STRUCTURE BASED", "Helvetica-Bold", 12),
            (72, 716, "UPON EXISTING SOURCES", "Helvetica-Bold", 12),
            (72, 680, body, "Helvetica", 10),
        ],
        [(72, 700, "© Copyright Example Corp. 2014. All rights reserved.", "Helvetica", 9)],
    ):
        text_page(pdf, texts)
    pdf.save(report)
    pdf.close()
    found = read(report)
    assert (found.title, found.year) == (
        "CHAPTER 6 – AN OVERVIEW OF MARKET STRUCTURE BASED UPON EXISTING SOURCES",
        2014,
    )


def test_a_talk_made_from_a_template_is_titled_signed_and_dated_by_its_title_slide(tmp_path: Path) -> None:
    deck = Presentation()
    deck.core_properties.title, deck.core_properties.author = "Verification Standard 4.0", "Template Author"
    slide = deck.slides.add_slide(deck.slide_layouts[0])
    slide.shapes.title.text = "What is new in the Verification Standard 4.0"
    slide.placeholders[1].text = "Josh Grossman, Head of Security Services\n\nJanuary 2020 - MyDevSecOps"
    deck.save(tmp_path / "talk.pptx")
    found = read(tmp_path / "talk.pptx")
    assert (found.title, found.authors, found.year) == (
        "What is new in the Verification Standard 4.0",
        ["Josh Grossman"],
        2020,
    )
    deck = Presentation()
    deck.core_properties.title, deck.core_properties.author = "OWASP Top 10 - 2017", "Andrew van der Stock"
    deck.slides.add_slide(deck.slide_layouts[6]).shapes.add_textbox(
        0, 0, 100, 100
    ).text = "OWASP Top 10 - 2017"
    deck.save(tmp_path / "top10.pptx")
    found = read(tmp_path / "top10.pptx")
    assert (found.title, found.authors, found.year) == ("OWASP Top 10 - 2017", ["Andrew van der Stock"], 2017)


def test_a_word_files_cover_names_its_authors_before_its_core_properties(tmp_path: Path) -> None:
    paper = docx.Document()
    paper.core_properties.title, paper.core_properties.author = "Draft", "Last Editor"
    paper.add_paragraph().add_run("Enabling Applications via Conversation").font.size = docx.shared.Pt(20)
    paper.add_paragraph().add_run("Qingyun Wu, Gagan Bansal, Chi Wang").font.size = docx.shared.Pt(11)
    paper.add_paragraph("Abstract")
    paper.add_paragraph("We present a framework for applications built from agents that converse. " * 3)
    paper.save(tmp_path / "paper.docx")
    found = read(tmp_path / "paper.docx")
    assert (found.title, found.authors) == (
        "Enabling Applications via Conversation",
        ["Qingyun Wu", "Gagan Bansal", "Chi Wang"],
    )


def test_a_book_without_a_date_is_dated_by_its_title_pages_copyright(tmp_path: Path) -> None:
    book = tmp_path / "alice.epub"
    opf = (
        "<package xmlns='http://www.idpf.org/2007/opf' version='3.0'><metadata "
        "xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:title>Alice in Wonderland</dc:title>"
        "<dc:creator>Lewis Carroll</dc:creator></metadata><manifest><item id='t' href='title.xhtml' "
        "media-type='application/xhtml+xml'/></manifest><spine><itemref idref='t'/></spine></package>"
    )
    with zipfile.ZipFile(book, "w") as epub:
        epub.writestr("mimetype", "application/epub+zip")
        epub.writestr(
            "META-INF/container.xml",
            "<container xmlns='urn:oasis:names:tc:opendocument:xmlns:container' version='1.0'><rootfiles>"
            "<rootfile full-path='book.opf' media-type='application/oebps-package+xml'/></rootfiles></container>",
        )
        epub.writestr("book.opf", opf)
        epub.writestr(
            "title.xhtml",
            "<html xmlns='http://www.w3.org/1999/xhtml'><body><h1>Alice in Wonderland</h1>"
            "<p>Copyright, 1916, By Sam'l Gabriel Sons &amp; Company</p><p>Down the rabbit hole she went.</p>"
            "</body></html>",
        )
    found = read(book)
    assert (found.title, found.authors, found.year) == ("Alice in Wonderland", ["Lewis Carroll"], 1916)
