"""Title, authors and year as a file states them, read the general way (issue 47): a PDF's author grid from the
first page's layout, a web page's byline without the words around it, a year stated where the readers look."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from deepcite.config import IngestSettings
from deepcite.ingest.readers import read_file
from deepcite.ingest.readers.bibliographic import byline_names, copyright_line_year
from deepcite.models import Document

Text = tuple[float, float, str, str, float]  # x, y, text, standard font, size


def text_pdf(path: Path, texts: list[Text]) -> Path:
    """A one-page PDF written by PDFium with ``texts`` placed where they say (one of PDFium's standard fonts)."""
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(612, 792)
    fonts: dict[str, object] = {}
    for x, y, text, font, size in texts:
        fonts.setdefault(font, pdfium_c.FPDFText_LoadStandardFont(pdf.raw, font.encode()))
        obj = pdfium_c.FPDFPageObj_CreateTextObj(pdf.raw, fonts[font], size)
        data = (text + "\x00").encode("utf-16-le")
        pdfium_c.FPDFText_SetText(obj, (ctypes.c_ushort * (len(data) // 2)).from_buffer_copy(data))
        pdfium_c.FPDFPageObj_Transform(obj, 1, 0, 0, 1, x, y)
        pdfium_c.FPDFPage_InsertObject(page.raw, obj)
    pdfium_c.FPDFPage_GenerateContent(page.raw)
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
