"""The "Add documents" panel and page-cited popovers in a real browser (Debian's Chromium) against the real
server: upload a real PDF (a truncated one, and a text file named .pdf) through the panel, see each file's
stages from the job's events (reading, read with its passages to write, then ingested with the passages
written, or skipped with the reason), then ask about the PDF and open a citation's popover: file, page, and a
link to /files/...#page=N that serves the original."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web.standin import serve_app

from deepcite.config import Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app
from ui.conftest import keep_for_readme, screenshot

UPLOADS = Path(__file__).parents[1] / "fixtures" / "uploads"
PDF = UPLOADS / "pasa-p1-2.pdf"
TRUNCATED = UPLOADS / "truncated.pdf"
COLLECTION = "papers-ui"
QUESTION = "What does the Crawler add to the paper queue?"

pytestmark = pytest.mark.slow

DROP_MARKDOWN = """
([name, text]) => {
  const data = new DataTransfer();
  data.items.add(new File([text], name, { type: "text/markdown" }));
  const zone = document.getElementById("drop-zone");
  for (const type of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
  }
}
"""


BROKEN = b"this is not pdf\n"  # 16 bytes of text named broken.pdf
# every status each file's row shows, in order: each render replaces the row's status span, so the spans added
# are its history even when several events arrive at once
RECORD_STATUSES = """
() => {
  window.uploadStatuses = {};
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (!node.classList || !node.classList.contains("up-status")) continue;
        const seen = (window.uploadStatuses[record.target.dataset.file] ||= []);
        seen.push([node.dataset.status, node.textContent]);
      }
    }
  }).observe(document.getElementById("upload-list"), { childList: true, subtree: true });
}
"""


def _statuses(page: Any, name: str) -> list[str]:
    """The statuses the file's row showed, in order, each as 'status: text', repeats dropped."""
    seen = [f"{status}: {text}" for status, text in page.evaluate(f"window.uploadStatuses[{name!r}]")]
    return [s for n, s in enumerate(seen) if n == 0 or seen[n - 1] != s]


def _status(page: Any, name: str) -> Any:
    return page.locator(f"#upload-list li[data-file='{name}'] .up-status")


@pytest.fixture(scope="module")
def docs_url(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[str]:
    """A server of its own (auth off, no collection yet), so the uploads leave the shared app alone."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("ui-docs"))
    settings = settings.model_copy(
        update={"server": settings.server.model_copy(update={"default_collection": COLLECTION})}
    )
    with serve_app(lambda port: create_app(settings, embedder=minilm)) as port:
        yield f"http://127.0.0.1:{port}"


def _open_panel(page: Any, url: str) -> None:
    page.goto(url + "/")
    page.click("#add-documents > summary")
    page.fill("#upload-collection", COLLECTION)


def test_upload_through_the_panel_then_a_page_cited_popover(page: Any, docs_url: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(BROKEN)
    _open_panel(page, docs_url)
    page.set_input_files("#upload-files", [str(PDF), str(TRUNCATED), str(broken)])
    assert _status(page, PDF.name).get_attribute("data-status") == "ready"
    assert page.inner_text("#upload-button") == "Add 3 documents"
    page.evaluate(RECORD_STATUSES)
    page.click("#upload-button")

    page.wait_for_function("document.getElementById('upload-status').textContent.startsWith('Done')")
    assert "1 ingested, 2 skipped" in page.inner_text("#upload-status")
    # each file's own stages, not one 'Reading…' for all: read, its passages waiting, then written
    pdf = _statuses(page, PDF.name)
    stages = [s.split(":")[0] for s in pdf]
    assert stages[-3:] == ["reading", "read", "ingested"], pdf
    assert re.search(r"^read: Read: 2 pages, \d+ passages to embed and write…$", pdf[-2]), pdf
    assert re.search(r"^ingested: Ingested: 2 pages, \d+ passages written$", pdf[-1]), pdf
    truncated = _statuses(page, TRUNCATED.name)
    assert [s.split(":")[0] for s in truncated][-2:] == ["reading", "skipped"], truncated
    assert "readable PDF" in truncated[-1] or "damaged" in truncated[-1]
    not_pdf = _statuses(page, broken.name)
    assert [s.split(":")[0] for s in not_pdf][-2:] == ["reading", "skipped"], not_pdf
    assert "named .pdf but is not a PDF" in not_pdf[-1], not_pdf
    keep_for_readme(screenshot(page, "documents-panel.png"), "screenshot-documents.png")

    # the research form now lists the new collection, selected
    page.wait_for_selector(f"#collection option[value='{COLLECTION}']", state="attached")
    assert page.eval_on_selector("#collection", "s => s.value") == COLLECTION
    page.fill("#question", QUESTION)
    page.fill("#max-hops", "1")
    page.click("#ask-button")
    page.wait_for_selector("#report:not([hidden])")
    page.wait_for_function("document.getElementById('ask-button').disabled === false")

    buttons = page.locator("#summary-text button.cite, #answer-text button.cite")
    assert buttons.count() > 0
    seen_pages = set()
    for i in range(buttons.count()):
        buttons.nth(i).click()
        pop = page.locator("#cite-pop")
        meta = pop.locator(".cite-pop-meta").inner_text()
        link = pop.locator(".cite-pop-links a.file-link")
        assert link.count() == 1, meta
        links = pop.locator(".cite-pop-links").inner_text()  # the links' texts never run together
        assert re.search(rf"^Show the quote in {re.escape(PDF.name)} at p\. \d · Original file$", links), (
            links
        )
        href = link.get_attribute("href")
        match = re.search(rf"/files/{COLLECTION}/{re.escape(PDF.name)}#page=(\d)$", href or "")
        assert match, href
        shown = re.search(rf"{re.escape(PDF.name)} · p\. (\d)(?:–(\d))?", meta)
        assert shown, meta  # the passage's pages: "p. 1", or "p. 1–2" across the break
        first, last = int(shown.group(1)), int(shown.group(2) or shown.group(1))
        assert first <= int(match.group(1)) <= last, (meta, href)  # opens at its quote's page, inside them
        seen_pages.add(int(match.group(1)))
        if "paper queue" in pop.locator(".cite-pop-text").inner_text():
            assert match.group(1) == "2" or "–2" in meta  # the phrase is on page 2 only
        page.keyboard.press("Escape")
    assert seen_pages <= {1, 2}
    buttons.first.click()
    screenshot(page, "citation-page-popover.png", full_page=False)
    href = page.locator("#cite-pop .cite-pop-links a.file-link").get_attribute("href")
    response = page.request.get(href)  # the link serves the original (the #page fragment stays client-side)
    assert response.status == 200
    assert response.headers["content-type"] == "application/pdf"
    assert response.body() == PDF.read_bytes()


def test_a_dropped_file_is_listed_and_ingested(page: Any, docs_url: str) -> None:
    _open_panel(page, docs_url)
    page.evaluate(DROP_MARKDOWN, ["dropped-note.md", "# Dropped note\n\nQuorvane keeps drop tests honest.\n"])
    assert _status(page, "dropped-note.md").get_attribute("data-status") == "ready"
    page.click("#upload-button")
    page.wait_for_selector("#upload-list li[data-file='dropped-note.md'] .up-status[data-status='ingested']")
    assert (
        _status(page, "dropped-note.md").inner_text() == "Ingested: 1 passage written"
    )  # one, not "1 passages"


TOKEN = "ui-token"


@pytest.fixture(scope="module")
def auth_url(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[str]:
    """A server with auth on (one token, group cardiology) over the fixture PDF shared with cardiology."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("ui-auth"), api_keys=f"{TOKEN}:cardiology")
    settings = settings.model_copy(
        update={"server": settings.server.model_copy(update={"default_collection": "papers"})}
    )
    collection = open_collection("papers", settings, embedder=minilm)
    IngestPipeline(collection).ingest_files([PDF], acl=["cardiology"])
    app = create_app(settings, store=collection.store, embedder=collection.embedder)
    with serve_app(lambda port: app) as port:
        yield f"http://127.0.0.1:{port}"
    collection.store.close()


def test_with_auth_on_the_file_link_opens_the_original_with_the_token(page: Any, auth_url: str) -> None:
    page.add_init_script(f"window.sessionStorage.setItem('deepcite.apiToken', '{TOKEN}')")
    page.goto(auth_url + "/")
    page.wait_for_selector("#collection option[value='papers']", state="attached")
    page.fill("#question", QUESTION)
    page.fill("#max-hops", "1")
    page.click("#ask-button")
    page.wait_for_selector("#report:not([hidden])")
    page.locator("#summary-text button.cite").first.click()
    link = page.locator("#cite-pop .cite-pop-links a.file-link")
    href = link.get_attribute("href")
    page_no = re.search(r"#page=(\d)$", href or "")
    assert page_no, href
    assert page.request.get(href).status == 401  # a plain link cannot carry the bearer token
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_url(re.compile(r"^blob:.*#page=" + page_no.group(1) + "$"))
