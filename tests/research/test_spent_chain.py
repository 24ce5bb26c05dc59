"""A candidate's whole chain spends the question's words (research.bridge.spent_chain, issue 49): at the third hop
of "What river flows through the birthplace of the founder of the studio that made The Amber Tide?", the words the
film's page answered ("studio", "made") are neither relation words of the reading nor words its support still
looks for, though the founder's page, the passage the birthplace was read from, lacks them. Fictional pages."""

from __future__ import annotations

from deepcite.config import ResearchSettings
from deepcite.config.bridge import BridgeSettings
from deepcite.models import Candidate, Selection
from deepcite.research.bridge import read_bridge
from deepcite.research.nodes.read_bridge import _support
from deepcite.research.state import BeamEntry, ExecutorState
from deepcite.research.vectors import passage_words

from .helpers import chunk, new_state

QUESTION = "What river flows through the birthplace of the founder of the studio that made The Amber Tide?"
FILM = "The Amber Tide is a 1962 drama film made by the studio Kestrel Pictures."
STUDIO = "Kestrel Pictures is a film studio founded in 1931 by Maren Holloway."
# the founder's page: her birthplace, and a studio she made films at later (the first hop's words, answered)
FOUNDER = (
    "Maren Holloway was a producer born in Ashcombe in 1901. Much later in her long and busy career she made "
    "films for Lantern Studio."
)
TOWN = "Ashcombe is a market town. The river Wend flows through Ashcombe."


def _passage(cid: str, title: str, text: str, relevance: float = 0.5) -> Candidate:
    return Candidate(
        chunk=chunk(cid, text, title=title), selections=[Selection(round=1, rank=1, relevance=relevance)]
    )


def _chain_state() -> tuple[ExecutorState, BeamEntry]:
    """The state after three beam hops: the studio read from the film's page, its founder from the studio's page,
    the birthplace from the founder's page."""
    state, _ = new_state(QUESTION, ResearchSettings())
    film, studio, founder = (
        _passage("film", "The Amber Tide", FILM),
        _passage("studio", "Kestrel Pictures", STUDIO),
        _passage("founder", "Maren Holloway", FOUNDER),
    )
    for cand in (film, studio, founder):
        state.evidence[cand.key] = cand
    state.beam_read = [
        BeamEntry("Kestrel Pictures", 1.0, film.key, depth=1),
        BeamEntry("Maren Holloway", 1.0, studio.key, depth=2, path=("Kestrel Pictures",)),
    ]
    town = BeamEntry("Ashcombe", 1.0, founder.key, depth=3, path=("Kestrel Pictures", "Maren Holloway"))
    state.beam_read.append(town)
    return state, town


def test_a_candidates_chain_is_its_parent_and_the_parents_of_the_hops_before() -> None:
    state, town = _chain_state()
    assert [c.chunk.title for c in state.chain_passages(town)] == [
        "Maren Holloway",
        "Kestrel Pictures",
        "The Amber Tide",
    ]
    assert [c.chunk.title for c in state.chain_passages(town, whole=False)] == ["Maren Holloway"]
    first = state.beam_read[0]
    assert [c.chunk.title for c in state.chain_passages(first)] == ["The Amber Tide"]


def test_the_support_looks_only_for_the_words_no_passage_of_the_chain_holds() -> None:
    """The town's page holds "river" and "flows"; with the founder's page alone spent, the film's "made" and "amber
    tide" count as missing from it too, so it holds a smaller share of what the question still asks."""
    state, town = _chain_state()
    found = [_passage("town", "Ashcombe", TOWN, relevance=0.4)]
    chain = _support(state, town, found, weight=1.0, spent=passage_words(state.chain_passages(town)))
    parent = _support(
        state, town, found, weight=1.0, spent=passage_words(state.chain_passages(town, whole=False))
    )
    assert chain > parent > 0.4


def test_the_reading_after_a_hop_takes_no_relation_word_from_the_chain_before() -> None:
    """Read from the founder's page with only that page spent, "made" and "studio" are relation words and the
    Lantern Studio beside "made" wins over her birthplace; with the whole chain spent (the default) the birthplace
    leads."""
    state, town = _chain_state()
    assert BridgeSettings().spent_chain  # on by default
    founder = state.evidence[("founder", "founder")]
    settings = BridgeSettings(beam=5, min_ratio=0.0)

    def read(spent: list[Candidate]) -> list[str]:
        names = read_bridge(
            QUESTION, [founder], exclude=["Maren Holloway"], spent=passage_words(spent), settings=settings
        )
        return [r.name for r in names]

    assert read(state.chain_passages(state.beam_read[1], whole=False))[0] == "Lantern Studio"
    assert read(state.chain_passages(state.beam_read[1]))[0] == "Ashcombe"
