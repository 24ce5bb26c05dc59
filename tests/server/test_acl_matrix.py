"""The ACL matrix of issue 46 over a real server on 127.0.0.1 and the MCP server's HTTP app: tokens of two groups
(cardiology, oncology), one with no group and an unrestricted one. No upload replaces or discloses another
group's document, no caller deletes what it does not own, and MCP over HTTP takes the same tokens."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.errors import ConfigError
from deepcite.mcp_server.callers import caller_groups
from deepcite.mcp_server.transport import http_app
from deepcite.retrieval.store import open_store
from deepcite.saved_answers import SavedAnswers
from deepcite.server.app import create_app
from server.conftest import Index, LiveServer, headers, server_settings
from server.test_saved_store import saved
from server.test_upload_route import _files, _wait

ADMIN, CARDIO, ONCO, PUBLIC = "admin-token", "cardio-token", "onco-token", "public-token"
KEYS = f"{ADMIN}:*,{CARDIO}:cardiology,{ONCO}:oncology,{PUBLIC}"
SECRET = b"Quorvane lowers blood pressure in the cardiology ward's resistant hypertension cohort."
OTHER = b"Quorvane is a made-up word; this text is another group's, uploaded under the same name."
ANSWERS = {"cardiology": uuid.uuid4().hex, "public": uuid.uuid4().hex}


@pytest.fixture(scope="module")
def acl(index: Index, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Settings, Any]]:
    settings = server_settings(tmp_path_factory.mktemp("acl-matrix"), api_keys=KEYS)
    answers = SavedAnswers.open(settings)
    answers.save(saved(ANSWERS["cardiology"], ["cardiology"], collection="acl"))
    answers.save(saved(ANSWERS["public"], [], collection="acl"))
    store = open_store(settings)
    with LiveServer(create_app(settings, store=store, embedder=index.embedder)) as live:
        yield live, settings, (store, index.embedder)
    store.close()


def _client(live: LiveServer, token: str) -> httpx.Client:
    return httpx.Client(base_url=live.base_url, headers=headers(token), timeout=300)


def _upload(client: httpx.Client, collection: str, name: str, data: bytes) -> httpx.Response:
    return client.post(f"/api/collections/{collection}/documents", files=_files((name, data)))


def _found(client: httpx.Client, collection: str) -> set[str]:
    body = client.post(
        "/api/search", json={"query": "quorvane", "collection": collection, "mode": "bm25"}
    ).json()
    return {h["doc_id"] for h in body["hits"]}


def test_an_upload_never_replaces_or_discloses_another_groups_document(
    acl: tuple[LiveServer, Settings, Any],
) -> None:
    live, settings, _ = acl
    with _client(live, CARDIO) as cardio, _client(live, ONCO) as onco, _client(live, PUBLIC) as public:
        first = _upload(cardio, "acl", "shared.txt", SECRET)
        assert _wait(cardio, first.json()["job_id"])["files"][0]["status"] == "ingested"
        for client, data in ((onco, OTHER), (onco, SECRET), (public, OTHER)):
            refused = _upload(client, "acl", "shared.txt", data)
            assert refused.status_code == 409, refused.text
            message = refused.json()["message"]
            assert "rename your file" in message and "unchanged" not in message
            assert str(settings.data_dir) not in message
        assert _found(cardio, "acl") == {"shared.txt"} and _found(onco, "acl") == set() == _found(
            public, "acl"
        )
        text = cardio.get("/files/acl/shared.txt")
        assert text.status_code == 200 and text.content == SECRET  # still cardiology's own file
        assert onco.get("/files/acl/shared.txt").status_code == 404
        again = _upload(cardio, "acl", "shared.txt", SECRET)  # its owner hears "unchanged"
        assert _wait(cardio, again.json()["job_id"])["files"][0]["status"] == "unchanged"


def test_deletes_need_ownership(acl: tuple[LiveServer, Settings, Any]) -> None:
    live, _, _ = acl
    with (
        _client(live, ADMIN) as admin,
        _client(live, CARDIO) as cardio,
        _client(live, ONCO) as onco,
        _client(live, PUBLIC) as public,
    ):
        for client, name in ((admin, "open.txt"), (cardio, "mine.txt")):
            job = _upload(client, "acl-delete", name, SECRET).json()
            assert _wait(client, job["job_id"])["state"] == "done"
        assert public.delete("/api/collections/acl-delete/documents/open.txt").status_code == 403
        assert cardio.delete("/api/collections/acl-delete/documents/open.txt").status_code == 403
        assert onco.delete("/api/collections/acl-delete/documents/mine.txt").status_code == 404
        assert public.delete("/api/collections/acl-delete/documents/mine.txt").status_code == 404
        assert cardio.delete("/api/collections/acl-delete/documents/mine.txt").status_code == 200
        assert admin.delete("/api/collections/acl-delete/documents/open.txt").status_code == 200

        mine, theirs = ANSWERS["cardiology"], ANSWERS["public"]
        assert onco.get(f"/api/answers/{mine}").status_code == 404
        assert onco.delete(f"/api/answers/{mine}").status_code == 404
        for client in (
            cardio,
            onco,
            public,
        ):  # a public answer: everyone reads it, no restricted token deletes it
            assert client.get(f"/api/answers/{theirs}").status_code == 200
            assert client.delete(f"/api/answers/{theirs}").status_code == 403
        assert cardio.delete(f"/api/answers/{mine}").status_code == 200
        assert admin.delete(f"/api/answers/{theirs}").status_code == 200


async def _mcp_doc_ids(url: str, token: str) -> set[str]:
    async with (
        create_mcp_http_client(headers=headers(token)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("search", {"query": "quorvane", "collection": "acl", "mode": "bm25"})
        assert not result.is_error, result.content
        return {h["doc_id"] for h in result.structured_content["hits"]}


async def test_mcp_over_http_takes_the_api_tokens(acl: tuple[LiveServer, Settings, Any]) -> None:
    live, settings, (store, embedder) = acl
    with _client(live, CARDIO) as cardio:
        job = _upload(cardio, "acl", "mcp.txt", SECRET + b" Again.").json()
        assert _wait(cardio, job["job_id"])["state"] == "done"
    with LiveServer(http_app(Engine(settings, store=store, embedder=embedder))) as mcp:
        url = f"{mcp.base_url}{settings.mcp.path}"
        anonymous = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert anonymous.status_code == 401 and "bearer token" in anonymous.json()["message"]
        assert {"shared.txt", "mcp.txt"} <= await _mcp_doc_ids(url, CARDIO)
        assert await _mcp_doc_ids(url, ONCO) == set() == await _mcp_doc_ids(url, PUBLIC)


def test_mcp_never_defaults_to_every_group(tmp_path: Path) -> None:
    open_http = Settings(data_dir=tmp_path)
    assert caller_groups(open_http, None) is None  # stdio: the data dir's own user
    assert caller_groups(open_http, {}) == ()  # HTTP with no tokens: public documents only
    narrowed = open_http.model_copy(update={"mcp": open_http.mcp.model_copy(update={"groups": ["oncology"]})})
    assert caller_groups(narrowed, {}) == ["oncology"]
    keyed = narrowed.model_copy(update={"api_keys": KEYS})
    assert caller_groups(keyed, {"authorization": f"Bearer {CARDIO}"}) == ()  # its groups within mcp.groups
    assert caller_groups(keyed, {"authorization": f"Bearer {ADMIN}"}) == ("oncology",)
    exposed = open_http.model_copy(update={"mcp": open_http.mcp.model_copy(update={"host": "0.0.0.0"})})
    with pytest.raises(ConfigError, match="no bearer tokens"):
        http_app(Engine(exposed))
