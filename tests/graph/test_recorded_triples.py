"""The LLM triples path end to end on a real model's recorded output: deepcite's own triple-extraction requests
go over HTTP to benchmarks/recorded_openie.py, the stand-in that replays what GPT-3.5 wrote for the same
passages in HippoRAG's OpenIE run (no LLM can run here); the real OpenAI-compatible client, the real ingest,
Edge store, SQLite graph and MiniLM. Five recorded MuSiQue train passages (fixture excerpt, attribution in
tests/fixtures/graph/README.md) and one passage the recording lacks."""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

from web.standin import serve_app

from deepcite.config import GraphSettings, LLMSettings, Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.llm.factory import get_llm
from deepcite.models import Document
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.graph.extract import entity_key
from deepcite.retrieval.graph.store import EntityGraph

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from recorded_openie import MODEL, Recording, build_app  # noqa: E402

EXCERPT = Path(__file__).resolve().parents[1] / "fixtures" / "graph" / "openie_gpt35_musique_excerpt.json"
QUESTION = (
    "Who was the first president of the association which published Journal of Psychotherapy Integration?"
)
UNRECORDED = Document(
    id="unrecorded", title="Marlow Ridge", text="Marlow Ridge is a town in Ostland on the river Tell."
)


def relations(graph: EntityGraph) -> set[tuple[str, str, str, str]]:
    """Every relation row of the graph as (its passage's doc id, subject key, relation, object key)."""
    with closing(sqlite3.connect(graph.path)) as db:
        return set(
            db.execute(
                "SELECT p.doc_id, s.key, r.relation, o.key FROM relations r JOIN passages p ON p.id = r.passage "
                "JOIN entities s ON s.id = r.subject JOIN entities o ON o.id = r.object"
            ).fetchall()
        )


def test_recorded_gpt35_triples_build_the_graph_through_deepcite_s_own_requests(
    tmp_path: Path, minilm: Embedder
) -> None:
    recorded = json.loads(EXCERPT.read_text(encoding="utf-8"))["docs"]
    docs = [Document(id=f"m{i}", title=d["title"], text=d["text"]) for i, d in enumerate(recorded)]
    recording = Recording.load(EXCERPT)
    with serve_app(lambda port: build_app(recording)) as port:
        llm = LLMSettings(base_url=f"http://127.0.0.1:{port}/v1", model=MODEL, max_retries=0)
        settings = Settings(data_dir=tmp_path / "data", llm=llm, graph=GraphSettings(llm_triples=True))
        col = open_collection("musique", settings, embedder=minilm)
        report = IngestPipeline(col, llm=get_llm(settings)).ingest([*docs, UNRECORDED])
    assert report.triples is not None and not report.triples.failed
    assert (report.triples.asked, report.triples.extracted, report.triples.requests) == (6, 6, 2)
    # five passages answered from the recording, the sixth with nothing; the five-item triple left out
    assert recording.counts["passages_answered"] == 5 and recording.counts["passages_lacking"] == 1
    assert recording.counts["triples_dropped"] == 1 and recording.counts["refused"] == 0
    found = relations(col.graph)
    assert len(found) == report.triples.triples == col.graph.stats().relations
    assert not [r for r in found if r[0] == "unrecorded"]
    journal = "journal of psychotherapy integration"
    apa = entity_key("American Psychological Association")
    assert ("m0", journal, "published by", apa) in found
    assert ("m1", entity_key("G. Stanley Hall"), "first president of", apa) in found
    # the walk from the question's journal reaches the association's president's passage through the triple
    walk = col.graph_walk(QUESTION, seed_chunk_ids=[])
    assert [p.doc_id for p in walk.passages][:2] == ["m0", "m1"]
    assert walk.passages[1].link.relation == (
        "Journal of Psychotherapy Integration published by American Psychological Association"
    )
