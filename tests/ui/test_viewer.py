"""The viewer in a real browser (Debian's Chromium) against the real server with auth on: ask about a PDF,
follow a citation's "Show the quote" link, and see the PDF open at the page the quote starts on (not the
passage's first page) with the quote marked in pdf.js's text layer; open an HTML and a DOCX citation the same way and see the quote marked in deepcite's rendering of
the stored text; a caller of another group gets the 404 and sees nothing of the document."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

import httpx
import pymupdf
import pytest
from web.standin import serve_app

from deepcite.config import Settings
from deepcite.ingest.chunker import chunk_reads
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.ingest.readers import read_file
from deepcite.models import Chunk
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app
from deepcite.server.ui import PDFJS_DIR
from ui.conftest import screenshot

FIXTURES = Path(__file__).parents[1] / "fixtures"
PDF = FIXTURES / "uploads" / "pasa-p1-2.pdf"
HTML = FIXTURES / "docs" / "flag_day.html"
DOCX = FIXTURES / "docs" / "paper-excerpt.docx"
TOKEN = "viewer-token"
OTHER = "other-token"
COLLECTION = "viewed"
# a report whose fourth sentence runs over the page break: one passage from page 1 to page 2
CROSSING_PAGES = (
    "Warfarin trials in atrial fibrillation enrolled patients over a decade. The trials compared warfarin with "
    "placebo in patients without valvular disease. Each trial followed its patients for strokes and major "
    "bleeding. The pooled analysis of these trials was published by the investigators",
    "in a single report with every trial's outcomes. Warfarin reduced the risk of stroke by 64 percent compared "
    "with placebo. Major bleeding on warfarin was rare in the trials of atrial fibrillation.",
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (PDFJS_DIR / "pdf.min.mjs").exists(), reason="pdf.js is not vendored: run make pdfjs"
    ),
]


def folded(text: str) -> str:
    """Letters and digits only, case and ligatures folded: how a PDF text layer and deepcite's reader
    can be compared (they differ in spaces, hyphenation at line ends and punctuation, not in words)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).lower() if ch.isalnum())


@pytest.fixture(scope="module")
def crossing_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-page PDF whose text runs on over the page break (:data:`CROSSING_PAGES`)."""
    path = tmp_path_factory.mktemp("ui-viewer-files") / "pooled-report.pdf"
    document = pymupdf.open()
    for text in CROSSING_PAGES:
        document.new_page().insert_textbox(pymupdf.Rect(72, 72, 520, 760), text, fontsize=11)
    document.save(str(path))
    document.close()
    return path


@pytest.fixture(scope="module")
def viewer_url(
    tmp_path_factory: pytest.TempPathFactory, crossing_pdf: Path, minilm: Embedder
) -> Iterator[str]:
    """A server with auth on: the PDF, HTML and DOCX fixtures and the crossing PDF shared with group
    cardiology only."""
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("ui-viewer"), api_keys=f"{TOKEN}:cardiology,{OTHER}:oncology"
    )
    settings = settings.model_copy(
        update={"server": settings.server.model_copy(update={"default_collection": COLLECTION})}
    )
    collection = open_collection(COLLECTION, settings, embedder=minilm)
    IngestPipeline(collection).ingest_files([PDF, HTML, DOCX, crossing_pdf], acl=["cardiology"])
    app = create_app(settings, store=collection.store, embedder=collection.embedder)
    with serve_app(lambda port: app) as port:
        yield f"http://127.0.0.1:{port}"
    collection.store.close()


def _ask(url: str, question: str) -> list[dict[str, Any]]:
    """The citations of an answer from the HTTP API, as the research page receives them."""
    response = httpx.post(
        url + "/api/unified-search",
        json={"query": question, "collection": COLLECTION, "max_hops": 1},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=120,
    )
    assert response.status_code == 200, response.text
    return response.json()["citations"]


def _view_href(citation: dict[str, Any]) -> str:
    """The viewer link the UI builds for a citation (common.js viewHref)."""
    doc = "/".join(url_quote(part, safe="") for part in citation["doc_id"].split("/"))
    fields = {"passage": citation["chunk_id"], "start": citation["quote_start"], "end": citation["quote_end"]}
    page = {"page": citation["quote_page"]} if citation["quote_page"] is not None else {}
    query = urlencode({**fields, **page})
    return f"/view/{COLLECTION}/{doc}?{query}"


def _with_token(page: Any, token: str) -> None:
    page.add_init_script(f"window.sessionStorage.setItem('deepcite.apiToken', '{token}')")


def test_a_pdf_citation_opens_at_its_page_with_the_quote_marked(page: Any, viewer_url: str) -> None:
    _with_token(page, TOKEN)
    page.goto(viewer_url + "/")
    page.wait_for_selector(f"#collection option[value='{COLLECTION}']", state="attached")
    page.select_option("#collection", COLLECTION)
    page.fill("#question", "What does the Crawler add to the paper queue?")
    page.fill("#max-hops", "1")
    page.click("#ask-button")
    page.wait_for_selector("#report:not([hidden])")
    page.wait_for_function("document.getElementById('ask-button').disabled === false")

    buttons = page.locator("#summary-text button.cite, #answer-text button.cite")
    assert buttons.count() > 0
    for i in range(buttons.count()):  # the first citation of the PDF that carries a quote
        buttons.nth(i).click()
        link = page.locator("#cite-pop .cite-pop-links a.view-link")
        quote = page.locator("#cite-pop .cite-pop-quote").inner_text()
        if link.count() and PDF.name in page.locator("#cite-pop .cite-pop-meta").inner_text() and quote:
            break
        page.keyboard.press("Escape")
    else:
        pytest.fail("no citation of the PDF carries a quote")
    meta = page.locator("#cite-pop .cite-pop-meta").inner_text()
    cited_page = int(re.search(r"p\. (\d)", meta).group(1))  # type: ignore[union-attr]
    assert link.inner_text().startswith("Show the quote in " + PDF.name)
    quote_page = int(re.search(r" at p\. (\d+)$", link.inner_text()).group(1))  # type: ignore[union-attr]
    assert cited_page <= quote_page <= cited_page + ("–" in meta)

    with page.context.expect_page() as opened:  # a new tab that keeps the token (rel=opener)
        link.click()
    tab = opened.value
    tab.wait_for_selector("#viewer[data-ready]")
    assert tab.get_attribute("#viewer", "data-ready") == "pdf", tab.inner_text("#viewer-status")
    highlighted = tab.get_attribute("#viewer", "data-highlight") or ""
    assert folded(highlighted) == folded(quote)
    assert tab.inner_text("#viewer-quote") == quote
    marked_pages = tab.eval_on_selector_all(
        ".viewer-page mark.quote", "marks => marks.map(m => Number(m.closest('.viewer-page').dataset.page))"
    )
    opened_pages = tab.eval_on_selector_all(".viewer-page", "pages => pages.map(p => Number(p.dataset.page))")
    assert opened_pages[0] == quote_page  # the viewer opens at the quote's page
    assert marked_pages and marked_pages[0] == quote_page
    assert tab.locator(".viewer-page canvas").count() >= 1  # the page itself is drawn, not only its text
    screenshot(tab, "viewer-pdf.png", full_page=False)


def _crossing_chunk(pdf: Path) -> Chunk:
    """The crossing PDF's passage that starts on page 1 and ends on page 2, as the server stored it."""
    settings = Settings()  # the fixture's reader and chunker settings: the same chunks, the same ids
    read = read_file(pdf, doc_id=pdf.name, name=pdf.name, settings=settings.ingest)
    (chunks,) = chunk_reads(read.documents, settings.chunker).values()
    crossing = next(c for c in chunks if c.page == 1 and c.page_end == 2)
    assert crossing.sentence_pages is not None
    return crossing


def _pages_shown(page: Any) -> tuple[list[int], list[int]]:
    """The PDF pages the viewer drew, and the page of each quote mark, in order."""
    drawn = page.eval_on_selector_all(".viewer-page", "pages => pages.map(p => Number(p.dataset.page))")
    marked = page.eval_on_selector_all(
        ".viewer-page mark.quote", "marks => marks.map(m => Number(m.closest('.viewer-page').dataset.page))"
    )
    return drawn, marked


def _open_quote(page: Any, viewer_url: str, chunk: Any, start: int, end: int) -> int:
    """Open the PDF viewer at a citation of ``chunk``'s text from ``start`` to ``end``, as the UI links it;
    the page the citation names (its quote's page)."""
    citation = {
        "doc_id": chunk.doc_id,
        "chunk_id": chunk.chunk_id,
        "quote_start": start,
        "quote_end": end,
        "quote_page": chunk.page_at(start),
    }
    _with_token(page, TOKEN)
    page.goto(viewer_url + _view_href(citation))
    page.wait_for_selector("#viewer[data-ready]")
    assert page.get_attribute("#viewer", "data-ready") == "pdf", page.inner_text("#viewer-status")
    return citation["quote_page"]


def test_a_quote_on_the_second_page_of_a_passage_opens_at_the_second_page(
    page: Any, viewer_url: str, crossing_pdf: Path
) -> None:
    crossing = _crossing_chunk(crossing_pdf)
    assert crossing.sentence_pages is not None
    assert crossing.sentence_pages[0] == 1 and crossing.sentence_pages[-1] == 2
    start, end = crossing.spans()[-1]  # the passage's last sentence, on page 2
    assert _open_quote(page, viewer_url, crossing, start, end) == 2
    drawn, marked = _pages_shown(page)
    assert drawn == [2]  # not the passage's first page
    assert marked and set(marked) == {2}
    highlighted = page.get_attribute("#viewer", "data-highlight") or ""
    assert folded(highlighted) == folded(crossing.text[start:end])


def test_a_quote_over_a_page_break_opens_at_its_first_page_marked_on_both(
    page: Any, viewer_url: str, crossing_pdf: Path
) -> None:
    crossing = _crossing_chunk(crossing_pdf)
    assert crossing.sentence_pages is not None
    second = crossing.sentence_pages.index(2)
    start = crossing.spans()[second - 1][0]  # the sentence over the break through page 2's last
    end = crossing.spans()[-1][1]
    assert _open_quote(page, viewer_url, crossing, start, end) == 1
    drawn, marked = _pages_shown(page)
    assert drawn == [1, 2]
    assert marked[0] == 1 and marked[-1] == 2  # one mark over the break, not the part on one page
    highlighted = folded(page.get_attribute("#viewer", "data-highlight") or "")
    quote = folded(crossing.text[start:end])
    assert highlighted.startswith(quote[:40]) and highlighted.endswith(quote[-40:])


def test_on_a_phone_the_pdf_page_fits_the_screen_with_the_quote_in_view(
    phone: Any, viewer_url: str, crossing_pdf: Path
) -> None:
    """At 375 px the page is drawn to the screen's width (it was 908 px wide, the quote cut off)."""
    crossing = _crossing_chunk(crossing_pdf)
    start, end = crossing.spans()[-1]
    _open_quote(phone, viewer_url, crossing, start, end)
    width = phone.viewport_size["width"]
    page_box = phone.locator(".viewer-page").first.bounding_box()
    assert page_box["x"] >= 0 and page_box["x"] + page_box["width"] <= width, page_box
    assert phone.evaluate("document.documentElement.scrollWidth") <= width  # nothing to scroll sideways
    marks = phone.eval_on_selector_all(
        ".viewer-page mark.quote",
        "marks => marks.map(m => { const r = m.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })",
    )
    assert marks
    left, right, top, bottom = marks[0]
    assert left >= 0 and right <= width and top >= 0 and bottom <= phone.viewport_size["height"], marks[0]
    screenshot(phone, "viewer-pdf-phone.png", full_page=False)


@pytest.mark.parametrize(
    ("fixture", "question"),
    [
        (HTML, "When is Flag Day celebrated and what does it commemorate?"),
        (DOCX, "Why are chemists skeptical of deep learning in decision making?"),
    ],
)
def test_an_html_or_docx_citation_shows_the_stored_text_with_the_quote_marked(
    page: Any, viewer_url: str, fixture: Path, question: str
) -> None:
    citations = [c for c in _ask(viewer_url, question) if c["file"] == fixture.name and c["quote"]]
    assert citations, f"no citation of {fixture.name} with a quote"
    citation = citations[0]
    _with_token(page, TOKEN)
    page.goto(viewer_url + _view_href(citation))
    page.wait_for_selector("#viewer[data-ready]")
    assert page.get_attribute("#viewer", "data-ready") == "text", page.inner_text("#viewer-status")
    assert page.get_attribute("#viewer", "data-highlight") == citation["quote"]
    cited = page.locator(f".passage.cited[data-chunk-id='{citation['chunk_id']}']")
    assert cited.locator("mark.quote").inner_text() == citation["quote"]
    assert page.locator(".passage").count() >= 1
    screenshot(page, f"viewer-{fixture.suffix.lstrip('.')}.png", full_page=False)


def test_another_groups_caller_sees_nothing_of_the_document(page: Any, viewer_url: str) -> None:
    citation = next(
        c for c in _ask(viewer_url, "What does the Crawler add to the paper queue?") if c["quote"]
    )
    view = httpx.get(
        viewer_url + "/api/document-view",
        params={"collection": COLLECTION, "document": citation["doc_id"], "passage": citation["chunk_id"]},
        headers={"Authorization": f"Bearer {OTHER}"},
    )
    assert view.status_code == 404
    assert citation["text"][:40] not in view.text
    _with_token(page, OTHER)
    page.goto(viewer_url + _view_href(citation))
    page.wait_for_selector("#viewer[data-ready='error']")
    assert "not in the collection" in page.inner_text("#viewer-status")
    assert "removed after the answer was written, or it is not shared with you" in page.inner_text(
        "#viewer-status"
    )
    assert page.locator(".passage, .viewer-page").count() == 0
