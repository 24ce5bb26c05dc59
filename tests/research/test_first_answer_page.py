"""The page of the first hop's answer placed high in the pack (research.ranking.first_answer_page_within): the
chain's second passage shares few words with the question, so passages that share them rank above it; on
fictional pages (tests/fixtures/graph/answer_page.jsonl) in a real collection."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.research.agent import ResearchAgent
from deepcite.research.nodes.finalize_evidence_pack import hop_answers
from deepcite.research.state import BeamEntry
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import Embedder

from .helpers import ingested_collection, new_state

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "graph" / "answer_page.jsonl"
QUESTION = "Who composed the score of the film The Salt Lantern?"


@pytest.fixture(scope="module")
def answer_page_collection(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Collection:
    return ingested_collection(tmp_path_factory, minilm, "answer-page", PAGES)


def _pack(collection: Collection, within: int) -> tuple[list[str], list[str]]:
    settings = collection.settings.research.tuned(ranking={"first_answer_page_within": within})
    pack = ResearchAgent(collection, settings).process(QUESTION).pack
    return [b.name for b in pack.bridges if b.depth == 1], [c.chunk.title for c in pack.final_evidence]


def test_the_first_answers_page_moves_up_to_its_place(answer_page_collection: Collection) -> None:
    """The film's page names its composer beside "composed": the beam's best first reading. The novel of the
    same name shares more of the question's words than the composer's page and ranks above it; placed within
    two, the composer's page comes second and everything else keeps its order."""
    assert answer_page_collection.settings.research.ranking.first_answer_page_within == 0  # shipped: off
    bridges, default = _pack(answer_page_collection, 0)
    assert bridges[0] == "Edda Thorne"
    assert default.index("Edda Thorne") == 2 and default[0] == "The Salt Lantern"
    _, placed = _pack(answer_page_collection, 2)
    assert placed[1] == "Edda Thorne"
    assert [t for t in placed if t != "Edda Thorne"] == [t for t in default if t != "Edda Thorne"]
    _, wide = _pack(answer_page_collection, 3)  # already within three: nothing moves
    assert wide == default


def test_each_hops_answer_is_the_candidate_of_its_depth_whose_evidence_scored_best() -> None:
    """Of the candidates read at a depth the best-supported one answers that hop (the first read on ties); a depth
    whose candidates found nothing (support 0) has no answer."""
    state, _ = new_state("Who composed the score of the film The Salt Lantern?")
    parent = ("salt-lantern", "salt-lantern")
    state.beam_read = [
        BeamEntry("Edda Thorne", 1.0, parent, depth=1, support=0.6),
        BeamEntry("Lantern Press", 0.8, parent, depth=1, support=0.9),
        BeamEntry("Orla Venn", 0.7, parent, depth=1, support=0.9),
        BeamEntry("Quellport", 1.0, ("lantern-press", "lantern-press"), depth=2, support=0.0),
    ]
    assert hop_answers(state) == {"Lantern Press": 1}
