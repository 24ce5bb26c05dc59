"""Hops a researcher would write (issue 45): no hop from a document's title, a file name, a contraction, a release
tag or the words of a document about something else; the rules by what a term is, on crafted rounds."""

from __future__ import annotations

import pytest

from deepcite.config import FollowupSettings
from deepcite.models import Candidate, Chunk, SkippedQuery
from deepcite.research.followup import (
    CONTRACTION,
    DOCUMENT_TITLE,
    FILE_NAME,
    VERSION_TAG,
    bearing_names,
    document_names,
    kind_reason,
    names_a_document,
    noise_reason,
)
from deepcite.research.followup_terms import followup_terms
from deepcite.research.nodes import read_bridge
from deepcite.research.planner import QueryPlanner
from deepcite.research.state import ExecutorState, HopChoice

from .helpers import adapters, new_state

SETTINGS = FollowupSettings()
QUESTION = "What did the Lantern 2.3 release change for users?"
NOTES = (
    "Lantern is a desktop search tool. The 2.3 release changed how users search, as the maintainers put it, "
    "We'd rather ship late: RC1 went to testers, v2.3.0 is the build users get, and the settings users kept in "
    "lantern_config.toml move to the Harbor Viewer. The old pane is gone; the index runs in Quillmark."
)


def _passage(cid: str, text: str, *, title: str, file: str | None = None) -> Candidate:
    return Candidate(chunk=Chunk(chunk_id=cid, doc_id=cid, text=text, title=title, file=file), score=1.0)


ENGINES = "Which search engines does the PaSa agent compare with?"


def _pasa() -> Candidate:
    """A passage of a paper (a file) naming a search engine that is the title of another document, and one that
    is not."""
    return _passage(
        "pasa",
        "The PaSa agent is compared with search engines: Semantic Scholar and Google Scholar.",
        title="PaSa: An LLM Agent for Comprehensive Academic Paper Search",
        file="pasa.pdf",
    )


@pytest.mark.parametrize(
    ("term", "reason"),
    [
        ("We'd", CONTRACTION),
        ("don't", CONTRACTION),
        ("It's", CONTRACTION),
        ("RC1", VERSION_TAG),
        ("v0.5.5", VERSION_TAG),
        ("2.0.1-rc1", VERSION_TAG),
        ("beta2", VERSION_TAG),
        ("Version 2.0", VERSION_TAG),
        ("wiki_duck.html", FILE_NAME),
        ("2020.acl-main.447.pdf", FILE_NAME),
        ("lantern_config.toml", FILE_NAME),
        ("query1", FILE_NAME),
        # names stay names
        ("It'll Be Me", None),
        ("O'Brien", None),
        ("Gisvi's", None),
        ("V2", None),
        ("GPT-4o", None),
        ("Node.js", None),
        ("AC/DC", None),
        ("Python 3.11", None),
        ("LongT5", None),
    ],
)
def test_what_a_term_is_decides_whether_it_may_name_a_hop(term: str, reason: str | None) -> None:
    assert kind_reason(term) == reason
    if reason is not None:  # every follow-up, chain answer and graph entity is checked by noise_reason
        assert noise_reason(term, SETTINGS) == reason


def test_a_document_is_named_by_its_title_its_parts_and_its_file_but_a_page_of_an_encyclopedia_is_not() -> (
    None
):
    documents = document_names(
        [
            Chunk(chunk_id="d", doc_id="d", text="", title="Duck - Wikipedia", file="wiki_duck.html"),
            Chunk(
                chunk_id="f",
                doc_id="f",
                text="",
                title="National Flag of Canada Day - Wikipedia",
                file="x.html",
            ),
            Chunk(chunk_id="n", doc_id="n", text="", title="norwich-city", file="norwich-city.txt"),
            Chunk(chunk_id="p", doc_id="p", text="", title="Mallard"),  # a page: its title is its entity
        ]
    )
    for term in ["Duck - Wikipedia", "Duck", "wiki_duck.html", "wiki_duck", "15 National Flag of Canada Day"]:
        assert names_a_document(term, documents), term
    assert names_a_document("norwich-city", documents)
    assert not names_a_document("Mallard", documents)
    assert not names_a_document("Canada", documents)  # a word of a title is not the title
    assert not names_a_document("Duck", frozenset())


def test_a_document_gives_only_the_names_of_its_sentences_on_the_question() -> None:
    notes = _passage("notes", NOTES, title="Lantern 2.3 release notes", file="lantern-release-notes.md")
    names = bearing_names(notes.chunk, QUESTION, SETTINGS.document_name_min_question_share)
    assert "Harbor Viewer" in names  # its sentence says what changed for users
    assert "Quillmark" not in names  # a sentence of the document that says nothing the question asks
    # a document that names none of the question's names is about something else, whatever words it shares
    other = _passage(
        "flag", "The office released a change of users' rights on the Heritage Day.", title="Flag"
    )
    assert bearing_names(other.chunk, QUESTION, SETTINGS.document_name_min_question_share) == set()


def _round_one(question: str, selected: list[Candidate]) -> tuple[ExecutorState, QueryPlanner]:
    """A state after the first round's selection, as read_bridge finds it, and its planner."""
    state, planner = new_state(question)
    state.round = 1
    state.asked.append(question)
    state.selected = selected
    for cand in selected:
        state.add_evidence(cand)
    read_bridge(state, adapters(planner))
    return state, planner


def test_the_beam_reads_no_title_file_name_contraction_or_tag_of_a_document() -> None:
    notes = _passage("notes", NOTES, title="Lantern 2.3 release notes", file="lantern-release-notes.md")
    state, planner = _round_one(QUESTION, [notes])
    assert [e.name for e in state.beam] == ["Harbor Viewer"]
    skipped = {(s.text, s.reason, s.round) for s in state.skipped_queries}
    assert ("We'd", CONTRACTION, 2) in skipped  # reported for the hop it would have named, before it runs
    assert ("RC1", VERSION_TAG, 2) in skipped
    hop = planner.next_hop(state)
    assert hop is not None and hop[0] == "What is known about Harbor Viewer?"


def test_the_beam_skips_a_name_that_is_another_documents_title_in_the_hop_it_would_have_run() -> None:
    question, pasa = ENGINES, _pasa()
    page = _passage(
        "s2", "Semantic Scholar is a search engine.", title="Semantic Scholar - Wikipedia", file="s2.html"
    )
    state, _planner = _round_one(question, [pasa, page])
    assert [e.name for e in state.beam] == ["Google Scholar"]
    assert SkippedQuery(text="Semantic Scholar", reason=DOCUMENT_TITLE, round=2) in state.skipped_queries


def test_an_entity_an_llm_chose_is_refused_when_it_names_a_document() -> None:
    """The LLM reading the round (a stand-in choice, as node choose_next_hop records it) picks the page's title:
    it joins the beam no more than a title the rules read would."""
    notes = _passage("notes", NOTES, title="Lantern 2.3 release notes", file="lantern-release-notes.md")
    state, planner = new_state(QUESTION)
    state.round, state.selected = 1, [notes]
    state.add_evidence(notes)
    state.hop_choices.append(
        HopChoice(answered=False, next_query="release notes", entity="Lantern release notes", round=1)
    )
    read_bridge(state, adapters(planner))
    assert "Lantern release notes" not in [e.name for e in state.beam]
    assert SkippedQuery(text="Lantern release notes", reason=DOCUMENT_TITLE, round=2) in state.skipped_queries


def test_an_encyclopedia_page_is_read_as_before() -> None:
    """A page's title is its entity and every sentence of it may hold the bridge (MuSiQue, HotpotQA)."""
    page = _passage(
        "fawell",
        "Harris W. Fawell was born in West Chicago. He served in the Illinois Senate and in New Zealand.",
        title="Harris W. Fawell",
    )
    state, _planner = _round_one("In what county is the city where Harris W. Fawell was born?", [page])
    assert "West Chicago" in [e.name for e in state.beam]
    assert not state.skipped_queries


def test_a_follow_up_naming_a_document_of_the_evidence_is_skipped() -> None:
    question, pasa = ENGINES, _pasa()
    page = Chunk(chunk_id="s2", doc_id="s2", text="", title="Semantic Scholar - Wikipedia", file="s2.html")
    documents = document_names([pasa.chunk, page])
    found = followup_terms(pasa, question, documents=documents, per_passage=6, settings=SETTINGS)
    assert found.terms == ["Google Scholar"]
    reasons = {s.text: s.reason for s in found.skipped}
    assert reasons == {
        "PaSa: An LLM Agent for Comprehensive Academic Paper Search": DOCUMENT_TITLE,
        "Semantic Scholar": DOCUMENT_TITLE,
    }


def test_a_term_skipped_once_is_reported_once() -> None:
    state, _planner = new_state(QUESTION)
    state.skip(SkippedQuery(text="RC1", reason=VERSION_TAG, round=2))
    state.skip(SkippedQuery(text="rc1", reason=VERSION_TAG, round=3))
    assert [(s.text, s.round) for s in state.skipped_queries] == [("RC1", 2)]
