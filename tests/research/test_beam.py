"""Read the bridge and keep a beam (research/bridge.py, research/nodes/read_bridge.py), on crafted fictional
pages (tests/fixtures/graph/beam_pages.jsonl)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config.bridge import BridgeSettings
from deepcite.models import Candidate, Chunk
from deepcite.research.agent import ResearchAgent
from deepcite.research.bridge import read_bridge, relation_stems
from deepcite.research.planner import next_step
from deepcite.research.state import BeamEntry, ExecutorState, HopChoice
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import Embedder

from .helpers import fixture_page, ingested_collection

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "graph" / "beam_pages.jsonl"
QUESTION = "Where was the director of The Quiet Lantern born?"


def _page(doc: str) -> Candidate:
    return fixture_page(PAGES, doc)


def test_the_bridge_is_read_from_the_apposition_after_the_title() -> None:
    film = _page("quiet-lantern")
    readings = read_bridge(QUESTION, [film], settings=BridgeSettings())
    names = [r.name for r in readings]
    assert names[0] == "Osric Pell"  # the name beside "directed", the relation the question names
    assert readings[0].parent == film.key
    assert "The Quiet Lantern" not in names  # the question names it already
    composer = read_bridge("Who scored The Quiet Lantern?", [film], settings=BridgeSettings())
    assert composer[0].name == "Lenna Marsh"


def test_a_name_two_passages_agree_on_rises() -> None:
    question = "Which composer scored the drama about a lighthouse keeper?"
    passages = [_page("quiet-lantern"), _page("harbour-lights")]
    alone = read_bridge(question, passages, settings=BridgeSettings(agree_weight=0.0))
    agreed = read_bridge(question, passages, settings=BridgeSettings(agree_weight=2.0))
    score = {r.name: r.score for r in alone}
    assert {r.name: r.score for r in agreed}["Lenna Marsh"] == pytest.approx(score["Lenna Marsh"] + 2.0)


def test_the_beam_keeps_at_most_its_width_and_drops_weak_readings() -> None:
    film = _page("quiet-lantern")
    assert len(read_bridge(QUESTION, [film], settings=BridgeSettings(beam=1))) == 1
    everyone = read_bridge(QUESTION, [film], settings=BridgeSettings(beam=10, min_ratio=0.0))
    strict = read_bridge(QUESTION, [film], settings=BridgeSettings(beam=10, min_ratio=0.9))
    assert len(strict) < len(everyone)


@pytest.fixture(scope="module")
def beam_collection(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Collection:
    return ingested_collection(tmp_path_factory, minilm, "beam-fixture", PAGES)


def test_a_beam_recovers_from_a_wrong_first_entity(beam_collection: Collection) -> None:
    """The first reading of "the director of The Quiet Lantern" is its composer (more of the first hop's
    passages name her, and agreement weighs much here); the beam follows her and the director, the round after scores the director's page above
    hers, she drops, and the next hop is read from the director's page alone. Scored by the evidence alone
    (``support_reading_weight`` 0): a reading this far ahead holds on its reading score as shipped."""
    settings = beam_collection.settings.research.tuned(
        bridge={
            "enabled": True,
            "max_depth": 2,
            "beam": 2,
            "agree_weight": 3.0,
            "support_reading_weight": 0.0,
            "retry_support": 0.0,  # the evidence alone scores under the shipped bar: no second try here
        }
    )
    beams: list[list[tuple[str, int, int, float]]] = []

    def snapshot(state: ExecutorState, _report: object) -> None:
        beams.append([(e.name, e.depth, e.followed_round, e.support) for e in state.beam])

    result = ResearchAgent(beam_collection, settings).process(QUESTION, on_round=snapshot)
    first = beams[0]
    assert [name for name, *_ in first][:2] == ["Lenna Marsh", "Osric Pell"]  # the wrong one first
    round_two = result.pack.retrieval_report[1]
    assert {"Lenna Marsh", "Osric Pell"} <= set(round_two.queries)  # each candidate followed
    # the round after reads the next hop from the winner's page only: its birthplace, nothing of the loser's
    second = beams[1]
    assert second and all(depth == 2 for _, depth, *_ in second)
    names = [name for name, *_ in second]
    assert "Dunmore Bay" in names  # read beside "born", the relation left once the director is known
    assert "Pell" not in names  # a part of a name already followed is no new bridge
    winner_page = _page("osric-pell").chunk.text
    assert all(name in winner_page for name in names)  # nothing read from the loser's page ("Harbour Lights")
    top = [c.chunk.doc_id for c in result.pack.final_evidence[:4]]
    assert {"quiet-lantern", "osric-pell"} <= set(top)
    assert "dunmore-bay" in [c.chunk.doc_id for c in result.pack.final_evidence]


def test_the_pack_reports_which_round_followed_each_candidate_and_its_support(
    beam_collection: Collection,
) -> None:
    """The pack's bridge candidates are records taken when each was read; the round that followed one and the
    support its evidence found reach them (they said "never followed", support 0, for every candidate)."""
    settings = beam_collection.settings.research.tuned(
        bridge={"enabled": True, "max_depth": 2, "beam": 2, "agree_weight": 3.0}
    )
    scored: dict[str, tuple[int, float]] = {}

    def snapshot(state: ExecutorState, _report: object) -> None:
        for bridge in state.bridge_hops:
            for link in bridge.links:
                scored[link.path[-1]] = (bridge.round, link.support)

    result = ResearchAgent(beam_collection, settings).process(QUESTION, on_round=snapshot)
    reported = {b.name: (b.followed_round, b.support) for b in result.pack.bridges}
    assert {"Lenna Marsh", "Osric Pell"} <= set(scored)
    for name, (round_no, support) in scored.items():
        assert reported[name] == (round_no, pytest.approx(support))
    assert reported["Osric Pell"][0] == 2 and reported["Osric Pell"][1] > reported["Lenna Marsh"][1]
    assert all(b.followed_round == 0 for b in result.pack.bridges if b.name not in scored)


def test_a_candidates_support_adds_its_reading_score_when_weighed(beam_collection: Collection) -> None:
    """With ``support_reading_weight`` a followed candidate's support is what its own queries found plus that
    weight times its reading score: a first reading's best holds its place against a candidate whose name
    merely matches more of the question's words. Off (0), the support is the found evidence alone; a candidate
    whose queries found no passage naming it gets none either way (the reading's spread, support_specificity,
    off: test_support_names.py)."""
    research = beam_collection.settings.research

    def first_hop(weight: float) -> dict[str, tuple[float, float]]:
        bridge = {"max_depth": 2, "beam": 2, "agree_weight": 3.0, "support_reading_weight": weight}
        settings = research.tuned(bridge=bridge | {"support_specificity": 0.0, "retry_support": 0.0})
        result = ResearchAgent(beam_collection, settings).process(QUESTION)
        return {
            b.name: (b.score, b.support) for b in result.pack.bridges if b.depth == 1 and b.followed_round
        }

    plain, weighed = first_hop(0.0), first_hop(2.0)
    assert set(plain) == set(weighed) and {"Lenna Marsh", "Osric Pell"} <= set(plain)
    for name, (score, support) in plain.items():
        assert weighed[name][1] == pytest.approx(support + 2.0 * score if support else 0.0)
    assert BridgeSettings().support_reading_weight == 2.0  # as shipped; profile before_support_reading: 0
    assert BridgeSettings().loser_decay == 0.6  # losers' new passages decay (before_loser_decay: 1.0)


def test_the_beam_is_on_by_default_and_can_be_turned_off(beam_collection: Collection) -> None:
    assert beam_collection.settings.research.bridge.enabled
    settings = beam_collection.settings.research.tuned(bridge={"enabled": False})
    beams: list[int] = []
    result = ResearchAgent(beam_collection, settings).process(
        QUESTION, on_round=lambda state, _: beams.append(len(state.beam))
    )
    assert set(beams) == {0}
    assert all("Osric Pell director born" not in r.queries for r in result.pack.retrieval_report)


def test_a_steps_own_relation_words_choose_the_reading() -> None:
    """With a decomposed question, a hop reads its candidates by its own step's words: the composer for "the
    person who scored", though the question also names the director's relation."""
    film = _page("quiet-lantern")
    question = "Was the person who scored The Quiet Lantern born where its director was?"
    step = "person who scored The Quiet Lantern"
    assert read_bridge(question, [film], relation=step, settings=BridgeSettings())[0].name == "Lenna Marsh"
    assert read_bridge(QUESTION, [film], relation=step, settings=BridgeSettings())[0].name == "Lenna Marsh"
    assert read_bridge(QUESTION, [film], settings=BridgeSettings())[0].name == "Osric Pell"


def test_a_candidate_is_followed_by_the_next_step_with_it_in_the_slot() -> None:
    steps = ["director of The Quiet Lantern", "birthplace of #1", "What market does #2 have"]
    first = BeamEntry("Osric Pell", 1.0, ("quiet-lantern", "quiet-lantern"), depth=1)
    second = BeamEntry("Dunmore Bay", 1.0, ("osric-pell", "osric-pell"), depth=2, path=("Osric Pell",))
    last = BeamEntry(
        "herring", 1.0, ("dunmore-bay", "dunmore-bay"), depth=3, path=("Osric Pell", "Dunmore Bay")
    )
    assert next_step(steps, first) == "birthplace of Osric Pell"
    assert next_step(steps, second) == "What market does Dunmore Bay have"
    assert next_step(steps, last) == ""  # past the last step: the plain follow-up


def test_a_composed_question_runs_step_by_step_through_the_beam(beam_collection: Collection) -> None:
    """ "What market does the birthplace of the director of The Quiet Lantern have?" decomposes into three steps:
    round 1 also searches the innermost, the beam reads the director from it, the next round searches "birthplace
    of Osric Pell", and the one after the market of the town read from his page."""
    question = "What market does the birthplace of the director of The Quiet Lantern have?"
    settings = beam_collection.settings.research.tuned(bridge={"decompose": True, "relation_cues": True})
    agent = ResearchAgent(beam_collection, settings)
    result = agent.process(question)
    rounds = result.pack.retrieval_report
    assert "director of The Quiet Lantern" in rounds[0].queries
    assert "Osric Pell" in rounds[1].queries and "birthplace of Osric Pell" in rounds[1].queries
    assert "What market does Dunmore Bay have" in rounds[2].queries
    bridges = [(b.name, b.depth) for b in result.pack.bridges]
    assert ("Osric Pell", 1) in bridges and ("Dunmore Bay", 2) in bridges
    found = [c.chunk.doc_id for c in result.pack.final_evidence]
    assert {"quiet-lantern", "osric-pell"} <= set(found[:4]) and "dunmore-bay" in found
    assert not beam_collection.settings.research.bridge.decompose  # off by default
    plain = ResearchAgent(beam_collection, beam_collection.settings.research).process(question)
    assert "director of The Quiet Lantern" not in plain.pack.retrieval_report[0].queries  # off: as before


def _own(title: str, text: str) -> Candidate:
    return Candidate(chunk=Chunk(chunk_id=title, doc_id=title, title=title, text=text))


def test_a_page_the_question_names_restated_by_another_name_is_no_candidate() -> None:
    """The page of the question's own entity opens with its full name; that name restates the page and answers
    nothing the question asks, so the team it names is read instead. A page the question does not name keeps
    its names: there the page is the bridge."""
    keeper = _own(
        "Tobin Varr",
        "Tobin Alaric Varr (born 3 May 1950 in Quellport) is a former goalkeeper for Marrow Rovers.",
    )
    question = "Who scored the first goal of last season for Tobin Varr's team?"
    aliases = (6, 300)
    skip = BridgeSettings(skip_own_aliases=True)
    names = [r.name for r in read_bridge(question, [keeper], own_aliases=aliases, settings=skip)]
    assert "Tobin Alaric Varr" not in names
    assert "Marrow Rovers" in names
    assert BridgeSettings().skip_own_aliases  # on by default (profile before_own_aliases: off)
    assert "Tobin Alaric Varr" in [
        r.name
        for r in read_bridge(
            question, [keeper], own_aliases=aliases, settings=BridgeSettings(skip_own_aliases=False)
        )
    ]
    other = "Who scored the first goal of last season for the goalkeeper born in Quellport's team?"
    assert "Tobin Alaric Varr" in [
        r.name for r in read_bridge(other, [keeper], own_aliases=aliases, settings=skip)
    ]


def test_a_candidates_name_query_takes_name_k_hits(beam_collection: Collection) -> None:
    """A beam candidate's name is searched for ``bridge.name_k`` hits (a bridge page is often not the first hit
    of its name); 0 leaves it at ``retrieval.bridge_k`` like any other follow-up of a name."""

    def name_ks(settings: object) -> set[int | None]:
        ks: set[int | None] = set()

        def snapshot(state: ExecutorState, _report: object) -> None:
            ks.update(q.k for q in state.queries if q.kind == "bridge" and q.text == q.focus)

        ResearchAgent(beam_collection, settings).process(QUESTION, on_round=snapshot)
        return ks

    research = beam_collection.settings.research
    assert research.bridge.name_k == 0  # off by default (profile beam_reading)
    assert name_ks(research.tuned(bridge={"name_k": 5})) == {5}
    assert name_ks(research) == {None}


def test_a_name_in_the_disambiguation_of_a_title_the_question_names_is_read() -> None:
    """ "Quiet Harbour (Marla Quint song)" names the song's singer in its title: a question about "Quiet Harbour"
    reads her as a candidate even from a passage past the hop's best few; a title the question does not name
    gives nothing, and a lone capitalised qualifier is a name too."""
    filler = [
        _own(f"Harbour {n}", f"Harbour {n} is a harbour in Dunmore Bay.") for n in ("North", "South", "East")
    ]
    song = _own(
        "Quiet Harbour (Marla Quint song)", "Quiet Harbour is a ballad recorded in 1957 for Sunlit Records."
    )
    question = "Who played the singer of Quiet Harbour in the film about her life?"
    names = [
        r.name
        for r in read_bridge(
            question, [*filler, song], settings=BridgeSettings(beam=10, min_ratio=0.0, qualifier_weight=4.0)
        )
    ]
    assert "Marla Quint" in names
    default = BridgeSettings(beam=10, min_ratio=0.0)  # on by default (profile before_own_aliases: off)
    assert "Marla Quint" in [r.name for r in read_bridge(question, [*filler, song], settings=default)]
    off = BridgeSettings(beam=10, min_ratio=0.0, qualifier_weight=0.0)
    assert "Marla Quint" not in [r.name for r in read_bridge(question, [*filler, song], settings=off)]
    other = "Who played the singer of the ballad of 1957 in the film about her life?"
    assert "Marla Quint" not in [
        r.name
        for r in read_bridge(
            other, [song], settings=BridgeSettings(beam=10, min_ratio=0.0, qualifier_weight=4.0)
        )
    ]
    peak = _own("Tarn Peak (Colorado)", "Tarn Peak is a summit of the Sawatch Range.")
    assert "Colorado" in [
        r.name
        for r in read_bridge(
            "Which state is Tarn Peak in?",
            [peak],
            settings=BridgeSettings(beam=10, min_ratio=0.0, qualifier_weight=4.0),
        )
    ]


def test_a_possessive_is_no_relation_word() -> None:
    stems = relation_stems("Where was Osric Pell's director born?", "Osric Pell", ["Osric Pell"])
    assert stems == {"director", "born"}  # not the "s" of "Pell's", which every possessive in a page holds


class ChoosesTheDirector:
    """A stand-in for an LLM's next-hop chooser (the remote LLM cannot run here): after every round it names
    the film's director as the entity to follow."""

    def __init__(self) -> None:
        self.rounds = 0

    def choose(self, question: str, evidence: object, asked: object) -> HopChoice:
        self.rounds += 1
        return HopChoice(answered=False, next_query="Osric Pell birthplace", entity="Osric Pell")


def test_the_llms_chosen_entity_is_a_branch_of_the_beam(beam_collection: Collection) -> None:
    """A beam one wide reads only the composer (the wrong bridge). The entity an LLM chose joins the beam as a
    branch of its own: it is followed by name like the beam's candidates, scored with the composer, wins, and
    the next hop is read from its page (the words left to find are those the director's page lacks)."""
    settings = beam_collection.settings.research.tuned(
        bridge={"enabled": True, "max_depth": 2, "beam": 1, "agree_weight": 3.0}, next_hop={"enabled": True}
    )

    def run(chooser: ChoosesTheDirector | None) -> tuple[list[list[str]], list[list[str]]]:
        beams: list[list[str]] = []
        result = ResearchAgent(beam_collection, settings, hop_chooser=chooser).process(
            QUESTION, on_round=lambda state, _: beams.append([e.name for e in state.beam])
        )
        return beams, [r.queries for r in result.pack.retrieval_report]

    alone, alone_queries = run(None)
    assert alone[0] == ["Lenna Marsh"]
    assert not any("Osric Pell" in q for q in alone_queries[1])
    assert "Veranian director born" in alone_queries[2]  # read from the composer's page
    chooser = ChoosesTheDirector()
    beams, queries = run(chooser)
    assert chooser.rounds >= 1
    assert beams[0] == ["Lenna Marsh", "Osric Pell"]  # the LLM's branch beside the beam's
    assert {"Osric Pell", "Osric Pell director born", "Osric Pell birthplace"} <= set(queries[1])
    assert "Veranian quiet lantern" in queries[2]  # read from the director's page: he won
