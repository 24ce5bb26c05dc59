"""One data dir shared by several real processes: a held collection is named with its holder, listing takes no
lock, names are checked before the file system, creation is atomic, and the CLI goes through a running server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.errors import CollectionBusyError, InputError
from deepcite.retrieval.shared_dir import create_atomically, running_server
from deepcite.retrieval.store import open_store
from deepcite.service import SearchRequest

from .mp_helpers import bm25_collection, clean, cli, env_for, holder, serve, truncate_payload

pytestmark = pytest.mark.slow

TEXTS = ["Heparin dosing after trauma surgery.", "Warfarin and bleeding risk in the elderly."]


def test_a_held_collection_names_its_holder(settings: Settings) -> None:
    bm25_collection(settings, "notes", TEXTS)
    bm25_collection(settings, "other", TEXTS)
    with holder(settings.data_dir, "notes") as proc:
        store = open_store(settings)
        with pytest.raises(CollectionBusyError, match=rf"open in `python` \(pid {proc.pid}") as err:
            store.count("notes")
        assert err.value.http_status == 409 and str(settings.data_dir) not in str(err.value)
        assert store.count("other") == 2  # the rest of the data dir still works
        store.close()
        stats = cli(settings.data_dir, "collections", "stats", "notes")
        assert stats.returncode == 2 and f"pid {proc.pid}" in stats.stderr, stats.stderr
        assert clean(stats.stderr, settings.data_dir), stats.stderr
        listing = cli(settings.data_dir, "collections", "list", "--json")  # metadata only: no lock needed
        assert listing.returncode == 0, listing.stderr
        assert {r["name"]: r["chunks"] for r in json.loads(listing.stdout)} == {"notes": 2, "other": 2}
    store = open_store(settings)  # the holder has exited: its record is ignored, the lock is free
    assert store.count("notes") == 2
    store.close()


def test_unreadable_collection_is_listed_with_its_reason(settings: Settings) -> None:
    bm25_collection(settings, "good", TEXTS)
    bm25_collection(settings, "bad", TEXTS)
    (settings.edge_path / "bad" / "deepcite.json").write_text("{not json", encoding="utf-8")
    with Engine(settings) as engine:
        infos = {i.name: i for i in engine.corpus.collections()}
    assert (infos["good"].status, infos["good"].chunks) == ("ok", 2)
    assert infos["bad"].status == "unreadable" and "damaged" in (infos["bad"].problem or "")
    listing = cli(settings.data_dir, "collections", "list")
    assert listing.returncode == 0 and "unreadable" in listing.stdout and "good" in listing.stdout


def test_a_long_name_is_refused_before_the_file_system(settings: Settings) -> None:
    with Engine(settings) as engine:
        for name in ("a" * 300, "é" * 200, "x\x00y", "../edge"):
            with pytest.raises(InputError) as err:
                engine.search(SearchRequest(query="heparin", collection=name, mode="bm25"))
            assert err.value.http_status < 500
    edge = settings.edge_path
    assert not edge.exists() or not [p for p in edge.iterdir() if len(p.name) > 64]


RACE = """
import sys, time
from deepcite.errors import DeepciteError
from deepcite.config import Settings
from deepcite.retrieval.store import open_store
store = open_store(Settings.load())
while time.time() < float(sys.argv[1]):
    time.sleep(0.001)
for i in range(8):
    try:
        store.create_collection(f"race{i}", dense_dim=8)
    except DeepciteError as exc:
        print(f"clear error: {exc}")
store.close()
"""


def test_two_processes_creating_the_same_collections_make_one_each(settings: Settings) -> None:
    start = str(time.time() + 3)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, start],
            env=env_for(settings.data_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0 and "Traceback" not in err, err
    store = open_store(settings)
    assert store.list_collections() == [f"race{i}" for i in range(8)]
    assert all(store.count(f"race{i}") == 0 for i in range(8))
    store.close()
    assert not [p.name for p in settings.edge_path.iterdir() if p.name.startswith(".")]


def test_creation_never_removes_a_live_creators_folder(tmp_path: Path) -> None:
    live = tmp_path / f".creating-demo.{os.getpid()}.abc"
    dead = tmp_path / ".creating-demo.999999999.abc"
    live.mkdir()
    dead.mkdir()

    def build(folder: Path) -> None:
        (folder / "deepcite.json").write_text("{}")

    assert create_atomically(tmp_path, "demo", build) is True
    assert live.exists() and not dead.exists() and (tmp_path / "demo" / "deepcite.json").exists()
    assert create_atomically(tmp_path, "demo", build) is False  # made already: ours is removed, theirs kept
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "demo"])


# BM25 searches and no warm start: the server process never loads the embedding model (warm start: tests/server)
BM25_SERVER = {"DEEPCITE_SEARCH_DEFAULT_MODE": "bm25", "DEEPCITE_SERVER_WARM_START": "false"}


def test_cli_and_server_share_a_data_dir(settings: Settings) -> None:
    data = settings.data_dir
    bm25_collection(settings, "notes", TEXTS)
    bm25_collection(settings, "other", TEXTS)
    bm25_collection(settings, "hurt", TEXTS)
    truncate_payload(settings.edge_path / "hurt")
    with serve(data, **BM25_SERVER) as (url, server):
        body = {"query": "heparin trauma", "collection": "notes", "mode": "bm25"}
        assert (
            httpx.post(f"{url}/api/search", json=body, timeout=60).status_code == 200
        )  # the server holds notes
        # a CLI search finds the server holding the collection and goes through it
        found = cli(data, "search", "heparin", "-c", "notes", "--mode", "bm25", "--json")
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["hits"][0]["doc_id"] == "notes-0"
        # a command that needs the files names the server and the way through it
        stats = cli(data, "collections", "stats", "notes")
        assert stats.returncode == 2 and f"`deepcite serve` (pid {server.pid}" in stats.stderr, stats.stderr
        assert f"--server {url}" in " ".join(stats.stderr.split())  # rich wraps long lines
        # the server answers 409, naming the CLI process, when a CLI holds the collection it needs
        with holder(data, "other") as proc:
            busy = httpx.post(f"{url}/api/search", json={**body, "collection": "other"}, timeout=60)
            assert busy.status_code == 409 and f"pid {proc.pid}" in busy.json()["message"], busy.text
            listing = httpx.get(f"{url}/api/collections", timeout=60)
            assert listing.status_code == 200
            chunks = {c["name"]: c["chunks"] for c in listing.json()["collections"]}
            assert chunks == {
                "notes": 2,
                "other": 2,
                "hurt": 2,
            }  # read from metadata: no lock, no damage seen
        assert clean(busy.text, data)
        # once the CLI is done, the server opens it
        assert (
            httpx.post(f"{url}/api/search", json={**body, "collection": "other"}, timeout=60).status_code
            == 200
        )
        damaged = httpx.post(f"{url}/api/search", json={**body, "collection": "hurt"}, timeout=60)
        assert damaged.status_code == 503 and "collection 'hurt' is damaged" in damaged.json()["message"]
        assert clean(damaged.text, data)
        long_name = httpx.post(f"{url}/api/search", json={**body, "collection": "a" * 300}, timeout=60)
        assert 400 <= long_name.status_code < 500 and "long" in long_name.json()["message"], long_name.text
        # an explicit --server is used as given
        found = cli(data, "search", "warfarin", "-c", "other", "--mode", "bm25", "--json", "--server", url)
        assert found.returncode == 0 and json.loads(found.stdout)["hits"][0]["doc_id"] == "other-1"
    assert running_server(data) is None  # a stopped server is not gone through
