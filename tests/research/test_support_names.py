"""A followed candidate's support (research/nodes/read_bridge.py, issue 49): a hub the whole collection mentions
keeps less of its reading's lead (``bridge.support_specificity``), unless the question wants a country on the way
(``bridge.support_spare_nations``). Fictional pages."""

from __future__ import annotations

from deepcite.config import ResearchSettings
from deepcite.config.bridge import BridgeSettings
from deepcite.models import Candidate, Provenance, Selection
from deepcite.research.answer_types import bridges_a_nation
from deepcite.research.nodes.read_bridge import _spread, _support
from deepcite.research.state import BeamEntry, ExecutorState

from .helpers import chunk, new_state

QUESTION = "What river flows through the county where the Harlow Tavern is?"


def _found(cid: str, title: str, text: str, focus: str, relevance: float = 0.3) -> Candidate:
    """A passage round 2 selected, reached by a query about ``focus``."""
    prov = Provenance(round=2, query=focus, mode="hybrid", subquestion=focus, rank=1, score=1.0, focus=focus)
    return Candidate(
        chunk=chunk(cid, text, title=title),
        selections=[Selection(round=2, rank=1, relevance=relevance)],
        provenance=[prov],
    )


def _state() -> ExecutorState:
    state, _ = new_state(QUESTION, ResearchSettings())
    state.round = 2
    return state


def test_on_by_default_and_off_at_zero() -> None:
    assert BridgeSettings().support_specificity == 0.5
    assert BridgeSettings().support_spare_nations
    assert _spread({"carrow county": 2}, "Carrow County", 0.0) == 1.0
    assert _spread({}, "Unmentioned", 1.0) == 1.0  # log2(2): a name no passage mentions keeps its reading


def test_a_hub_read_first_keeps_less_of_its_lead_than_a_name_few_passages_mention() -> None:
    """The hub was read best (1.0) and its query found a passage that names it and little of the question; the
    county was read second (0.45) and its query found the river's passage. By the reading the hub wins; with its
    spread over the collection (300 passages against 2) the county does."""
    state = _state()
    hub = BeamEntry("Nordland", 1.0, ("t", "t"), depth=1)
    county = BeamEntry("Carrow County", 0.45, ("t", "t"), depth=1)
    hub_found = [_found("n", "Nordland", "Nordland is a country with many counties.", "Nordland", 0.3)]
    county_found = [
        _found("c", "Carrow County", "The river Wend flows through Carrow County.", "Carrow County", 0.3)
    ]
    frequency = {"nordland": 300, "carrow county": 2}

    def support(entry: BeamEntry, found: list[Candidate], power: float) -> float:
        return _support(
            state, entry, found, 1.0, reading_weight=2.0, spread=_spread(frequency, entry.name, power)
        )

    assert support(hub, hub_found, 0.0) > support(county, county_found, 0.0)
    assert support(county, county_found, 1.0) > support(hub, hub_found, 1.0)
    assert _spread(frequency, "Nordland", 1.0) > _spread(frequency, "Carrow County", 1.0) == 2.0


def test_a_question_that_wants_a_country_on_the_way_spares_the_hubs() -> None:
    """A country wanted on the way is a name every passage mentions: its reading keeps its weight. A state wanted on
    the way is a state of a federation (the lowest level "state" names), a county or city is no nation, and the
    kind the question asks for ("which country") is its last hop's, not a bridge."""
    assert bridges_a_nation("Who founded the airline of the country where the Harlow Tavern is located?")
    assert not bridges_a_nation(QUESTION)  # a county
    assert not bridges_a_nation("Which river rises in the state where the Harlow Tavern is located?")
    assert not bridges_a_nation("Which country is the founder of Harlow Tavern from?")
    assert not bridges_a_nation("Where was the founder of Harlow Tavern born?")
