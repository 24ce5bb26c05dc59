"""Follow-up queries read from evidence: the noise filter, the noun phrases, the query builder and its wording,
on crafted evidence (the passages below are written for these tests)."""

from __future__ import annotations

import pytest

from deepcite.config import FollowupSettings
from deepcite.models import Candidate
from deepcite.research.followup import (
    CITED_AUTHOR,
    DATE_OR_NUMBER,
    FURNITURE_REFERENCE,
    HEADING_RUN_ON,
    LABEL,
    LETTERED,
    SENTENCE,
    STATISTICS_FRAGMENT,
    STRAY_ACRONYM,
    WHOLE_TITLE,
    noise_reason,
)
from deepcite.research.followup_terms import followup_subquestion, followup_terms, noun_phrases
from deepcite.research.nodes import prepare_round_queries
from research.helpers import adapters, chunk, new_state

SETTINGS = FollowupSettings()
QUESTION = "Do statins reduce the risk of stroke after surgery?"
# an abstract in the style of the ones that made the noisy hops of issue 23 (numbers and labels invented)
STATIN_ABSTRACT = (
    "Statins may protect the brain during cardiac operations. We studied 310 patients who underwent coronary "
    "artery bypass grafting (CABG) between 2001-03 and 2004-06. Patients on preoperative statin therapy "
    "(Statin group, n = 120) were compared with the others (Non-statin group, n = 190). Perioperative stroke "
    "occurred less often in the Statin group (OR 0.42, 95% CI 0.91 to 1.20, p < 0.05). Impaired fasting glucose "
    "(IFG) did not change the effect. The Cleveland Clinic registry confirmed the finding (Table 2)."
)
STATIN_TITLE = "Does preoperative statin therapy prevent stroke after coronary surgery?"


@pytest.mark.parametrize(
    ("term", "reason"),
    [
        ("CI 0.91", STATISTICS_FRAGMENT),
        ("OR = 9.2", STATISTICS_FRAGMENT),
        ("p < 0.05", STATISTICS_FRAGMENT),
        ("95%", STATISTICS_FRAGMENT),
        ("2001-03", DATE_OR_NUMBER),
        ("March 2001", DATE_OR_NUMBER),
        ("1990s", DATE_OR_NUMBER),
        ("1968 Place", DATE_OR_NUMBER),
        ("Table 2", FURNITURE_REFERENCE),
        ("Figure 3", FURNITURE_REFERENCE),
        ("the patients in this study were older than the others we saw", SENTENCE),
        ("Qualitative Analysis Although DPR", HEADING_RUN_ON),  # a heading and the sentence below it
        ("Evaluation We", HEADING_RUN_ON),
    ],
)
def test_noise_is_named_with_its_reason(term: str, reason: str) -> None:
    assert noise_reason(term, SETTINGS) == reason


@pytest.mark.parametrize(
    "term",
    [
        "Shirley Temple",
        "Apollo 11",
        "2014 FIFA World Cup",
        "Windows 3.1",
        "Kiss and Tell (1945 film)",
        "What Are Little Girls Made Of?",  # a title-case work's name, not a sentence
        "List of songs recorded by Linkin Park",
        "Cleveland Clinic",
    ],
)
def test_names_are_not_noise(term: str) -> None:
    assert noise_reason(term, SETTINGS) is None
    assert noise_reason(term, SETTINGS, title=True) is None


def test_a_cited_works_author_is_not_a_followup_but_a_name_the_text_is_about_is() -> None:
    text = (
        "Confidence intervals come from the bootstrap (Efron and Tibshirani, 1993), as in Deutsch et al. (2021). "
        "BM25 (Robertson and Zaragoza, 2009) is the sparse baseline. Bill Gates founded Microsoft in 1975, "
        "and Gates led it until 2000."
    )
    for author in ("Efron", "Tibshirani", "Deutsch", "Robertson"):
        assert noise_reason(author, SETTINGS, context=text) == CITED_AUTHOR
    for name in ("BM25", "Bill Gates", "Microsoft", "Gates"):
        assert noise_reason(name, SETTINGS, context=text) is None


def test_a_sentence_case_title_is_a_copied_title_not_a_name() -> None:
    assert noise_reason(STATIN_TITLE, SETTINGS, title=True) == WHOLE_TITLE
    assert noise_reason(STATIN_TITLE, SETTINGS) == SENTENCE
    long_name = " ".join(["Word"] * (SETTINGS.title_max_words + 1))
    assert noise_reason(long_name, SETTINGS, title=True) == WHOLE_TITLE


def test_an_acronym_is_stray_only_where_its_passage_defines_it() -> None:
    assert noise_reason("IFG", SETTINGS, context=STATIN_ABSTRACT) == STRAY_ACRONYM
    assert noise_reason("CABG", SETTINGS, context=STATIN_ABSTRACT) == STRAY_ACRONYM
    assert noise_reason("ABBA", SETTINGS, context="ABBA recorded the album in Stockholm.") is None
    assert noise_reason("IFG", SETTINGS) is None  # without its passage nothing says it is an abbreviation
    # defined in another passage of the evidence (another section of the same abstract)
    elsewhere = "Glucose was measured after surgery; IFG was common."
    assert noise_reason("IFG", SETTINGS, context=elsewhere) is None
    assert noise_reason("IFG", SETTINGS, context=elsewhere, evidence=STATIN_ABSTRACT) == STRAY_ACRONYM


def test_the_short_form_of_a_name_is_a_name_not_a_stray_acronym() -> None:
    boxing = "He won the International Boxing Federation (IBF) title. Runs batted in (RBI) were counted."
    assert noise_reason("IBF", SETTINGS, context=boxing) is None  # its long form is a name
    assert noise_reason("RBI", SETTINGS, context=boxing) == STRAY_ACRONYM  # its long form is common words
    # defined elsewhere in the evidence, after a name: still a name
    assert noise_reason("IBF", SETTINGS, context="Phillips held the IBF title.", evidence=boxing) is None
    # a capital that only opens the sentence says nothing of a name
    assert noise_reason("CABG", SETTINGS, context="Patients (CABG) were seen.") == STRAY_ACRONYM


def test_a_bracketed_qualifier_after_a_name_does_not_make_it_a_sentence() -> None:
    song = "She's Got the Rhythm (And I Got the Blues)"
    assert noise_reason(song, SETTINGS) is None
    assert noise_reason(song, SETTINGS, title=True) is None
    assert noise_reason("The Blizzard (1923 film)", SETTINGS, title=True) is None
    # a sentence or a paper's sentence-case title stays one with a bracket at its end
    assert noise_reason("the patients were older than the controls (Non-statin group)", SETTINGS) == SENTENCE
    assert (
        noise_reason("Statin therapy in stroke patients (the SPARCL study)", SETTINGS, title=True)
        == WHOLE_TITLE
    )
    assert noise_reason("1920 (film)", SETTINGS) == DATE_OR_NUMBER  # a bare year is still a date


def test_a_label_of_the_passages_common_words_is_not_a_name() -> None:
    assert noise_reason("Statin group", SETTINGS, context=STATIN_ABSTRACT) == LABEL
    assert noise_reason("Non-statin", SETTINGS, context=STATIN_ABSTRACT) == LABEL
    assert noise_reason("Cleveland Clinic", SETTINGS, context=STATIN_ABSTRACT) is None


def test_a_quoted_term_of_art_is_searched_but_quoted_small_or_single_words_are_not() -> None:
    clinic = (
        'Readings taken by a doctor run high in "white coat hypertension": the white coat raises the pressure. '
        'It is "de facto" a clinic effect, "in some instances" lasting, as Pickering "et al" wrote of "anxiety".'
    )
    assert noise_reason("white coat hypertension", SETTINGS, context=clinic) is None
    for label in ("de facto", "in some instances", "et al", "anxiety"):
        assert noise_reason(label, SETTINGS, context=clinic) == LABEL
    parent = Candidate(chunk=chunk("c", clinic, title=""), score=1.0)
    found = followup_terms(parent, "Why do clinic readings run high?", per_passage=6, settings=SETTINGS)
    assert "white coat hypertension" in found.terms
    assert {s.text for s in found.skipped} >= {"de facto", "in some instances", "et al"}


def test_noun_phrases_bear_on_the_question_and_hold_no_verb_number_or_acronym() -> None:
    phrases = noun_phrases(STATIN_ABSTRACT, QUESTION, SETTINGS)
    assert "preoperative statin therapy" in phrases and "Perioperative stroke" not in phrases
    assert "perioperative stroke" in phrases  # a sentence opener is written in lower case
    for phrase in phrases:
        words = phrase.split()
        assert SETTINGS.phrase_min_words <= len(words) <= SETTINGS.phrase_max_words
        assert not any(w.isupper() or any(c.isdigit() for c in w) for w in words)
    # every phrase shares a word with the question and adds one
    assert "coronary artery" not in phrases and "cardiac operations" not in phrases


def test_followup_terms_skip_noise_and_fall_back_to_noun_phrases() -> None:
    parent = Candidate(chunk=chunk("s", STATIN_ABSTRACT, title=STATIN_TITLE), score=1.0)
    found = followup_terms(parent, QUESTION, per_passage=6, settings=SETTINGS)
    skipped = {s.text: s.reason for s in found.skipped}
    assert skipped[STATIN_TITLE] == WHOLE_TITLE
    assert skipped["CABG"] == STRAY_ACRONYM and skipped["IFG"] == STRAY_ACRONYM
    assert skipped["Non-statin"] == LABEL and skipped["CI 0.91"] == STATISTICS_FRAGMENT
    assert "Cleveland Clinic" in found.terms  # a real name of the passage is followed
    assert not any("0." in t or "%" in t or t == STATIN_TITLE for t in found.terms)

    no_names = STATIN_ABSTRACT.replace("The Cleveland Clinic registry", "A registry")
    parent = Candidate(chunk=chunk("s", no_names, title=STATIN_TITLE), score=1.0)
    found = followup_terms(parent, QUESTION, per_passage=6, settings=SETTINGS)
    assert found.terms and len(found.terms) <= SETTINGS.phrases_per_passage
    assert found.terms == noun_phrases(no_names, QUESTION, SETTINGS)[: len(found.terms)]


def test_a_documents_names_are_read_only_from_the_sentences_bearing_on_the_question() -> None:
    text = (
        "Statin pretreatment before surgery lowered the risk of stroke in the Cleveland Clinic registry. "
        "Confidence intervals were computed as Kingma and Bootstrap Europe recommend for every cohort."
    )
    in_a_file = chunk("f", text, doc="statins.pdf")
    in_a_file.file = "statins.pdf"
    found = followup_terms(Candidate(chunk=in_a_file, score=1.0), QUESTION, per_passage=6, settings=SETTINGS)
    assert "Cleveland Clinic" in found.terms
    assert "Kingma" not in found.terms and "Bootstrap Europe" not in found.terms
    headed = chunk("h", "D Joint Training of Retriever lowers the risk of stroke after surgery.", doc="s.pdf")
    headed.file = "s.pdf"
    found = followup_terms(Candidate(chunk=headed, score=1.0), QUESTION, per_passage=6, settings=SETTINGS)
    assert not found.terms and {s.reason for s in found.skipped} == {LETTERED}
    # a passage of no document (an encyclopedia page's paragraph) still gives every name
    page = Candidate(chunk=chunk("p", text, title="Statin"), score=1.0)
    assert "Bootstrap Europe" in followup_terms(page, QUESTION, per_passage=6, settings=SETTINGS).terms


def test_a_followup_hop_reads_like_a_persons_question() -> None:
    assert followup_subquestion(["Warfarin"]) == "What is known about Warfarin?"
    assert followup_subquestion(["statin therapy", "perioperative stroke", "Cleveland Clinic"]) == (
        "What is known about statin therapy, perioperative stroke and Cleveland Clinic?"
    )


def test_the_bridge_hop_records_what_it_skipped_for_its_round() -> None:
    state, planner = new_state(QUESTION)
    state.asked.extend(state.plan.subquestions)
    state.round = 2
    state.evidence[("s", "s")] = Candidate(chunk=chunk("s", STATIN_ABSTRACT, title=STATIN_TITLE), score=1.0)
    sub, queries = planner.next_hop(state)
    assert sub.startswith("What is known about ") and sub.endswith("?") and "following up" not in sub
    assert STATIN_TITLE not in sub and "CI" not in sub
    assert {s.round for s in state.skipped_queries} == {3}
    assert {s.text for s in state.skipped_queries} >= {STATIN_TITLE, "CABG", "IFG"}


def test_a_hop_of_noise_alone_is_not_run_and_the_stop_reason_says_why() -> None:
    state, planner = new_state(QUESTION)
    state.asked.extend(state.plan.subquestions)
    noise = "Patients (CABG) and (IFG) were seen. In 2001-03 (OR 0.42, 95% CI 0.91 to 1.20) too."
    state.evidence[("n", "n")] = Candidate(chunk=chunk("n", noise, title=STATIN_TITLE), score=1.0)
    prepare_round_queries(state, adapters(planner))
    assert state.done and state.queries == []
    assert "follow-ups skipped as noise" in state.stop_reason
    assert "'2001-03' (a date or a bare number)" in state.stop_reason
    assert "(a passage's whole title, not a name)" in state.stop_reason
