"""The answer's type in the beam (research/answer_types.py, research.bridge.type_weight / type_mismatch_weight):
what the question asks for against what each candidate's own page calls it, on crafted fictional pages
(tests/fixtures/graph/type_pages.jsonl) ingested into a real collection whose graph keeps each page's lead."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config.bridge import BridgeSettings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Candidate
from deepcite.research.agent import ResearchAgent
from deepcite.research.answer_types import (
    Wanted,
    candidate_fit,
    page_type,
    title_type,
    type_fit,
    wanted_types,
)
from deepcite.research.bridge import read_bridge
from deepcite.research.state import ExecutorState
from deepcite.research.titles import TitleKeys
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import Embedder

from .helpers import ingested_collection

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "graph" / "type_pages.jsonl"
QUESTION = "What language is spoken in the country the Sable River flows through?"


@pytest.fixture(scope="module")
def type_collection(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Collection:
    return ingested_collection(tmp_path_factory, minilm, "type-fixture", PAGES)


def test_the_question_names_the_kinds_of_answer_it_wants() -> None:
    country = wanted_types(QUESTION)
    assert [w.kind for w in country] == ["place"] and "country" in (country[0].nouns or ())
    assert "district" not in (country[0].nouns or ())  # a district is no country
    county = wanted_types("In what county is the city where Harris W. Fawell was born?")
    # the county level, then the city level
    assert [sorted(w.nouns or ())[:1] for w in county] == [["borough"], ["borough"]]
    assert "town" in (county[1].nouns or ())  # a town answers "what city"
    # the county is asked for (the last hop's answer); the city is the bridge on the way
    assert [w.asked for w in county] == [True, False]
    assert wanted_types("Where was the director of The Quiet Lantern born?") == (
        Wanted("place", asked=True),
        Wanted("person"),
    )
    assert wanted_types("What is the Sable River's length in kilometres?") == ()  # no type named: nothing
    # "River": a word of a name
    assert wanted_types("Which film did the River Band record?") == (Wanted("work", asked=True),)


def test_a_page_says_what_its_subject_is_in_its_lead_sentence() -> None:
    lead = "Veldoria, officially the Republic of Veldoria, is a landlocked country."
    country = page_type("Veldoria", lead, 10)
    assert country is not None and country.kind == "place" and country.nouns == {"country"}
    district = page_type("Dunmarsh District", "Dunmarsh District is one of five districts of Korvath.", 10)
    assert district is not None and district.nouns == {"district"}
    person = page_type("Osric Pell", "Osric Pell (1919 - 1990) was a Veranian film director.", 10)
    assert person is not None and person.kind == "person"
    assert page_type("Veldoria", "It is the largest city of the south.", 10) is None  # about something else
    # a part of a province is no province: its kind is not read
    part = page_type("Brevik", "Brevik is part of Korvath Province.", 10)
    assert part is not None and part.kind is None
    # no copula: the title says it
    river = page_type("Sable River", "The Sable River rises in the Korvath Hills.", 10)
    assert river is not None and river.nouns == {"river"}
    assert title_type("Harbour Lights (film)") is not None and title_type("Marn") is None
    wanted = wanted_types(QUESTION)
    assert (type_fit([country], wanted), type_fit([district], wanted), type_fit([], wanted)) == (1, -1, 0)
    assert type_fit([None], wanted) == 0  # a page whose type does not read is neutral
    # a person where the question asks for one but wants a place on the way: no bridge kind, no mismatch
    where = wanted_types("Where was the director of The Quiet Lantern born?")
    assert (type_fit([person], where), type_fit([country], where)) == (1, 0)


def test_the_graph_keeps_each_pages_lead_sentence(type_collection: Collection) -> None:
    leads = {title: sentence for title, sentence in type_collection.graph.leads().values()}
    assert leads["Veldoria"].startswith("Veldoria, officially the Republic of Veldoria, is a landlocked")
    assert "Marn" not in leads["Veldoria"]  # the first sentence only
    type_collection.graph.delete_documents(["korvath-hills"])
    try:
        assert "Korvath Hills" not in {t for t, _ in type_collection.graph.leads().values()}
    finally:
        IngestPipeline(type_collection).ingest(PAGES, fmt="jsonl")


def _first_beam(collection: Collection, **bridge: float) -> list[str]:
    settings = collection.settings.research.tuned(bridge=bridge)
    beams: list[list[str]] = []

    def snapshot(state: ExecutorState, _report: object) -> None:
        beams.append([e.name for e in state.beam_read])

    ResearchAgent(collection, settings).process(QUESTION, on_round=snapshot)
    return beams[0]


def test_the_beam_picks_the_country_over_the_districts_by_their_pages(type_collection: Collection) -> None:
    """The river's passage names the hills it rises in and the districts it flows through before the country;
    the districts' own pages call them districts, the country's page a country: with the type check the country
    leads the beam; without it (the weights at 0, the default) the districts and the hills do."""
    plain = _first_beam(type_collection)
    assert plain[0] != "Veldoria"
    typed = _first_beam(type_collection, type_weight=1.0, type_mismatch_weight=3.0)
    assert typed[0] == "Veldoria"


def test_a_candidate_of_unknown_type_keeps_its_score(type_collection: Collection) -> None:
    """The name Tollan has no page and states no type: its score is the same with the check on or off; the
    districts' fall and the country's rises."""
    titles = TitleKeys()
    pages = titles.aliases(type_collection)
    fit = candidate_fit(wanted_types(QUESTION), pages, titles.page_types(type_collection, 10))
    hit = type_collection.search("Sable River", mode="bm25", k=1)[0]
    river = [Candidate(chunk=hit.chunk)]
    common = {"beam": 10, "min_ratio": 0.0}
    off = read_bridge(QUESTION, river, pages=pages, fit=fit, settings=BridgeSettings(**common))
    on = read_bridge(
        QUESTION,
        river,
        pages=pages,
        fit=fit,
        settings=BridgeSettings(**common, type_weight=1.0, type_mismatch_weight=1.0),
    )
    before, after = {r.name: r.score for r in off}, {r.name: r.score for r in on}
    assert after["Tollan"] == pytest.approx(before["Tollan"])
    assert after["Dunmarsh District"] == pytest.approx(before["Dunmarsh District"] / 2)
    assert after["Veldoria"] == pytest.approx(before["Veldoria"] * 2)
