"""Documents that change or go after an answer cites them, in a real browser (Debian's Chromium) against the
real server:

- a re-run's changed passages show their text before and after, with their page (what changed marked), and a
  removed one its text before;
- a citation of the earlier answer to a removed document says so in a user's words and shows the passage as
  cited; one to a changed document says it changed, shows the passage as cited and offers the current
  version, which opens with the passage now at that place.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pymupdf
import pytest
from web.standin import serve_app

from deepcite.config import ServerSettings, Settings
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app
from ui.conftest import screenshot

pytestmark = pytest.mark.slow

COLLECTION = "trials"
QUESTION = "Does warfarin or aspirin reduce the risk of stroke in atrial fibrillation?"
WARFARIN_P2 = (
    "Warfarin reduced the risk of stroke in atrial fibrillation by 64 percent compared with placebo. "
    "Major bleeding on warfarin was rare in the trials of atrial fibrillation."
)
WARFARIN_P2_NOW = (
    "Warfarin reduced the risk of stroke in atrial fibrillation by 39 percent compared with placebo. "
    "Major bleeding on warfarin was rare in the trials of atrial fibrillation."
)
ASPIRIN = (
    "Aspirin reduced the risk of stroke in atrial fibrillation by 19 percent compared with placebo. "
    "Aspirin is weaker than warfarin for stroke prevention in atrial fibrillation."
)


def pdf(path: Path, pages: list[str]) -> Path:
    """A PDF with one text block per page (the text wrapped into the page's box)."""
    document = pymupdf.open()
    for text in pages:
        page = document.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 520, 760), text, fontsize=11)
    document.save(str(path))
    document.close()
    return path


def upload(url: str, *files: Path) -> None:
    """Upload ``files`` to the collection and wait until the ingest job is done."""
    parts = [("files", (f.name, f.read_bytes(), "application/pdf")) for f in files]
    response = httpx.post(f"{url}/api/collections/{COLLECTION}/documents", files=parts, timeout=60)
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    for _ in range(600):
        job = httpx.get(f"{url}/api/jobs/{job_id}", timeout=60).json()
        if job["state"] in ("done", "failed"):
            assert job["state"] == "done", job
            return
        time.sleep(0.5)
    raise AssertionError(f"the upload job {job_id} did not finish")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[tuple[str, Path]]:
    data_dir = tmp_path_factory.mktemp("ui-changed")
    settings = Settings(data_dir=data_dir, server=ServerSettings(default_collection=COLLECTION))
    collection = open_collection(COLLECTION, settings, embedder=minilm)
    app = create_app(settings, store=collection.store, embedder=collection.embedder)
    files = tmp_path_factory.mktemp("ui-changed-files")
    with serve_app(lambda port: app) as port:
        url = f"http://127.0.0.1:{port}"
        upload(
            url,
            pdf(files / "warfarin.pdf", ["Warfarin trials in atrial fibrillation: methods.", WARFARIN_P2]),
            pdf(files / "aspirin.pdf", [ASPIRIN]),
        )
        yield url, files
    collection.store.close()


def saved(url: str, answer_id: str) -> dict[str, Any]:
    response = httpx.get(f"{url}/api/answers/{answer_id}", timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


@dataclass
class Earlier:
    """An answer citing both documents, given before warfarin.pdf changed and aspirin.pdf was removed."""

    url: str
    answer_id: str
    by_doc: dict[str, dict[str, Any]]  # the cited citation of each document


@pytest.fixture(scope="module")
def earlier(served: tuple[str, Path]) -> Earlier:
    url, files = served
    response = httpx.post(
        f"{url}/api/unified-search",
        json={"query": QUESTION, "collection": COLLECTION, "max_hops": 1},
        timeout=600,
    )
    assert response.status_code == 200, response.text
    answer_id = response.json()["request_id"]
    first = saved(url, answer_id)["response"]
    cited = set(first["citation_check"]["cited_ids"])
    by_doc = {c["doc_id"]: c for c in first["citations"] if c["id"] in cited}
    assert {"warfarin.pdf", "aspirin.pdf"} <= set(by_doc), sorted(by_doc)
    assert by_doc["warfarin.pdf"]["quote_page"] == 2
    # the collection changes after the answer: warfarin.pdf's page 2 says 39 percent, aspirin.pdf goes
    upload(
        url,
        pdf(files / "warfarin.pdf", ["Warfarin trials in atrial fibrillation: methods.", WARFARIN_P2_NOW]),
    )
    deleted = httpx.delete(f"{url}/api/collections/{COLLECTION}/documents/aspirin.pdf", timeout=60)
    assert deleted.status_code == 200, deleted.text
    return Earlier(url=url, answer_id=answer_id, by_doc=by_doc)


def test_a_reruns_changed_passages_show_their_text_before_and_after_with_the_page(
    page: Any, earlier: Earlier
) -> None:
    page.goto(f"{earlier.url}/answers/{earlier.answer_id}")
    page.wait_for_selector("#summary:not([hidden])")
    page.locator(f"#past-list li[data-answer-id='{earlier.answer_id}'] .past-rerun").click()
    page.wait_for_selector("#changes:not([hidden])")
    page.wait_for_function("document.activeElement && document.activeElement.id === 'changes'")
    changed = page.locator("#changes-list li[data-status='changed']").filter(has_text="warfarin")
    before, after = changed.locator(".change-before"), changed.locator(".change-after")
    assert before.locator(".change-label").inner_text() == "Before, p. 2"
    assert after.locator(".change-label").inner_text() == "After, p. 2"
    assert " ".join(before.locator("blockquote").inner_text().split()) == " ".join(
        earlier.by_doc["warfarin.pdf"]["text"].split()
    )
    assert "by 64 percent" in before.inner_text() and "by 39 percent" in after.inner_text()
    assert before.locator("del").inner_text() == "64" and after.locator("ins").inner_text() == "39"
    removed = page.locator("#changes-list li[data-status='removed']").filter(has_text="aspirin")
    assert removed.locator(".change-label").inner_text().startswith("Before")
    assert "by 19 percent" in removed.locator("blockquote").inner_text()
    screenshot(page, "rerun-changes.png", full_page=False)


def test_a_citation_to_a_removed_or_changed_document_says_so_and_offers_the_current_version(
    page: Any, earlier: Earlier
) -> None:
    page.goto(f"{earlier.url}/answers/{earlier.answer_id}")
    page.wait_for_selector("#sources:not([hidden])")

    def view_link(doc: str) -> str:
        cite = earlier.by_doc[doc]["id"]
        href = page.locator(f"#source-list li[data-source-id='{cite}'] a.view-link").get_attribute("href")
        assert f"answer={earlier.answer_id}" in href and f"cite={cite}" in href
        return href

    removed_href, changed_href = view_link("aspirin.pdf"), view_link("warfarin.pdf")
    page.goto(removed_href)
    page.wait_for_selector("#viewer[data-ready]")
    assert page.get_attribute("#viewer", "data-ready") == "removed", page.inner_text("#viewer-status")
    notice = page.locator("#viewer-notice").inner_text().lower()
    assert "this document was removed from the collection after the answer was written" in notice
    main = page.inner_text("main")
    assert "doc_id" not in main and "no document with that id" not in main
    assert page.locator(".as-cited mark.quote").inner_text() == earlier.by_doc["aspirin.pdf"]["quote"]

    page.goto(changed_href)
    page.wait_for_selector("#viewer[data-ready]")
    assert page.get_attribute("#viewer", "data-ready") == "changed", page.inner_text("#viewer-status")
    assert "This document changed after the answer was written" in page.locator("#viewer-notice").inner_text()
    assert page.locator(".as-cited mark.quote").inner_text() == earlier.by_doc["warfarin.pdf"]["quote"]
    screenshot(page, "viewer-changed.png", full_page=False)
    page.locator("#viewer-notice a.current-version").click()
    # The link loads a new page: wait for a selector (which survives the navigation), not for a
    # script that reads the old or half-parsed document.
    page.wait_for_selector("#viewer[data-ready='pdf'], #viewer[data-ready='text']")
    assert page.locator("#viewer-notice").is_hidden()
    shown = page.inner_text("#viewer-pages") if page.locator("#viewer-pages").is_visible() else ""
    shown += page.inner_text("#viewer-text") if page.locator("#viewer-text").is_visible() else ""
    assert "39 percent" in shown and "64 percent" not in shown


def test_the_original_file_of_a_removed_document_says_so_in_a_readers_words(
    page: Any, earlier: Earlier
) -> None:
    page.goto(f"{earlier.url}/answers/{earlier.answer_id}")
    page.wait_for_selector("#sources:not([hidden])")
    cite = earlier.by_doc["aspirin.pdf"]["id"]
    href = page.locator(f"#source-list li[data-source-id='{cite}'] a.file-link").get_attribute("href")
    response = page.goto(href)
    assert response is not None and response.status == 404
    main = page.inner_text("main")
    assert "This file is not available" in main
    assert "not in the collection any more" in main
    assert "doc_id" not in main and "{" not in main
    page.locator("main a").click()
    page.wait_for_url(f"**/?collection={COLLECTION}")
    # an API caller (no text/html in Accept) still gets the JSON error
    api = httpx.get(href.split("#")[0], timeout=60)
    assert api.status_code == 404 and api.json()["success"] is False
