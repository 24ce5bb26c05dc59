"""Subject links in the pack's order (research.ranking.subject_link_weight): a page titled after an aspect of a name
("History of Varnia") rises beside the passage that names that name, as a page named by its title does."""

from __future__ import annotations

from deepcite.config import EvidenceRankingSettings
from deepcite.research.linking import _keys, _link, rank_evidence, title_subject
from research.helpers import titled_pack, unit_rows

QUESTION = "Who first settled the colony that became the state whose official sport is ring tilting?"


def test_a_titles_subject_is_what_follows_its_first_joining_word() -> None:
    assert title_subject("History of Varnia", ["of"]) == "varnia"
    assert title_subject("Botanical Garden of the University of Ostra", ["of"]) == "university of ostra"
    assert title_subject("Arrondissement of Pellin, Varnia", ["of"]) == "pellin"  # the head before a comma
    assert title_subject("Varnia (state)", ["of"]) == ""
    assert title_subject("Offenbach", ["of"]) == ""  # a whole word only


def test_a_page_about_an_aspect_of_a_name_rises_beside_the_passage_naming_it() -> None:
    """The state sports' list names Varnia; the chain's next page is "History of Varnia", last in the rounds' order
    and further from the question than two passages on sports. Its subject link to the list lifts it above them;
    without it (weight 0) the two share the name Varnia only, and it stays last."""
    pack = titled_pack(
        ("sports", "List of state sports", "The sport of the state of Varnia is ring tilting, since 1962."),
        ("tilting", "Ring tilting", "Ring tilting is an equestrian sport of riders and lances."),
        ("lances", "Lance", "A lance is a spear for a rider on horseback."),
        ("history", "History of Varnia", "English settlers first arrived in Varnia in 1634."),
    )
    question_vector = unit_rows([1, 0, 0])[0]
    vectors = unit_rows([0.9, 0.1, 0], [0.6, 0.4, 0], [0.5, 0.5, 0], [0.3, 0.7, 0])
    settings = EvidenceRankingSettings(subject_link_weight=0.8)
    assert EvidenceRankingSettings().subject_link_weight == 0.8  # shipped on

    keys = [_keys(c.chunk, settings) for c in pack]
    assert _link(keys[0], keys[3]) == ("subject_link", "varnia", True, False)
    ranked = rank_evidence(QUESTION, question_vector, pack, vectors, settings)
    assert [c.chunk.chunk_id for c in ranked][:2] == ["sports", "history"]

    off = settings.model_copy(update={"subject_link_weight": 0.0})
    off_keys = [_keys(c.chunk, off) for c in pack]
    assert _link(off_keys[0], off_keys[3]) == ("shared_name", "varnia", True, True)
    unlinked = rank_evidence(QUESTION, question_vector, pack, vectors, off)
    assert [c.chunk.chunk_id for c in unlinked][-1] == "history"


def test_a_subject_after_in_links_too() -> None:
    """The word "in" joins a title to its subject as "of" does (shipped: both): the film "Meet Me in Port Orla" is
    linked to the passage that names Port Orla, where with "of" alone nothing links the two."""
    assert title_subject("Meet Me in Port Orla", ["of", "in"]) == "port orla"
    named = titled_pack(
        ("born", "Edda Thorne", "The singer Edda Thorne was born in the city of Port Orla."),
        ("film", "Meet Me in Port Orla", "A musical film with Tom Vell as John."),
    )
    shipped = EvidenceRankingSettings()
    assert shipped.subject_link_words == ["of", "in"]
    keys = [_keys(c.chunk, shipped) for c in named]
    assert _link(keys[0], keys[1]) == ("subject_link", "port orla", True, False)
    only_of = shipped.model_copy(update={"subject_link_words": ["of"]})
    keys = [_keys(c.chunk, only_of) for c in named]
    assert _link(keys[0], keys[1]) is None  # the film's passage does not name the city
