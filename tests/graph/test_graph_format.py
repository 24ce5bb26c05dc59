"""A graph read by older rules is rebuilt at the next ingest (retrieval/graph/store.py ``FORMAT``): its leads and
aliases come back as today's rules read them, for documents the ingest itself leaves unchanged too."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.models import Document
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.graph.store import FORMAT

VARN = Document(
    id="varn",
    title="Hollis B. Varn",
    text="Hollis Bernard Varn (born March 12, 1909, Port Edley, Marrow County) was a clockmaker in Lake Sorrel.",
)
EDLEY = Document(id="edley", title="Port Edley", text="Port Edley is a harbour town of Marrow County.")


def _sql(path: Path, statement: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as db, db:
        return list(db.execute(statement))


def test_an_older_graph_is_rebuilt_by_the_next_ingest(tmp_path: Path, minilm: Embedder) -> None:
    with Engine(Settings(data_dir=tmp_path / "data"), embedder=minilm) as engine:
        engine.ingest("people", [VARN])
        graph = engine.corpus.collection("people").graph
        assert graph.current() and not engine.corpus.check("people").warnings
        assert _sql(graph.path, "SELECT value FROM meta WHERE key = 'format'") == [(FORMAT,)]
        # as an older deepcite left it: no stamp, no leads, and a place of the life note kept as a name of the page
        _sql(graph.path, "DELETE FROM meta WHERE key = 'format'")
        _sql(graph.path, "DELETE FROM leads")
        _sql(graph.path, "INSERT OR IGNORE INTO entities (key, name) VALUES ('port edley', 'Port Edley')")
        _sql(
            graph.path,
            "INSERT OR REPLACE INTO mentions SELECT p.id, e.id, 1 FROM passages p, entities e "
            "WHERE p.doc_id = 'varn' AND e.key = 'port edley'",
        )
        assert not graph.current()
        warnings = engine.corpus.check(
            "people"
        ).warnings  # `deepcite collections check` says so, and what to do
        assert any("entity graph" in w and "deepcite ingest" in w for w in warnings)

        engine.ingest("people", [VARN, EDLEY])  # Varn's document is unchanged: only Edley's is written

        assert graph.current() and not engine.corpus.check("people").warnings
        assert {title for title, _ in graph.leads().values()} == {"Hollis B. Varn", "Port Edley"}
        titled = _sql(
            graph.path,
            "SELECT p.doc_id FROM mentions m JOIN passages p ON p.id = m.passage "
            "JOIN entities e ON e.id = m.entity WHERE e.key = 'port edley' AND m.is_title = 1",
        )
    assert [doc for (doc,) in titled] == ["edley"]  # the page of that name, not the clockmaker's
