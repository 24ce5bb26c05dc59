"""The evidence pack's final order (research/linking.py): relevance to the whole question plus link lifts."""

from __future__ import annotations

import numpy as np
import pytest

from deepcite.config import EvidenceRankingSettings
from deepcite.models import Candidate, Provenance
from deepcite.research.linking import rank_evidence
from research.helpers import titled_pack, unit_rows

QUESTION = "Who did the actor who played Benton Fraser have a child with?"


def test_a_bridge_passage_rises_through_the_title_its_parent_mentions() -> None:
    pack = titled_pack(
        ("fraser", "Benton Fraser", "Benton Fraser is a character played by Paul Gross in Due South."),
        ("other1", "Callum Keith Rennie", "Callum Keith Rennie is a Canadian actor."),
        ("other2", "Dean McDermott", "Dean McDermott is a Canadian actor and television host."),
        ("gross", "Paul Gross", "Gross has two children with Martha Burns, an actress."),
    )
    question_vector = unit_rows([1, 0, 0])[0]
    vectors = unit_rows([0.9, 0.1, 0], [0.5, 0.5, 0], [0.5, 0.5, 0], [0.3, 0.7, 0])
    settings = EvidenceRankingSettings()

    ranked = rank_evidence(QUESTION, question_vector, pack, vectors, settings)

    order = [c.chunk.chunk_id for c in ranked]
    assert order[:2] == ["fraser", "gross"]  # the bridge passage was last in the rounds' order
    link = ranked[1].link
    assert link is not None and link.edge == "title_link" and link.entity == "paul gross"
    assert link.via == "Benton Fraser"
    without_links = rank_evidence(
        QUESTION, question_vector, pack, vectors, settings.model_copy(update={"link_weight": 0.0})
    )
    assert [c.chunk.chunk_id for c in without_links][-1] == "gross"


def test_a_passage_the_question_names_by_title_comes_first() -> None:
    pack = titled_pack(
        ("near", "Due South", "Due South is a police drama set in Chicago."),
        ("named", "Benton Fraser", "A Mountie from the Northwest Territories."),
    )
    question_vector = unit_rows([1, 0])[0]
    vectors = unit_rows([1, 0.2], [0.6, 0.8])

    settings = EvidenceRankingSettings(pack_weight=0.0, question_name_weight=0.0)  # the title's weight alone
    ranked = rank_evidence(QUESTION, question_vector, pack, vectors, settings)
    assert [c.chunk.chunk_id for c in ranked] == ["named", "near"]
    untitled = rank_evidence(
        QUESTION, question_vector, pack, vectors, settings.model_copy(update={"title_weight": 0.0})
    )
    assert [c.chunk.chunk_id for c in untitled] == ["near", "named"]


def test_the_order_places_a_page_of_each_name_the_question_gives_before_a_second_passage_on_one() -> None:
    """Two passages on the euro outscore the page of the other name the question gives; with
    ``question_name_weight`` the second euro passage waits until a passage on Signmark is placed, and the scores
    still fall down the order (each the score its place was won with)."""
    question = "What currency predated the Euro in the country Signmark is from?"
    pack = titled_pack(
        ("euro1", "Euro", "The currency is used by most member states of the union."),
        ("euro2", "Euro", "The currency replaced older coins and notes in 2002."),
        ("belgium", "Belgium", "A federal state in western Europe with three regions."),
        ("signmark", "Signmark", "A rapper who raps in sign language, from Helsinki."),
    )
    question_vector = unit_rows([1, 0])[0]
    vectors = unit_rows([0.9, 0.1], [0.85, 0.15], [0.6, 0.8], [0.4, 0.9])
    plain = EvidenceRankingSettings(pack_weight=0.0, question_name_weight=0.0)
    # as shipped; the profile before_question_names is the order without it
    assert EvidenceRankingSettings().question_name_weight == 1.0

    ranked = rank_evidence(question, question_vector, pack, vectors, plain)
    assert [c.chunk.chunk_id for c in ranked] == ["euro1", "euro2", "signmark", "belgium"]
    covering = plain.model_copy(update={"question_name_weight": 1.0})
    ranked = rank_evidence(question, question_vector, pack, vectors, covering)
    assert [c.chunk.chunk_id for c in ranked] == ["euro1", "signmark", "euro2", "belgium"]
    scores = [c.score for c in ranked]
    assert scores == sorted(scores, reverse=True)
    unnamed = rank_evidence("Which currency came first?", question_vector, pack, vectors, covering)
    assert [c.chunk.chunk_id for c in unnamed] == ["euro1", "euro2", "belgium", "signmark"]


def test_a_shared_name_lifts_less_than_a_title_link_and_ties_keep_the_rounds_order() -> None:
    pack = titled_pack(
        ("head", "Due South", "Due South stars Paul Gross and David Marciano."),
        ("shares", "Cast list", "The cast included David Marciano."),
        ("titled", "Paul Gross", "He was born in Calgary."),
    )
    question_vector = unit_rows([1, 0])[0]
    vectors = unit_rows([1, 0], [0.5, 0.5], [0.5, 0.5])
    settings = EvidenceRankingSettings(pack_weight=0.0)

    ranked = rank_evidence("Who starred in Due South?", question_vector, pack, vectors, settings)
    assert [c.chunk.chunk_id for c in ranked] == ["head", "titled", "shares"]
    assert [c.link.edge if c.link else None for c in ranked] == ["title_link", "title_link", "shared_name"]
    flat = rank_evidence(
        "Who starred in Due South?",
        question_vector,
        pack,
        vectors,
        settings.model_copy(update={"link_weight": 0.0, "shared_name_weight": 0.0, "title_weight": 0.0}),
    )
    assert [c.chunk.chunk_id for c in flat] == ["head", "shares", "titled"]
    assert rank_evidence("anything", question_vector, [], vectors[:0], settings) == []


def test_a_page_the_top_passage_names_rises_over_a_passage_naming_the_top_page() -> None:
    """The soundtrack's page names its producer's page (the chain's next link); a song's page names the film
    the soundtrack is of (another passage about the question's subject). Both are title-linked to the top
    passage; with ``backlink_weight`` under 1 (as shipped) only the page the top passage names gets the whole lift."""
    pack = titled_pack(
        ("album", "Natural Born Killers (soundtrack)", "The album was produced by Trent Reznor."),
        ("song", "Burn (song)", "Burn is a song recorded for the film Natural Born Killers."),
        ("producer", "Trent Reznor", "Michael Trent Reznor (born 1965) is an American musician."),
    )
    question = "The soundtrack of Natural Born Killers was produced by a man born in what year?"
    question_vector = unit_rows([1, 0])[0]
    vectors = unit_rows([1, 0.1], [0.8, 0.6], [0.6, 0.8])
    both_ways = EvidenceRankingSettings(pack_weight=0.0, backlink_weight=1.0)

    ranked = rank_evidence(question, question_vector, pack, vectors, both_ways)
    assert [c.chunk.chunk_id for c in ranked] == ["album", "song", "producer"]
    assert [c.link.edge if c.link else None for c in ranked[1:]] == ["title_link", "title_link"]
    forward = EvidenceRankingSettings(pack_weight=0.0)  # the shipped backlink_weight, 0.5
    assert forward.backlink_weight < 1.0
    ranked = rank_evidence(question, question_vector, pack, vectors, forward)
    assert [c.chunk.chunk_id for c in ranked] == ["album", "producer", "song"]
    assert ranked[1].link is not None and ranked[1].link.entity == "trent reznor"


def test_the_research_pack_ranks_the_chain_together_and_says_which_link_lifted(chain_collection) -> None:  # noqa: ANN001
    """The default engine over a real collection (the chain corpus, real MiniLM): the passages of the chain
    album -> performer -> spouse rank above passages that only share the question's words, which the rounds'
    order put between them; each linked passage names the link that lifted it."""
    from deepcite.research.agent import ResearchAgent

    question = "Who is the spouse of the performer of Velvet Harbor?"
    chain = ["Velvet Harbor", "Orla Brennick", "Tomas Vell"]
    word_matches = {"Spouses of folk singers", "Salt Meadow"}

    def ranks(order: list[str]) -> tuple[list[int], list[int]]:
        return [order.index(t) for t in chain], [order.index(t) for t in word_matches if t in order]

    research = chain_collection.settings.research
    linked = ResearchAgent(chain_collection, research).process(question).pack.final_evidence
    on_chain, off_chain = ranks([c.chunk.title for c in linked])
    assert on_chain[:2] == [0, 1] and max(on_chain) < min(off_chain, default=len(linked))
    performer = linked[1].link
    assert performer is not None and performer.edge == "title_link" and performer.via == "Velvet Harbor"
    rounds_order = research.tuned(ranking={"enabled": False})
    unlinked = ResearchAgent(chain_collection, rounds_order).process(question)
    on_chain, off_chain = ranks([c.chunk.title for c in unlinked.pack.final_evidence])
    assert max(on_chain) > min(off_chain)  # the rounds' order puts word matches inside the chain
    assert all(c.link is None for c in unlinked.pack.final_evidence)


SPOUSE = "Who is the spouse of the director of Big Eyes?"


def _spouse_pack() -> tuple[list[Candidate], np.ndarray, np.ndarray]:
    """The film's page, two pages close to the question's words, and the bridge passage: a page titled after
    another film that names the director (the bridge the beam read from the film's page) and his spouse, and
    shares no title with the film's page."""
    pack = titled_pack(
        (
            "film",
            "Big Eyes",
            "Big Eyes is an American drama directed by Tim Burton and written by Scott Alexander.",
        ),
        (
            "near1",
            "Angel Eyes (film)",
            "Angel Eyes is an American drama about a police officer and her spouse.",
        ),
        ("near2", "Eyes Wide Open", "Eyes Wide Open is an American film whose director married its star."),
        (
            "bridge",
            "Planet of the Apes (2001 film)",
            "Tim Burton met Helena Bonham Carter on the set of the film.",
        ),
    )
    question_vector = unit_rows([1, 0, 0])[0]
    vectors = unit_rows([0.9, 0.1, 0], [0.7, 0.3, 0], [0.7, 0.3, 0], [0.2, 0.8, 0])
    return pack, question_vector, vectors


def test_a_passage_naming_the_beams_bridge_rises_beside_the_passage_it_was_read_from() -> None:
    """The bridge passage shares only the director's name with the film's page: a shared name lifts it little,
    the same name as a bridge the beam read lifts it by ``bridge_link_weight``."""
    pack, question_vector, vectors = _spouse_pack()
    settings = EvidenceRankingSettings(bridge_link_weight=0.5, bridge_link_spread=1.0)

    plain = rank_evidence(SPOUSE, question_vector, pack, vectors, settings)
    assert [c.chunk.chunk_id for c in plain][-1] == "bridge"
    read = rank_evidence(SPOUSE, question_vector, pack, vectors, settings, {"Tim Burton": 2})
    assert [c.chunk.chunk_id for c in read][:2] == ["film", "bridge"]
    link = read[1].link
    assert link is not None and link.entity == "tim burton" and link.via == "Big Eyes"
    assert link.edge == "shared_name"  # a shared name, weighed as the beam's bridge
    off = settings.model_copy(update={"bridge_link_weight": 0.0})
    assert [
        c.chunk.chunk_id
        for c in rank_evidence(SPOUSE, question_vector, pack, vectors, off, {"Tim Burton": 2})
    ][-1] == "bridge"


def test_a_bridge_many_passages_or_pages_name_links_less() -> None:
    """A bridge the whole pack shares ("American") is no chain: its weight falls with the passages sharing it
    (``bridge_link_spread``) and with the collection's passages mentioning it (``bridge_link_specificity``)."""
    from deepcite.research.linking import _keys, bridge_link_weights

    pack, _, _ = _spouse_pack()
    settings = EvidenceRankingSettings(
        bridge_link_weight=0.6, bridge_link_spread=1.0, bridge_link_specificity=1.0
    )
    keys = [_keys(c.chunk, settings) for c in pack]
    weights = bridge_link_weights({"Tim Burton": 2, "American": 2, "Scott Alexander": 2}, keys, settings)
    assert weights["tim burton"] == pytest.approx(0.6)  # two passages share it
    assert weights["american"] == pytest.approx(0.6 / 2)  # three passages share it
    assert "scott alexander" not in weights  # one passage names it: it links nothing
    frequent = bridge_link_weights({"Tim Burton": 62}, keys, settings)
    assert frequent["tim burton"] == pytest.approx(0.6 / 3)  # log2(2 + 62) / 2 = 3
    floor = settings.model_copy(update={"bridge_link_spread": 8.0})
    assert bridge_link_weights({"American": 2}, keys, floor)["american"] == settings.shared_name_weight
    assert (
        bridge_link_weights({"Tim Burton": 2}, keys, settings.model_copy(update={"bridge_link_weight": 0}))
        == {}
    )


def test_the_pack_links_the_bridges_the_beam_read() -> None:
    """finalize's order takes every candidate the beam read, with the collection's mentions of it (none known
    without an entity graph); nothing when the bridge links are off."""
    from deepcite.config import ResearchSettings
    from deepcite.research.nodes.finalize_evidence_pack import bridge_names
    from deepcite.research.state import BeamEntry
    from research.helpers import adapters, new_state

    assert (
        ResearchSettings().ranking.bridge_link_weight == 0.5
    )  # on by default; profile before_bridge_links: off
    settings = ResearchSettings().tuned(ranking={"bridge_link_weight": 0.5})
    state, planner = new_state(SPOUSE, settings)
    assert bridge_names(state, adapters(planner), {}) == {}
    state.beam_read = [
        BeamEntry("Tim Burton", 1.0, ("film", "film")),
        BeamEntry("American", 0.6, ("film", "film")),
    ]
    assert bridge_names(state, adapters(planner), {}) == {"Tim Burton": 0, "American": 0}
    assert bridge_names(state, adapters(planner), {"tim burton": 7}) == {"Tim Burton": 7, "American": 0}
    off = settings.tuned(ranking={"bridge_link_weight": 0.0})
    assert bridge_names(state, adapters(planner, settings=off), {}) == {}


def test_a_hub_page_many_passages_name_lifts_them_less_than_the_chain_s_page() -> None:
    # "United States" is named by many passages of the collection: a title link through it is no chain; the
    # composer's page, which only the question's page names, is the chain's next link
    pack = titled_pack(
        (
            "asch",
            "Aschenbrödel",
            "Aschenbrödel is a ballet by Johann Strauss II, staged in the United States.",
        ),
        ("us", "United States", "The United States is a country in North America."),
        ("boston", "Boston", "Boston is the largest city of Massachusetts in the United States."),
        ("strauss", "Johann Strauss II", "Strauss was born in St. Ulrich near Vienna."),
    )
    question = "Where was the composer of Aschenbrödel born?"
    question_vector = np.array([1.0, 0.0], dtype=np.float32)
    vectors = unit_rows(*[[c, (1 - c * c) ** 0.5] for c in (0.9, 0.8, 0.7, 0.4)])
    # before_hub_links, and links lifting both ways alike (Boston names the hub's page: a backlink)
    settings = EvidenceRankingSettings(pack_weight=0.0, link_specificity=0.0, backlink_weight=1.0)
    frequency = {"united states": 500, "johann strauss ii": 2}

    plain = [
        c.chunk.chunk_id
        for c in rank_evidence(question, question_vector, pack, vectors, settings, frequency=frequency)
    ]
    assert plain.index("boston") < plain.index("strauss")  # the hub's title link lifts Boston as much
    hubs = settings.model_copy(update={"link_specificity": 1.5})  # the default
    ranked = rank_evidence(question, question_vector, pack, vectors, hubs, frequency=frequency)
    order = [c.chunk.chunk_id for c in ranked]
    assert order.index("strauss") < order.index("boston")
    strauss = ranked[order.index("strauss")].link
    assert strauss is not None and strauss.edge == "title_link" and strauss.entity == "johann strauss ii"
    # the same through the pack: a name most of the pack's passages mention links less (link_spread)
    spread = settings.model_copy(update={"link_spread": 2.0})
    spread_order = [c.chunk.chunk_id for c in rank_evidence(question, question_vector, pack, vectors, spread)]
    assert spread_order.index("strauss") < spread_order.index("boston")


_TIE = """
from deepcite.research.linking import _Keys, _link
a = _Keys(titles=frozenset({"page a"}), names=frozenset({"lake vell", "port orla", "tidewater"}))
b = _Keys(titles=frozenset({"page b"}), names=frozenset({"lake vell", "port orla", "galway"}))
print(_link(a, b, frozenset()))
"""


def test_a_link_names_the_same_entity_in_every_process() -> None:
    """Two passages share two names of one length: the link (whose weight its name sets) names the first in
    alphabetical order, whatever order the process's string hashing gives the set."""
    import os
    import subprocess
    import sys

    chosen = {
        subprocess.run(
            [sys.executable, "-c", _TIE],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in range(8)
    }
    assert chosen == {"('shared_name', 'lake vell', True, True)"}


def _found_for(cand: Candidate, name: str) -> Candidate:
    """``cand`` as a bridge round's query on ``name`` found it."""
    hit = Provenance(round=2, query=name, mode="hybrid", subquestion="", rank=1, score=1.0, focus=name)
    return cand.model_copy(update={"provenance": [hit]})


def test_the_order_places_a_passage_for_each_hop_of_the_beam_before_a_second_one_of_any() -> None:
    """The beam's hop answered "Finland": the first passage a query on it found gains ``hop_weight`` until one is
    placed, so it comes before a second passage on a subject already placed; a passage found for a name that was
    no hop's answer gains nothing, and the scores still fall down the order."""
    question = "What currency predated the Euro in the country Signmark is from?"
    euro1, euro2, belgium, markka, other = titled_pack(
        ("euro1", "Euro", "The currency is used by most member states of the union."),
        ("euro2", "Euro", "The currency replaced older coins and notes in 2002."),
        ("belgium", "Belgium", "Belgium's currency was the franc."),
        ("markka", "Finnish markka", "The markka was the currency until 2002."),
        ("other", "Finnish markka", "The markka was divided into 100 pennies."),
    )
    pack = [
        euro1,
        euro2,
        _found_for(belgium, "Belgium"),
        _found_for(markka, "Finland"),
        _found_for(other, "Finland"),
    ]
    question_vector = unit_rows([1, 0])[0]
    vectors = unit_rows([1, 0], [0.9, 0.3], [0.85, 0.4], [0.65, 0.75], [0.6, 0.8])
    plain = EvidenceRankingSettings(
        pack_weight=0.0, title_weight=0.0, question_name_weight=0.0, hop_weight=0.0
    )
    assert (
        EvidenceRankingSettings().hop_weight == 0.3
    )  # as shipped; profile before_hop_cover is the order without it
    hops = {"Finland": 1}

    ranked = rank_evidence(question, question_vector, pack, vectors, plain, hop_answers=hops)
    assert [c.chunk.chunk_id for c in ranked] == ["euro1", "euro2", "belgium", "markka", "other"]
    covering = plain.model_copy(update={"hop_weight": 0.3})
    ranked = rank_evidence(question, question_vector, pack, vectors, covering, hop_answers=hops)
    assert [c.chunk.chunk_id for c in ranked] == ["euro1", "markka", "euro2", "belgium", "other"]
    scores = [c.score for c in ranked]
    assert scores == sorted(scores, reverse=True)
    unanswered = rank_evidence(question, question_vector, pack, vectors, covering)
    assert [c.chunk.chunk_id for c in unanswered] == ["euro1", "euro2", "belgium", "markka", "other"]


def test_the_page_of_a_hops_answer_stands_for_the_hop_too() -> None:
    """With ``hop_page_weight`` the page titled by a hop's answer gains until one such page is placed, though no
    query on the answer found it; without it, or with no hop answered, it keeps its place."""
    question = "What currency predated the Euro in the country Signmark is from?"
    pack = titled_pack(
        ("euro1", "Euro", "The currency is used by most member states of the union."),
        ("euro2", "Euro", "The currency replaced older coins and notes in 2002."),
        ("finland", "Finland", "Finland is a country in northern Europe."),
    )
    question_vector = unit_rows([1, 0])[0]
    vectors = unit_rows([1, 0], [0.9, 0.3], [0.65, 0.75])
    plain = EvidenceRankingSettings(
        pack_weight=0.0, title_weight=0.0, question_name_weight=0.0, hop_weight=0.0
    )
    hops = {"Finland": 1}
    assert EvidenceRankingSettings().hop_page_weight == 0.2  # as shipped; profile before_hop_page: without it

    ranked = rank_evidence(question, question_vector, pack, vectors, plain, hop_answers=hops)
    assert [c.chunk.chunk_id for c in ranked] == ["euro1", "euro2", "finland"]
    page = plain.model_copy(update={"hop_page_weight": 0.3})
    ranked = rank_evidence(question, question_vector, pack, vectors, page, hop_answers=hops)
    assert [c.chunk.chunk_id for c in ranked] == ["euro1", "finland", "euro2"]
    unanswered = rank_evidence(question, question_vector, pack, vectors, page)
    assert [c.chunk.chunk_id for c in unanswered] == ["euro1", "euro2", "finland"]
