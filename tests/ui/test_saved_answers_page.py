"""Saved answers, quotes and the evidence table in a real browser against the real server.

- the citation popover shows the quote, and marks it inside the passage;
- the evidence table downloads as CSV whose rows are the answer's checked citations;
- an answer reopens at its URL after the server was stopped and started again over the same data dir;
- with API keys, another group's saved answer is the API's 404 in the page, and not listed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from web.standin import serve_app

from deepcite.answer.evidence import claim_key
from deepcite.config import ServerSettings, Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app
from ui.conftest import LiveApp
from ui.test_research_page import ask, wait_for_answer

pytestmark = pytest.mark.slow

SERVER_CORPUS = Path(__file__).parents[1] / "fixtures" / "server" / "corpus.jsonl"
CARDIO, ONCO = "cardio-token", "onco-token"
QUESTION = "Does atrial fibrillation increase the risk of stroke?"
TOKEN_KEY = "deepcite.apiToken"  # where common.js keeps the tab's token


@dataclass
class Served:
    url: str


def saved_answer(url: str, answer_id: str, token: str | None = None) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.get(f"{url}/api/answers/{answer_id}", headers=auth, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


def answer_id_of(page: Any) -> str:
    """The saved answer's id, from the URL the page moved to once the answer was saved."""
    page.wait_for_url("**/answers/*")
    return page.url.rsplit("/", 1)[1]


def test_the_popover_shows_the_quote_of_the_citation(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app, question=QUESTION, max_hops="1")
    wait_for_answer(page)
    saved = saved_answer(live_app.url, answer_id_of(page))
    by_id = {c["id"]: c for c in saved["response"]["citations"]}
    button = page.locator("#summary-text .cite").first
    citation = by_id[int(button.get_attribute("data-cite"))]
    assert (
        citation["quote"]
        and citation["text"][citation["quote_start"] : citation["quote_end"]] == citation["quote"]
    )
    button.click()
    pop = page.locator("#cite-pop")
    pop.wait_for(state="visible")
    assert pop.locator(".cite-pop-quote").inner_text().strip() == citation["quote"].strip()
    assert pop.locator(".cite-pop-text mark.quote").inner_text().strip() == citation["quote"].strip()
    assert " ".join(pop.locator(".cite-pop-text").inner_text().split()) == " ".join(citation["text"].split())


def test_the_evidence_table_downloads_as_csv_matching_the_citations(page: Any, live_app: LiveApp) -> None:
    ask(page, live_app, question=QUESTION, max_hops="1")
    wait_for_answer(page)
    saved = saved_answer(live_app.url, answer_id_of(page))
    claims, seen = [], set()  # one row per distinct claim and citation, the first said
    for claim in saved["response"]["citation_check"]["claims"]:
        if (claim_key(claim["claim"]), claim["id"]) not in seen:
            seen.add((claim_key(claim["claim"]), claim["id"]))
            claims.append(claim)
    assert page.locator("#evidence-table tbody tr").count() == len(claims)
    with page.expect_download() as info:
        page.click("#download-evidence")
    assert info.value.suggested_filename.endswith("-evidence.csv")
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    by_id = {c["id"]: c for c in saved["response"]["citations"]}
    assert len(rows) == len(claims) > 0
    for row, claim in zip(rows, claims, strict=True):
        cited = by_id[claim["id"]]
        assert (row["claim"], int(row["citation"]), row["verdict"]) == (
            claim["claim"],
            claim["id"],
            claim["verdict"],
        )
        assert row["quote"] == cited["text"][claim["quote_start"] : claim["quote_end"]]
        assert (row["doc_id"], row["title"]) == (cited["doc_id"], cited["title"])
    cited_ids = set(saved["response"]["citation_check"]["cited_ids"])
    assert {int(r["citation"]) for r in rows if r["verdict"] == "supported"} == cited_ids


@pytest.fixture(scope="module")
def keyed_data_dir(
    tmp_path_factory: pytest.TempPathFactory, minilm: Embedder
) -> Iterator[tuple[Path, Embedder]]:
    """A data dir holding the server corpus (with its ACL groups), closed again so each app opens it."""
    data_dir = tmp_path_factory.mktemp("saved-ui")
    collection = open_collection("demo", Settings(data_dir=data_dir), embedder=minilm)
    IngestPipeline(collection).ingest(SERVER_CORPUS)
    embedder = collection.embedder
    collection.store.close()
    yield data_dir, embedder


@contextmanager
def serving(data_dir: Path, embedder: Embedder) -> Iterator[Served]:
    """A server process-alike: a new app and Engine over the data dir (its own store), stopped on exit."""
    settings = Settings(
        data_dir=data_dir,
        api_keys=f"{CARDIO}:cardiology,{ONCO}:oncology",
        server=ServerSettings(default_collection="demo"),
    )
    with serve_app(lambda port: create_app(settings, embedder=embedder)) as port:
        yield Served(url=f"http://127.0.0.1:{port}")


def as_caller(page: Any, token: str) -> None:
    page.add_init_script(f"window.sessionStorage.setItem({TOKEN_KEY!r}, {token!r});")


def test_a_saved_answer_reopens_after_a_server_restart_for_its_group_only(
    browser: Any, keyed_data_dir: tuple[Path, Embedder]
) -> None:
    data_dir, embedder = keyed_data_dir
    cardio = browser.new_context(viewport={"width": 1100, "height": 900})
    page = cardio.new_page()
    page.set_default_timeout(120_000)
    as_caller(page, CARDIO)
    with serving(data_dir, embedder) as first:
        ask(page, first, question=QUESTION, max_hops="1")
        wait_for_answer(page)
        answer_id = answer_id_of(page)
        summary = page.locator("#summary-text").inner_text()
        assert page.locator(f"#past-list li[data-answer-id='{answer_id}']").count() == 1

    with serving(data_dir, embedder) as second:  # a new app, Engine and store: nothing kept in memory
        page.goto(f"{second.url}/answers/{answer_id}")
        page.wait_for_selector("#summary:not([hidden])")
        assert page.locator("#summary-text").inner_text() == summary
        assert page.input_value("#question") == QUESTION
        assert page.locator("#evidence-table tbody tr").count() > 0
        page.locator(f"#past-list li[data-answer-id='{answer_id}']").wait_for()
        page.reload()  # a reload keeps it too
        page.wait_for_selector("#summary:not([hidden])")
        assert page.locator("#summary-text").inner_text() == summary

        other = browser.new_context(viewport={"width": 1100, "height": 900})
        stranger = other.new_page()
        stranger.set_default_timeout(120_000)
        as_caller(stranger, ONCO)
        stranger.goto(f"{second.url}/answers/{answer_id}")
        stranger.wait_for_selector("#error:not([hidden])")
        assert "no saved answer with that id that you may read" in stranger.locator("#error").inner_text()
        assert stranger.locator("#summary").is_hidden()
        stranger.wait_for_function("document.getElementById('past-list') !== null")
        assert stranger.locator(f"#past-list li[data-answer-id='{answer_id}']").count() == 0
        refused = httpx.get(
            f"{second.url}/api/answers/{answer_id}", headers={"Authorization": f"Bearer {ONCO}"}, timeout=60
        )
        assert refused.status_code == 404
        other.close()
    cardio.close()
