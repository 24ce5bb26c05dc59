"""``POST /api/practitioners/search`` through the real server: the finder's answer, auth and bad input."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from deepcite.practitioners.finder import PractitionerFinder
from server.conftest import ADMIN, Index, LiveServer, headers

pytestmark = pytest.mark.slow

DIRECTORY = Path(__file__).parents[1] / "fixtures" / "server" / "practitioners.jsonl"


@pytest.fixture(scope="module")
def directory(index: Index) -> None:
    finder = PractitionerFinder(
        index.settings, directory=_open_directory(index), store=index.store, embedder=index.embedder
    )
    try:
        finder.import_file(DIRECTORY, "jsonl")
    finally:
        finder.directory.close()  # the store stays open: the server shares it


def _open_directory(index: Index):  # type: ignore[no-untyped-def]
    from deepcite.practitioners.directory import Directory

    return Directory.open(index.settings)


def test_practitioner_search_ranks_the_fitting_specialty_first(live: LiveServer, directory: None) -> None:
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=120) as c:
        response = c.post(
            "/api/practitioners/search",
            json={"userQuery": "my heart races and I was told I have atrial fibrillation", "location": "ME"},
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["results"], body.get("reason")
    assert body["results"][0]["primary_specialty"] in ("Cardiology", "Clinical Cardiac Electrophysiology")
    assert all(r["state"] == "ME" for r in body["results"])
    assert {"analysis", "stage_a", "stage_b"} <= set(body["timings_ms"])


def test_practitioner_search_rejects_bad_requests(live: LiveServer, directory: None) -> None:
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=120) as c:
        missing = c.post("/api/practitioners/search", json={"location": "Portland, ME"})
        assert missing.status_code == 422 and missing.json()["detail"][0]["field"] == "userQuery"
        empty = c.post("/api/practitioners/search", json={"userQuery": "   "})
        assert 400 <= empty.status_code < 500
        assert (
            httpx.post(f"{live.base_url}/api/practitioners/search", json={"userQuery": "knee"}).status_code
            == 401
        )
