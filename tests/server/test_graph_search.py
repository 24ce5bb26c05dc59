"""Search mode ``graph`` over HTTP (``POST /api/search``, the real app under uvicorn) and through the CLI
(``deepcite search --mode graph``): hits say which entity and edge brought them in, and ACL still applies."""

from __future__ import annotations

import json

import httpx
import pytest
from typer.testing import CliRunner

from deepcite.cli.main import app
from server.conftest import CARDIOLOGY_MARKER, PUBLIC, LiveServer, headers

QUERY = "quorvane registry atrial fibrillation stroke"


def test_http_graph_search_explains_each_hit(client: httpx.Client) -> None:
    found = client.post("/api/search", json={"query": QUERY, "k": 5, "mode": "graph"})
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["mode"] == "graph" and body["hits"]
    assert [h["rank"] for h in body["hits"]] == list(range(1, len(body["hits"]) + 1))
    assert all(h["graph"]["edge"] in ("title", "title_link", "mention", "first_hop") for h in body["hits"])
    assert any(CARDIOLOGY_MARKER in h["text"] for h in body["hits"])


def test_http_graph_search_keeps_acl(live: LiveServer) -> None:
    with httpx.Client(base_url=live.base_url, headers=headers(PUBLIC), timeout=300) as public:
        found = public.post("/api/search", json={"query": QUERY, "k": 10, "mode": "graph"})
    assert found.status_code == 200, found.text
    assert found.json()["hits"] and not any(CARDIOLOGY_MARKER in h["text"] for h in found.json()["hits"])


@pytest.mark.slow
def test_cli_graph_search(tmp_path, monkeypatch) -> None:
    corpus = tmp_path / "songs.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps(d)
            for d in [
                {
                    "id": "green",
                    "title": "Green (song)",
                    "text": "Green is a 1998 song performed by Marla Quint.",
                },
                {
                    "id": "quint",
                    "title": "Marla Quint",
                    "text": "Marla Quint married the painter Oskar Brandt.",
                },
                {"id": "oak", "title": "Oak Valley", "text": "Oak Valley is a town with a green park."},
            ]
        )
    )
    monkeypatch.setenv("DEEPCITE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DEEPCITE_GRAPH_FIRST_HOP_K", "1")  # the walk, not the first hop, finds Marla Quint
    monkeypatch.setenv("COLUMNS", "200")  # the table keeps each cell on one line
    runner = CliRunner()
    ingested = runner.invoke(app, ["ingest", str(corpus), "--collection", "songs", "--json"])
    assert ingested.exit_code == 0, ingested.output
    found = runner.invoke(
        app, ["search", "the performer of Green", "-c", "songs", "--mode", "graph", "--json"]
    )
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["hits"]
    quint = next(h for h in hits if h["doc_id"] == "quint")
    assert quint["graph"] == {"entity": "Marla Quint", "edge": "title", "score": quint["graph"]["score"]}
    table = runner.invoke(app, ["search", "the performer of Green", "-c", "songs", "--mode", "graph"])
    assert table.exit_code == 0 and "via" in table.stdout and "Marla Quint (title)" in table.stdout
