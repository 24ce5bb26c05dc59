"""The research page's "Download report" in a real browser: the answer as Markdown, and its references
as BibTeX and RIS, from the real server over a real index."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from ui.conftest import LiveApp
from ui.test_research_page import ask, wait_for_answer

pytestmark = pytest.mark.slow


def download(page: Any, fmt: str) -> tuple[str, str]:
    """Choose ``fmt``, click "Download report"; the suggested file name and the file's text."""
    page.select_option("#report-format", fmt)
    with page.expect_download() as info:
        page.click("#download-report")
    item = info.value
    return item.suggested_filename, Path(item.path()).read_text(encoding="utf-8")


def test_download_report_as_markdown_bibtex_and_ris(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app)
    wait_for_answer(page)
    assert page.locator("#download-report").is_visible()
    summary_ids = {
        int(i) for i in re.findall(r"\d+", " ".join(page.locator("#summary-text .cite").all_inner_texts()))
    }

    name, markdown = download(page, "markdown")
    assert name.startswith("deepcite-does-atrial-fibrillation") and name.endswith(".md")
    for heading in ("## Summary", "## Answer", "## References", "## Citation check"):
        assert heading in markdown
    references = markdown.split("## References", 1)[1].split("## Citation check", 1)[0]
    listed = {int(n) for n in re.findall(r"^(\d+)\. ", references, flags=re.M)}
    assert summary_ids and summary_ids <= listed  # every id the summary cites is in the list
    assert "https://pubmed.ncbi.nlm.nih.gov/" in references
    assert re.search(r"\d+ sentences checked: \d+ cited", markdown)

    name, bibtex = download(page, "bibtex")
    assert name.endswith(".bib") and bibtex.startswith("@")
    assert re.search(r"^\s+pmid = \{\d+\}", bibtex, flags=re.M)

    name, ris = download(page, "ris")
    assert name.endswith(".ris") and ris.startswith("TY  - ") and ris.rstrip().endswith("ER  -")


def test_report_route_refuses_an_unknown_format_with_the_choices(live_app: LiveApp) -> None:
    body = {"request_id": "r", "query": "q", "summary": "s", "answer": "a"}
    response = httpx.post(f"{live_app.url}/api/report", params={"format": "docx"}, json=body, timeout=30)
    assert response.status_code == 400
    message = response.json()["message"]
    assert "docx" in message and "markdown, bibtex, ris" in message
