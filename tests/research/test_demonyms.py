"""A demonym read as the place it names (research/demonyms.py, research.bridge.demonyms): "a Chinese journalist"
answers "the country Wen Shaoqi is from" with China, on crafted pages (tests/fixtures/graph/demonym_pages.jsonl;
the person and the league are fictional) ingested into a real collection."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config.bridge import BridgeSettings
from deepcite.models import Candidate, Chunk
from deepcite.research.agent import ResearchAgent
from deepcite.research.answer_types import wants_a_nation
from deepcite.research.bridge import read_bridge
from deepcite.research.demonyms import place_of
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import Embedder

from .helpers import fixture_page, ingested_collection

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "graph" / "demonym_pages.jsonl"
QUESTION = "How much United States debt does the country Wen Shaoqi is from hold?"


def _page(doc: str) -> Candidate:
    return fixture_page(PAGES, doc)


@pytest.fixture(scope="module")
def demonym_collection(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Collection:
    return ingested_collection(tmp_path_factory, minilm, "demonym-fixture", PAGES)


def test_a_demonym_names_its_place() -> None:
    assert place_of("Chinese") == "China"
    assert place_of("north  Korean") == "North Korea"
    assert place_of("Harbour League") is None


def test_the_reading_takes_a_demonym_as_its_place_when_asked() -> None:
    person = _page("wen-shaoqi")
    names = [r.name for r in read_bridge(QUESTION, [person], demonyms=True, settings=BridgeSettings())]
    assert "China" in names and "Chinese" not in names
    plain = [r.name for r in read_bridge(QUESTION, [person], settings=BridgeSettings())]
    assert "Chinese" in plain and "China" not in plain


def test_a_demonym_does_not_add_to_the_place_read_beside_it() -> None:
    """A page that says "a British firm … of the United Kingdom" reads the United Kingdom at the better of the two
    readings, not their sum: a hub read twice stays a hub."""
    firm = Candidate(
        chunk=Chunk(
            chunk_id="f",
            doc_id="f",
            title="Marlow Rope Works",
            text="Marlow Rope Works was a British maker of ship's rope, the oldest in the United Kingdom.",
        )
    )
    question = "Which country was Marlow Rope Works from?"
    settings = BridgeSettings(beam=10, min_ratio=0.0)
    plain = {r.name: r.score for r in read_bridge(question, [firm], settings=settings)}
    read = {r.name: r.score for r in read_bridge(question, [firm], demonyms=True, settings=settings)}
    assert "British" not in read
    assert read["United Kingdom"] == pytest.approx(max(plain["British"], plain["United Kingdom"]))


def test_only_a_question_wanting_a_nation_or_any_place_reads_demonyms() -> None:
    assert wants_a_nation(QUESTION)
    assert wants_a_nation("Where was the director of The Quiet Lantern born?")
    assert not wants_a_nation("What is the most popular hotel in the city of birth of Wen Shaoqi?")
    assert not wants_a_nation("Who is the spouse of the director of The Quiet Lantern?")


def test_the_beam_follows_the_place_a_demonym_names(demonym_collection: Collection) -> None:
    """Through the research: the first hop's candidate is China, and its follow-up searches China; with
    ``demonyms`` off (profile before_demonyms) the beam never reads China."""
    research = demonym_collection.settings.research
    assert research.bridge.demonyms  # on by default

    def first_hop(on: bool) -> tuple[set[str], set[str]]:
        settings = research.tuned(bridge={"demonyms": on})
        result = ResearchAgent(demonym_collection, settings).process(QUESTION)
        names = {b.name for b in result.pack.bridges if b.depth == 1}
        return names, {q for r in result.pack.retrieval_report[1:] for q in r.queries}

    names, queries = first_hop(True)
    assert "China" in names and "Chinese" not in names
    assert "China" in queries
    names, queries = first_hop(False)
    assert "China" not in names and "China" not in queries
