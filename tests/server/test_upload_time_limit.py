"""One slow upload cannot hold the job queue (issue 46): an upload's job embeds for at most
``server.upload_embed_s``. Here the limit is tiny, so a text of some thirty passages stops after its first slice
of ``server.upload_embed_check_texts``: its job fails with a sentence naming the setting and writes nothing of
that file, and the upload queued behind it (one passage: one slice) runs and is done."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from deepcite.config import ServerSettings
from deepcite.models import Filters
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.store import SearchStore, open_store
from deepcite.server.app import create_app
from server.conftest import ADMIN, COLLECTION, LiveServer, headers, server_settings
from server.test_upload_route import _files, _wait

pytestmark = pytest.mark.slow

SLOW = ". ".join(
    f"Warfarin trial {i} measured bleeding risk in elderly patients with atrial fibrillation"
    for i in range(300)
)
QUICK = "Aspirin lowered the risk of stroke a little in one small trial."


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, minilm: Embedder
) -> Iterator[tuple[LiveServer, SearchStore]]:
    settings = server_settings(
        tmp_path_factory.mktemp("upload-time-limit"),
        server=ServerSettings(
            default_collection=COLLECTION, upload_embed_s=0.001, upload_embed_check_texts=2
        ),
    )
    store = open_store(settings)
    with LiveServer(create_app(settings, store=store, embedder=minilm)) as live:
        yield live, store
    store.close()


def test_a_slow_upload_stops_at_its_limit_and_the_next_job_runs(
    server: tuple[LiveServer, SearchStore],
) -> None:
    live, store = server
    with httpx.Client(base_url=live.base_url, headers=headers(ADMIN), timeout=300) as client:
        slow = client.post("/api/collections/limits/documents", files=_files(("slow.txt", SLOW.encode())))
        quick = client.post("/api/collections/limits/documents", files=_files(("quick.txt", QUICK.encode())))
        assert slow.status_code == quick.status_code == 202, (slow.text, quick.text)
        stopped = _wait(client, slow.json()["job_id"])
        done = _wait(client, quick.json()["job_id"])
        listing = client.get("/api/collections")
        assert listing.status_code == 200, listing.text
    assert stopped["state"] == "failed", stopped
    assert (
        "time limit (server.upload_embed_s = 0.001 s)" in stopped["error"]
        and "raise the setting" in stopped["error"]
    )
    assert done["state"] == "done" and done["files"][0]["status"] == "ingested", done
    assert store.count("limits", Filters(doc_ids=["slow.txt"])) == 0
    assert store.count("limits", Filters(doc_ids=["quick.txt"])) == done["files"][0]["chunks"] > 0
