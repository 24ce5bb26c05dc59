"""Removing a document from the research page, in a real browser against the real server: a cited source's
"Remove document" asks first (nothing happens when the reader declines), then deletes the document through
``DELETE /api/collections/{c}/documents/{id}``; the answer's sources of that document say it was removed, and
its quote opens in the viewer with the removal notice."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from web.standin import serve_app

from deepcite.config import ServerSettings, Settings
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app
from ui.conftest import screenshot
from ui.test_changed_sources import ASPIRIN, COLLECTION, QUESTION, WARFARIN_P2, pdf, upload

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("ui-remove")
    settings = Settings(data_dir=data_dir, server=ServerSettings(default_collection=COLLECTION))
    collection = open_collection(COLLECTION, settings, embedder=minilm)
    app = create_app(settings, store=collection.store, embedder=collection.embedder)
    files = tmp_path_factory.mktemp("ui-remove-files")
    with serve_app(lambda port: app) as port:
        url = f"http://127.0.0.1:{port}"
        upload(url, pdf(files / "warfarin.pdf", [WARFARIN_P2]), pdf(files / "aspirin.pdf", [ASPIRIN]))
        yield url
    collection.store.close()


def stored(url: str, doc_id: str) -> bool:
    """Whether the collection still holds the document's original file."""
    return httpx.get(f"{url}/files/{COLLECTION}/{doc_id}", timeout=60).status_code == 200


def test_a_cited_document_is_removed_after_a_confirmation(page: Any, served: str) -> None:
    page.goto(f"{served}/?collection={COLLECTION}")
    page.wait_for_selector(f"#collection option[value='{COLLECTION}']", state="attached")
    page.fill("#question", QUESTION)
    page.fill("#max-hops", "1")
    page.click("#ask-button")
    page.wait_for_selector("#sources:not([hidden])")
    page.wait_for_function("document.getElementById('ask-button').disabled === false")
    aspirin = page.locator("#source-list li", has=page.locator("a.view-link", has_text="aspirin.pdf")).first
    button = aspirin.locator("button.remove-document")
    assert button.get_attribute("aria-label").startswith("Remove document: ")

    asked: list[str] = []

    def decline(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", decline)
    button.click()
    page.wait_for_function("true")  # the dialog's handler has run
    assert asked and "aspirin.pdf" in asked[0] and COLLECTION in asked[0]
    assert stored(served, "aspirin.pdf")
    assert aspirin.locator(".removed-notice").count() == 0

    page.once("dialog", lambda dialog: dialog.accept())
    button.click()
    aspirin.locator(".removed-notice").wait_for()
    assert "removed from the collection" in aspirin.locator(".removed-notice").inner_text()
    assert aspirin.locator("button.remove-document").count() == 0
    assert "was removed from " + COLLECTION in page.inner_text("#status")
    assert not stored(served, "aspirin.pdf") and stored(served, "warfarin.pdf")
    screenshot(page, "remove-document.png", full_page=False)

    # the answer's quote of it opens in the viewer, which says the document was removed
    href = aspirin.locator("a.view-link").get_attribute("href")
    assert "answer=" in href
    page.goto(href)
    page.wait_for_selector("#viewer[data-ready]")
    assert page.get_attribute("#viewer", "data-ready") == "removed", page.inner_text("#viewer-status")
