"""Browser-test fixtures: the real app on 127.0.0.1 over a small real index, a practitioner directory
imported from a fixture, the stand-in web as its web-search source, and Debian's Chromium via Playwright."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from web.standin import StandinWeb, serve_app, standin_web

from deepcite.config import Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Document
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.finder import PractitionerFinder
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.server.app import create_app

REPO = Path(__file__).parents[2]
CORPUS = REPO / "tests" / "fixtures" / "server" / "corpus.jsonl"
FLAG_DAY = REPO / "tests" / "fixtures" / "docs" / "flag_day.html"
PRACTITIONERS = Path(__file__).parent / "fixtures" / "practitioners.jsonl"
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class LiveApp:
    """The running app: its base URL, its settings and the stand-in web it searches."""

    url: str
    settings: Settings
    web: StandinWeb


@pytest.fixture(scope="session")
def live_app(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Iterator[LiveApp]:
    data_dir = tmp_path_factory.mktemp("ui-data")
    with standin_web() as web:
        settings = Settings(data_dir=data_dir)
        settings = settings.model_copy(
            update={
                "web": settings.web.model_copy(
                    update={
                        "enabled": True,
                        "mcp_url": web.mcp_url,
                        "allowed_domains": ["127.0.0.1"],
                        "max_results": 3,
                        "page_timeout_s": 30.0,  # generous: these tests are not about slow pages
                    }
                ),
                "server": settings.server.model_copy(update={"default_collection": "demo"}),
            }
        )
        collection = open_collection("demo", settings, embedder=minilm)
        IngestPipeline(collection).ingest(CORPUS)
        # a collection that exists but holds nothing: research finds no evidence there
        empty = open_collection("empty", settings, store=collection.store, embedder=collection.embedder)
        IngestPipeline(empty).ingest([Document(id="placeholder", text="A placeholder removed right away.")])
        empty.delete_document("placeholder")
        # a real saved web page (Wikipedia's National Flag of Canada Day): questions it answers and one it does not
        flags = open_collection("flags", settings, store=collection.store, embedder=collection.embedder)
        IngestPipeline(flags).ingest(FLAG_DAY)
        finder = PractitionerFinder(
            settings,
            directory=Directory.open(settings),
            store=collection.store,
            embedder=collection.embedder,
        )
        finder.import_file(PRACTITIONERS, "jsonl")
        finder.directory.close()
        app = create_app(settings, store=collection.store, embedder=collection.embedder)
        with serve_app(lambda port: app) as port:
            yield LiveApp(url=f"http://127.0.0.1:{port}", settings=settings, web=web)
        collection.store.close()


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    """Chromium for the browser tests of this folder, launched once: sync Playwright runs its own event loop,
    which must be gone before other folders' asyncio tests run (none is in this folder)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (`make browser` or apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture()
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(120_000)  # hops run the real model on a shared 2-core machine
    yield page
    context.close()


@pytest.fixture()
def phone(browser: object) -> Iterator[object]:
    context = browser.new_context(  # type: ignore[attr-defined]
        viewport={"width": 375, "height": 812}, device_scale_factor=2, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    page.set_default_timeout(120_000)
    yield page
    context.close()


def screenshot(page: object, name: str, *, full_page: bool = True) -> Path:
    """Save a screenshot (the whole page, or what the viewport shows) to test-artifacts/; returns its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=full_page)  # type: ignore[attr-defined]
    return path


def keep_for_readme(path: Path, name: str) -> None:
    """Copy a screenshot to docs/<name> for the README, when ``DEEPCITE_UPDATE_SCREENSHOTS=1`` asks for it: a
    plain test run leaves the tracked files alone."""
    if os.environ.get("DEEPCITE_UPDATE_SCREENSHOTS") != "1":
        return
    docs = REPO / "docs"
    docs.mkdir(exist_ok=True)
    shutil.copyfile(path, docs / name)
