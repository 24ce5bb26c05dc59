"""A second try at the first hop (research.bridge.retry_support, issue 49's twenty-sixth session): after the first
beam hop, when the best followed candidate's support is weak, the first reading's next-best candidates and the names
the question gives (retry_names) join the beam beside the winners' next reading; a first hop whose candidates found
nothing, or a later hop, tries nothing."""

from __future__ import annotations

import importlib

from deepcite.config.bridge import BridgeSettings
from deepcite.models import Candidate
from deepcite.research.hoplog import format_bridge_hop
from deepcite.research.state import BeamEntry, BridgeHop, BridgeLink

from .helpers import chunk, new_state

read_bridge = importlib.import_module("deepcite.research.nodes.read_bridge")  # the module, not its node

QUESTION = "The state where Henry Worrall died has how many congressional districts?"


def _entry(name: str, support: float = 0.0, depth: int = 1) -> BeamEntry:
    return BeamEntry(name, 1.0, ("worrall", "worrall-0"), depth=depth, followed_round=2, support=support)


def _state_with_reserve():
    state, _ = new_state(QUESTION)
    state.round = 2
    state.beam_reserve = [
        BeamEntry("Census", 0.6, ("worrall", "worrall-0")),
        BeamEntry("Kansas", 0.5, ("worrall", "worrall-0")),
    ]
    return state


def test_the_first_reading_keeps_its_next_best_for_a_second_try() -> None:
    """The first reading keeps ``retry_width`` candidates past the beam while the retry is on, ``reserve`` when that
    is more, and none with both off (the beam before this session)."""
    assert read_bridge._first_reserve(BridgeSettings()) == 3
    assert read_bridge._first_reserve(BridgeSettings(reserve=5)) == 5
    assert read_bridge._first_reserve(BridgeSettings(retry_support=0.0)) == 0


def test_a_weak_first_hop_tries_the_first_readings_next_best() -> None:
    """ "United States" wins the first beam hop with a support of 1.30, under ``retry_support`` 1.5: Kansas, fifth in
    the first reading, is tried beside the winners' next reading; a winner of 2.0 tries nothing."""
    state = _state_with_reserve()
    s = BridgeSettings()
    weak = [_entry("United States", 1.30), _entry("New Jersey", 0.93)]
    assert [e.name for e in read_bridge._second_try(state, s, weak, 1.30)] == ["Census", "Kansas"]
    assert read_bridge._second_try(state, s, [_entry("United States", 2.0)], 2.0) == []
    assert read_bridge._second_try(state, BridgeSettings(retry_support=0.0), weak, 1.30) == []
    assert [e.name for e in read_bridge._second_try(state, BridgeSettings(retry_width=1), weak, 1.30)] == [
        "Census"
    ]


def test_no_second_try_when_nothing_was_found_or_past_the_first_hop() -> None:
    """A first hop whose candidates found nothing (best support 0) is the ``reserve``'s case, off by default: trying
    the next-best there cost MuSiQue train a question. A later beam hop tries nothing either."""
    state = _state_with_reserve()
    s = BridgeSettings()
    assert read_bridge._second_try(state, s, [_entry("Utah Territory"), _entry("Salt Lake City")], 0.0) == []
    assert read_bridge._second_try(state, s, [_entry("Henry County", 1.0, depth=2)], 1.0) == []


def test_the_tried_candidates_join_the_beam_once_and_the_hop_log_names_them() -> None:
    state = _state_with_reserve()
    state.beam = [
        BeamEntry("Kansas", 0.4, ("kansas", "kansas-0"), depth=2)
    ]  # the winners' next reading has it
    state.used_entities.append("Census")  # followed already
    joined = read_bridge._join(state, list(state.beam_reserve))
    assert joined == [] and [e.name for e in state.beam] == ["Kansas"]
    state.beam = []
    state.used_entities.clear()
    joined = read_bridge._join(state, list(state.beam_reserve))
    assert [e.name for e in joined] == ["Census", "Kansas"] and [e.name for e in state.beam_read] == [
        "Census",
        "Kansas",
    ]
    hop = BridgeHop(
        2, (BridgeLink(("United States",), "United States", 1.3, True),), ("Indiana",), second=("Kansas",)
    )
    assert format_bridge_hop(hop).endswith("next: Indiana (weak first hop, tried again: Kansas)")


def test_the_names_the_question_gives_are_tried_from_the_rounds_best_passage() -> None:
    """With evidence in hand the question's own names join the second try ("Hans Edler" without its "'s"), each read
    from the round's best passage with the reading score ``retry_names``; 0 tries the reading's candidates only."""
    state, _ = new_state("The 1920 Summer Olympics in which Hans Edler's country competed were held where?")
    state.round = 2
    best = Candidate(chunk=chunk("athletics-0", "Athletics at the 1920 Summer Olympics ...", doc="athletics"))
    best.score = 1.0
    state.evidence[best.key] = best
    state.beam_reserve = [BeamEntry("Norway", 0.3, best.key)]
    tried = read_bridge._second_try(state, BridgeSettings(), [_entry("Antwerp", 1.2)], 1.2)
    assert [e.name for e in tried][:1] == ["Norway"] and "Hans Edler" in [e.name for e in tried]
    edler = next(e for e in tried if e.name == "Hans Edler")
    assert (edler.score, edler.parent, edler.depth) == (1.0, best.key, 1)
    only = read_bridge._second_try(state, BridgeSettings(retry_names=0.0), [_entry("Antwerp", 1.2)], 1.2)
    assert [e.name for e in only] == ["Norway"]
