"""Following a composed question's chain to its end (issue 49): the beam's depth from the chain's length
(research.bridge.chain_depth), each hop's candidates read from the passages found for the candidate before, the
chain in the hop log, and a hop that finds nothing to go on trying the next-best candidate
(research.bridge.reserve); on fictional pages (tests/fixtures/graph/chain_pages.jsonl) in a real collection."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from deepcite.config import ResearchSettings
from deepcite.models import AspectCoverage
from deepcite.research.agent import ResearchAgent
from deepcite.research.nodes.should_continue import stop_decision
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import Embedder

from .helpers import ingested_collection

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "graph" / "chain_pages.jsonl"
# four steps: studio that made The Amber Tide -> founder of #1 -> birthplace of #2 -> What river flows through #3
QUESTION = "What river flows through the birthplace of the founder of the studio that made The Amber Tide?"
# the chain followed to its end: depth from the chain, on from a candidate's own page, no stop while one is left
FOLLOW = {"chain_depth": True, "own_page": True, "finish_chain": True}


@pytest.fixture(scope="module")
def chain_collection(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Collection:
    return ingested_collection(tmp_path_factory, minilm, "chain-fixture", PAGES)


def _bridges(collection: Collection, **bridge: object) -> list[tuple[str, int]]:
    settings = collection.settings.research.tuned(bridge=bridge)
    result = ResearchAgent(collection, settings).process(QUESTION)
    return [(b.name, b.depth) for b in result.pack.bridges]


def test_a_four_step_chain_is_followed_to_its_end(
    chain_collection: Collection, caplog: pytest.LogCaptureFixture
) -> None:
    """Read as four steps, the question gets three beam hops: the studio read from the film's page, its founder
    from the studio's page, his birthplace from his page; the hop log shows each chain followed. At two beam hops
    (profile before_beam_depth3) the birthplace is never followed."""
    defaults = chain_collection.settings.research.bridge
    assert not defaults.chain_depth and defaults.max_depth == 3  # three beam hops for every question
    shallow = _bridges(chain_collection, beam=1, min_ratio=0.0, reserve=1, max_depth=2)
    assert ("Ashcombe", 3) not in shallow
    with caplog.at_level(logging.INFO, logger="deepcite.research.agent"):
        deep = _bridges(chain_collection, beam=1, min_ratio=0.0, reserve=1, **FOLLOW)
    assert ("Kestrel Pictures", 1) in deep and ("Maren Holloway", 2) in deep and ("Ashcombe", 3) in deep
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("bridge hop")]
    assert any("Kestrel Pictures -> Maren Holloway -> Ashcombe: 'Ashcombe'" in line for line in lines), lines
    # the founder was read from his own page, which his follow-up cannot select again: without own_page the next
    # reading misses the birthplace his page names
    blind = _bridges(chain_collection, beam=1, min_ratio=0.0, reserve=1, chain_depth=True, finish_chain=True)
    assert ("Maren Holloway", 2) in blind and ("Ashcombe", 3) not in blind


def test_a_hop_that_finds_nothing_new_tries_the_next_best_candidate(
    chain_collection: Collection, caplog: pytest.LogCaptureFixture
) -> None:
    """The film's first sentence names its lead actor beside "made": he is the first reading, and his page
    names nothing the research has not met. With a reserve the next round follows the next-best reading, the
    studio, and the chain goes on from its page; without one the beam ends at the actor."""
    with caplog.at_level(logging.INFO, logger="deepcite.research.agent"):
        retried = _bridges(chain_collection, beam=1, min_ratio=0.0, reserve=1, **FOLLOW)
    assert retried[0] == ("Corran Vale", 1)
    assert ("Kestrel Pictures", 1) in retried and ("Maren Holloway", 2) in retried
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("bridge hop")]
    assert any("Corran Vale:" in line and "next-best: Kestrel Pictures" in line for line in lines), lines
    ended = _bridges(chain_collection, beam=1, min_ratio=0.0, **FOLLOW)
    assert ended == [("Corran Vale", 1)]


def test_a_chain_left_to_follow_outlasts_rounds_without_new_evidence() -> None:
    settings = ResearchSettings()
    coverage = AspectCoverage()
    assert stop_decision(settings, coverage, 4, no_novelty_streak=2)[0] is False
    go_on, why = stop_decision(settings, coverage, 4, no_novelty_streak=2, chain_pending=True)
    assert go_on and "chain" in why
    assert stop_decision(settings, coverage, settings.stopping.max_hops, chain_pending=True)[0] is False


def test_without_a_reserve_no_reading_is_kept_past_the_beam(chain_collection: Collection) -> None:
    """The shipped default (reserve 0): however many candidates the winners' passages give, none waits past the
    beam's width for a retry, so a dead hop ends the beam as before; only the first reading keeps its next-best for
    a first hop of weak support (``retry_support``, test_second_try.py), and without that none at all."""

    def run(**bridge: object) -> list[int]:
        settings = chain_collection.settings.research.tuned(bridge={**FOLLOW, "min_ratio": 0.0, **bridge})
        reserves: list[int] = []
        ResearchAgent(chain_collection, settings).process(
            QUESTION, on_round=lambda state, _: reserves.append(len(state.beam_reserve))
        )
        return reserves

    shipped = run()
    assert len(shipped) > 2 and shipped[0] <= 3 and set(shipped[1:]) == {0}
    before = run(retry_support=0.0)
    assert len(before) > 2 and set(before) == {0}


def test_the_default_beam_follows_a_chain_three_hops_deep(chain_collection: Collection) -> None:
    """Three beam hops for every question (``max_depth`` 3, whatever the chain's read length): the birthplace is
    read from the founder's page at depth 3 without the chain's length (``chain_depth`` off); at two hops (profile
    before_beam_depth3) the beam ends at him."""
    follow = {"beam": 1, "min_ratio": 0.0, "reserve": 1, "own_page": True, "finish_chain": True}
    deep = _bridges(chain_collection, **follow)
    assert ("Maren Holloway", 2) in deep and ("Ashcombe", 3) in deep
    shallow = _bridges(chain_collection, **follow, max_depth=2)
    assert ("Maren Holloway", 2) in shallow and all(depth < 3 for _, depth in shallow)
