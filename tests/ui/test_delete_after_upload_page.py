"""Delete after a UI upload, in a real browser (Debian's Chromium) against the real server (issue 46): two files
uploaded through the "Add documents" panel (one a 16-byte text file named ``broken.pdf``), a second upload by drag
and drop, a question and its re-run, another process (a CLI ``collections check``) trying the collection the
server holds, then the cited document removed with the page's "Remove document": the DELETE answers 200 and the
collection menu's passage count drops by what was deleted (it answered 500 and kept counting before 5173249)."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from collection.mp_helpers import cli
from web.standin import serve_app

from deepcite.config import ServerSettings, Settings
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app

UPLOADS = Path(__file__).parents[1] / "fixtures" / "uploads"
PDF = UPLOADS / "pasa-p1-2.pdf"
COLLECTION = "uptest"
QUESTION = "What does the Crawler add to the paper queue?"
BROKEN = b"this is not pdf\n"  # 16 bytes

pytestmark = pytest.mark.slow

DROP_FILE = """
([name, encoded, type]) => {
  const bytes = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], name, { type }));
  const zone = document.getElementById("drop-zone");
  for (const kind of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(new DragEvent(kind, { dataTransfer: data, bubbles: true, cancelable: true }));
  }
}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[tuple[str, Path]]:
    """A server of its own (auth off, no collection yet) and its data dir."""
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("ui-delete-after-upload"),
        server=ServerSettings(default_collection=COLLECTION, warm_start=False),
    )
    with serve_app(lambda port: create_app(settings, embedder=minilm)) as port:
        yield f"http://127.0.0.1:{port}", settings.data_dir


def _passages(page: Any) -> int:
    """The collection menu's passage count of the collection: its option reads 'uptest (N passages)'."""
    label = page.locator(f"#collection option[value='{COLLECTION}']").inner_text()
    found = re.search(r"\((\d+) passages?\)", label)
    assert found, label
    return int(found.group(1))


def _uploaded(page: Any, name: str, status: str) -> None:
    page.wait_for_selector(f"#upload-list li[data-file='{name}'] .up-status[data-status='{status}']")
    page.wait_for_function("document.getElementById('upload-status').textContent.startsWith('Done')")


def test_a_document_uploaded_through_the_ui_is_removed_and_the_count_drops(
    page: Any, served: tuple[str, Path], tmp_path: Path
) -> None:
    url, data_dir = served
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(BROKEN)
    page.goto(url + "/")
    page.click("#add-documents > summary")
    page.fill("#upload-collection", COLLECTION)
    page.set_input_files("#upload-files", [str(PDF), str(broken)])
    page.click("#upload-button")
    _uploaded(page, PDF.name, "ingested")
    page.wait_for_selector("#upload-list li[data-file='broken.pdf'] .up-status[data-status='skipped']")
    page.wait_for_function(
        f"/\\(\\d+ passages?\\)/.test(document.querySelector(\"#collection option[value='{COLLECTION}']\")"
        "?.textContent || '')"
    )
    first = _passages(page)

    page.evaluate(
        DROP_FILE, ["pasa-dropped.pdf", base64.b64encode(PDF.read_bytes()).decode(), "application/pdf"]
    )
    page.click("#upload-button")
    _uploaded(page, "pasa-dropped.pdf", "ingested")
    # the menu counts the second upload too (it refreshes after the job: reading it sooner raced with that)
    page.wait_for_function(
        f"!document.querySelector(\"#collection option[value='{COLLECTION}']\").textContent.includes('({first} ')"
    )
    before = _passages(page)
    assert before > first

    page.fill("#question", QUESTION)
    page.fill("#max-hops", "1")
    page.click("#ask-button")
    page.wait_for_selector("#sources:not([hidden])")
    page.wait_for_function("document.getElementById('ask-button').disabled === false")
    page.locator("#past-list li .past-rerun").first.click()  # the saved answer asked again
    page.wait_for_function("document.getElementById('status').textContent === 'Re-run done.'")

    other = cli(data_dir, "collections", "check", COLLECTION)  # another process: refused, and harmless
    assert other.returncode == 2 and "is open in" in other.stderr, other.stderr

    cited = page.locator("#source-list li", has=page.locator("button.remove-document")).first
    source = page.locator(f"#source-list li[data-source-id='{cited.get_attribute('data-source-id')}']")
    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_response(lambda r: r.request.method == "DELETE") as deleting:
        source.locator("button.remove-document").click()
    deleted = deleting.value
    assert deleted.status == 200, deleted.text()
    gone = deleted.json()["chunks_deleted"]
    source.locator(".removed-notice").wait_for()
    page.wait_for_function(
        f"!document.querySelector(\"#collection option[value='{COLLECTION}']\").textContent.includes('({before} ')"
    )
    assert gone > 0 and _passages(page) == before - gone
