"""propose_bridge_queries: high-PPR entities the evidence does not name become the next hop's queries, over a
real collection with its entity graph; nothing is proposed without a graph, and a failing walk is recorded."""

from __future__ import annotations

from pathlib import Path

from deepcite.config import Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Candidate, SearchMode
from deepcite.research.nodes import prepare_round_queries, propose_bridge_queries, run_retrieval
from deepcite.research.protocols import GraphRetriever
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder

from .helpers import adapters, new_state

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "research" / "chain_corpus.jsonl"
QUESTION = "Who is the spouse of the performer of Velvet Harbor?"


def _with_album_evidence(collection: Collection) -> tuple:
    settings = collection.settings.research.tuned(
        retrieval={"use_graph": True}, planning={"graph_bridge_entities": 3}
    )
    state, planner = new_state(QUESTION, settings)
    album = collection.search("Velvet Harbor", mode=SearchMode.BM25, k=1)[0]
    state.evidence[(album.chunk.doc_id, album.chunk.chunk_id)] = Candidate(chunk=album.chunk, score=1.0)
    state.asked.append(QUESTION)
    state.round = 1
    return state, planner, settings


def test_high_ppr_entities_missing_from_the_evidence_become_the_next_hop(
    chain_collection: Collection,
) -> None:
    assert isinstance(chain_collection, GraphRetriever)
    state, planner, settings = _with_album_evidence(chain_collection)
    propose_bridge_queries(state, adapters(planner, chain_collection, settings))
    proposed = state.graph_bridges
    held = " ".join(f"{c.chunk.title} {c.chunk.text}" for c in state.evidence.values()).lower()
    assert proposed and len(proposed) <= settings.planning.graph_bridge_entities
    assert all(name.lower() not in held for name in proposed)
    # each is two edges from the album, through an entity it names (Orla Brennick, Tidewater Records)
    two_hops = {"Tomas Vell", "Cork", "Dublin", "Ireland", "Aarhus"}
    assert set(proposed) <= two_hops
    sub, queries = planner.next_hop(state)
    assert [q.text for q in queries] == proposed and {q.kind for q in queries} == {"graph"}
    assert state.graph_bridges == [] and set(proposed) <= set(state.used_entities)


def test_the_graph_list_joins_the_round_only_when_on_and_says_which_entity_brought_a_passage(
    chain_collection: Collection,
) -> None:
    for on in (True, False):
        settings = chain_collection.settings.research.tuned(retrieval={"use_graph": on})
        state, planner = new_state(QUESTION, settings)
        run_with = adapters(planner, chain_collection, settings)
        prepare_round_queries(state, run_with)
        run_retrieval(state, run_with)
        graph_lists = [r for r in state.results if r.mode is SearchMode.GRAPH]
        assert bool(graph_lists) is on
        assert all(h.graph is not None for r in graph_lists for h in r.hits)


def test_no_graph_no_proposal_and_a_failing_walk_is_recorded(
    chain_collection: Collection, tmp_path: Path, minilm: Embedder
) -> None:
    state, planner, settings = _with_album_evidence(chain_collection)

    class PlainRetriever:  # a stand-in retriever that keeps no entity graph
        def search(self, *args: object, **kwargs: object) -> list:
            return []

        def embed(self, texts: list[str]) -> list:
            return []

    propose_bridge_queries(state, adapters(planner, PlainRetriever(), settings))  # type: ignore[arg-type]
    assert state.graph_bridges == [] and not state.errors
    off = Settings(data_dir=tmp_path / "data", graph={"enabled": False})
    no_graph = open_collection("bridge-off", off, embedder=minilm)
    IngestPipeline(no_graph).ingest(CORPUS, fmt="jsonl")
    propose_bridge_queries(state, adapters(planner, no_graph, settings))
    assert state.graph_bridges == [] and "graph walk failed" in state.errors[-1]
