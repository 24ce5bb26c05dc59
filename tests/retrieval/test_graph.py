"""The entity graph: built at ingest, kept up to date on re-ingest and deletion, walked by PPR (real Edge
store, real SQLite, real MiniLM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config import GraphSettings, Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Document, Filters, SearchMode
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.graph.extract import entity_key, question_keys, sub_keys

QUESTION = "Who is the spouse of the performer of Green?"

# a two-hop case: the question names "Green"; the song's page links it to Marla Quint; her page (which
# shares no content word with the question) holds the answer; the distractors share the question's words
DOCS = [
    Document(
        id="green",
        title="Green (song)",
        text="Green is a 1998 song performed by Marla Quint, from her album Meadow.",
    ),
    Document(
        id="quint",
        title="Marla Quint",
        text="Marla Quint is a Canadian singer. Quint married the painter Oskar Brandt in 2004.",
    ),
    Document(
        id="d1",
        title="Spouses of performers",
        text="The spouse of a performer often travels with the performer on tour.",
    ),
    Document(
        id="d2",
        title="Green room",
        text="A green room is where a performer waits before going on stage; a spouse may wait there too.",
    ),
    Document(
        id="d3",
        title="Performing arts",
        text="Who is a performer? Any artist who performs, such as a singer, actor or dancer.",
    ),
    Document(
        id="d4",
        title="Oak Valley",
        text="Oak Valley is a town in Ohio with a green park and a theatre for performers.",
    ),
]


# the walk led by the question's entities: first-hop passages seed it only lightly
ENTITY_LED = {"passage_seed_weight": 0.05, "first_hop_k": 2}


@pytest.fixture
def collection(tmp_path: Path, minilm: Embedder) -> Collection:
    settings = Settings(data_dir=tmp_path / "data", graph=GraphSettings(**ENTITY_LED))
    col = open_collection("songs", settings, embedder=minilm)
    IngestPipeline(col).ingest(DOCS)
    return col


def test_entity_keys_join_titles_and_mentions() -> None:
    assert entity_key("Green (song)") == entity_key("green") == "green"
    assert entity_key("The Beatles") == "beatles"
    assert entity_key("Zoë Saldaña") == "zoe saldana"
    assert entity_key("Austria's") == entity_key("Austria’s") == "austria"
    assert sub_keys("johann strauss ii") == ["strauss ii"]
    assert sub_keys("marla quint") == ["quint"] and sub_keys("green room") == ["room"]
    assert sub_keys("university of north texas") == ["north texas", "texas"]
    keys = question_keys(QUESTION, max_words=3)
    assert "green" in keys and "spouse" in keys and "of the" not in keys


def test_ingest_builds_the_graph(collection: Collection) -> None:
    stats = collection.graph.stats()
    assert stats.passages == len(DOCS)
    walk = collection.graph_walk(QUESTION)
    assert "Green (song)" in walk.seeds
    assert any(e.name == "Marla Quint" for e in walk.entities)


def test_ppr_reaches_the_second_hop_that_bm25_misses(collection: Collection) -> None:
    bm25 = [h.chunk.doc_id for h in collection.search(QUESTION, mode="bm25", k=3)]
    graph = collection.search(QUESTION, mode=SearchMode.GRAPH, k=3)
    ranked = [h.chunk.doc_id for h in graph]
    assert "quint" not in bm25
    assert ranked[:2] == ["green", "quint"] or ranked[:2] == ["quint", "green"]
    quint = next(h for h in graph if h.chunk.doc_id == "quint")
    assert quint.mode is SearchMode.GRAPH
    assert quint.graph is not None and quint.graph.entity == "Marla Quint" and quint.graph.edge == "title"


def test_graph_hits_obey_filters(collection: Collection) -> None:
    hits = collection.search(QUESTION, mode="graph", k=5, filters=Filters(doc_ids=["quint", "d1"]))
    assert {h.chunk.doc_id for h in hits} <= {"quint", "d1"}


def test_hybrid_fuses_the_graph_when_asked(tmp_path: Path, minilm: Embedder) -> None:
    settings = Settings(data_dir=tmp_path / "data", graph=GraphSettings(in_hybrid=True, **ENTITY_LED))
    col = open_collection("songs", settings, embedder=minilm)
    IngestPipeline(col).ingest(DOCS)
    hits = col.search(QUESTION, mode="hybrid", k=6)
    assert "quint" in [h.chunk.doc_id for h in hits]
    assert any(h.graph is not None for h in hits)


def test_reingest_and_delete_keep_the_graph_current(collection: Collection) -> None:
    before = collection.graph.stats()
    changed = Document(id="green", title="Green (song)", text="Green is a 1998 song performed by Ida Holm.")
    report = IngestPipeline(collection).ingest([changed])
    assert report.written == 1
    walk = collection.graph_walk(QUESTION)
    names = {e.name for e in walk.entities}
    assert "Ida Holm" in names
    assert collection.graph.stats().passages == before.passages
    collection.delete_document("quint")
    after = collection.graph.stats()
    assert after.passages == before.passages - 1
    walk = collection.graph_walk(QUESTION)
    assert "Marla Quint" not in {e.name for e in walk.entities}  # no passage mentions her any more
    assert "quint" not in {p.doc_id for p in walk.passages}


def test_collection_without_a_graph_builds_it_on_first_walk(collection: Collection) -> None:
    collection.graph.clear()
    fresh = Collection(collection.name, collection.store, collection.settings, collection.embedder)
    hits = fresh.search(QUESTION, mode="graph", k=2)
    assert {h.chunk.doc_id for h in hits} == {"green", "quint"}


def test_near_duplicate_names_are_joined_by_embedding(tmp_path: Path, minilm: Embedder) -> None:
    settings = Settings(data_dir=tmp_path / "data", graph=GraphSettings(synonyms=True, synonym_threshold=0.8))
    col = open_collection("songs", settings, embedder=minilm)
    IngestPipeline(col).ingest(DOCS[:2])
    IngestPipeline(col).ingest(
        [Document(id="brandt", title="Painters of Ohio", text="Oscar Brandt painted barns in Ohio.")]
    )
    assert col.graph.stats().synonyms >= 1  # "Oskar Brandt" (first ingest) ~ "Oscar Brandt" (second)
    walk = col.graph_walk("Oskar Brandt", seed_chunk_ids=[])
    assert "brandt" in {p.doc_id for p in walk.passages}
    col.delete_document("brandt")
    assert col.graph.stats().synonyms == 0  # the pair went with the name no passage mentions any more
