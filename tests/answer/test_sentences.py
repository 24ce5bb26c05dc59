"""Sentence splitting on real abstract passages (hand-labelled PubMedQA excerpts)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pysbd
import pytest

from answer.conftest import HashingEmbedder
from deepcite.answer.context import ContextChunk
from deepcite.answer.sentence_scorer import SentenceScorer
from deepcite.config import AnswerSettings
from deepcite.text import (
    _Segmenter,
    _sentences,
    first_sentence,
    labelled_parts,
    list_items,
    quoted_sentences,
    split_sentences,
)

CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "answer" / "sentences.json").read_text("utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_split_matches_the_hand_labelled_boundaries(case: dict) -> None:
    assert split_sentences(case["text"]) == case["sentences"]


def test_blank_text_has_no_sentences() -> None:
    assert split_sentences(" \n ") == []


def test_first_sentence_reads_a_prefix_and_agrees_with_the_whole_split() -> None:
    long_text = (
        "Patients with AF had a higher stroke rate vs. controls (HR 2.1, 95% CI 1.4-3.0). "
        + "Anticoagulation reduced it by 64%. " * 40
    )
    assert first_sentence(long_text, 120) == split_sentences(long_text)[0]
    one_long_sentence = "Risk rose with age " + "and with blood pressure " * 40 + "in every cohort."
    assert first_sentence(one_long_sentence, 50) == one_long_sentence  # no break in the window: whole text
    assert first_sentence("", 50) == ""


def test_threads_splitting_at_once_get_the_sequential_sentences() -> None:
    """The answer's parts are written in parallel threads; a shared pysbd Segmenter mixed their texts up
    (191 of 250 splits wrong in 4 threads), so an offline answer changed from run to run."""
    corpus = Path(__file__).parents[2] / "src/deepcite/data/sample/corpus.jsonl"
    texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines()]
    sequential = [split_sentences(t) for t in texts]
    for _ in range(3):
        _sentences.cache_clear()  # the cache would hide the race
        with ThreadPoolExecutor(max_workers=4) as pool:
            assert list(pool.map(split_sentences, texts)) == sequential


SPAN_CASES = [
    "Yes. Yes. Yes. No.",  # a sentence repeated: each occurrence in turn
    "a.a. a.a.a. a.a.",  # sentences that overlap themselves
    "Dr. Smith saw 3 patients.   Fig. 2. shows it.\n\nThe end",  # white space kept after a sentence
    "... ... ...",
    "",
    # abbreviations pysbd rewrites once per occurrence, in both cases and at the text's start
    "Al. Smith et al. (2020) also found it, e.g. in the U.S. Army vs. Fig. 2 and fig. 3a. No. 5 is ca. 3 p.m. "
    "on Jan. 4. I said so. et al. al. Al. AL. also Also. E.g. e.g. Dr. dr. no. 7 No. 8. St. Louis st. 9.",
]


@pytest.mark.parametrize("text", SPAN_CASES + [c["text"] for c in CASES])
def test_the_segmenter_finds_the_spans_pysbd_itself_finds(text: str) -> None:
    """deepcite's segmenter finds sentences by string search instead of pysbd's per-sentence regular
    expression; the sentences and spans must be pysbd's own."""
    theirs = pysbd.Segmenter(language="en", clean=False, char_span=True).segment(text)
    ours = _Segmenter(char_span=True).segment(text)
    assert [(s.sent, s.start, s.end) for s in ours] == [(s.sent, s.start, s.end) for s in theirs]


def test_a_paragraph_of_dialogue_is_cut_into_the_sentences_inside_its_quotation_marks() -> None:
    """pysbd keeps a quotation whole: a novel's paragraph of dialogue (Kafka's *Metamorphosis*) is one sentence.
    quoted_sentences cuts it into the sentences inside, each a slice of it with the quotation mark it opens or
    closes with; a sentence without quotation marks is left as it is."""
    paragraph = (
        "“But Sir”, called Gregor, beside himself, “I’ll open up immediately, just a moment. I’m slightly "
        "unwell, an attack of dizziness, I haven’t been able to get up. I’m still in bed now.” He waited."
    )
    assert split_sentences(paragraph)[0].endswith("in bed now.”")  # pysbd's one quotation
    parts = quoted_sentences(paragraph)
    assert parts == [
        "“But Sir”, called Gregor, beside himself, “I’ll open up immediately, just a moment.",
        "I’m slightly unwell, an attack of dizziness, I haven’t been able to get up.",
        "I’m still in bed now.”",
        "He waited.",
    ]
    assert all(part in paragraph for part in parts)
    assert quoted_sentences("Dr. Smith came at 5 p.m. today.") == ["Dr. Smith came at 5 p.m. today."]
    assert quoted_sentences("He said “Mr. Samsa is ill.”") == ["He said “Mr. Samsa is ill.”"]


def test_the_writer_quotes_a_sentence_of_a_long_quotation_not_the_whole() -> None:
    """The scorer's evidence sentences: a quotation over ``extractive.quotation_split_words`` words is quoted by
    its sentences (0 keeps it whole)."""
    speech = " ".join(
        f"I have worked here for {n} long years without a single day of illness." for n in range(2, 6)
    )
    chunk = ContextChunk(
        id=1, chunk_id="c1", doc_id="m.epub", file="m.epub", title="", text=f"He said “{speech}”", score=1.0
    )
    settings = AnswerSettings()
    split = SentenceScorer(HashingEmbedder(), settings).sentences([chunk], False)
    assert len(split) == 4 and split[0].text.startswith("He said “I have worked here for 2 long years")
    whole = SentenceScorer(HashingEmbedder(), settings.tuned(extractive={"quotation_split_words": 0}))
    assert len(whole.sentences([chunk], False)) == 1


def test_a_lead_in_ending_in_a_colon_runs_on_into_the_sentence_after_it() -> None:
    """ "… started by running the command:" says what follows: quoted with the command after it (blind19's dev
    summaries opened with the lead-in alone), within ``lead_in_run_on_words``; a longer run stays apart."""
    text = "The backend server can be started by running the command:\nfastapi run apiserver.py\nIt listens on 80."
    chunk = ContextChunk(
        id=1,
        chunk_id="c1",
        doc_id="m.md",
        file="m.md",
        title="",
        text=text,
        score=1.0,
        sentence_spans=[(text.index(x), text.index(x) + len(x)) for x in text.split("\n")],
    )
    assert chunk.answer_sentences(40)[0] == text[: text.index("\nIt")]
    assert chunk.answer_sentences(40)[1:] == ["fastapi run apiserver.py", "It listens on 80."]
    assert chunk.answer_sentences()[0] == "The backend server can be started by running the command:"
    assert chunk.answer_sentences(5)[0] == "The backend server can be started by running the command:"
    settings = AnswerSettings()
    quoted = [x.text for x in SentenceScorer(HashingEmbedder(), settings).sentences([chunk], False)]
    assert quoted[0] == text[: text.index("\nIt")]


def test_a_table_of_contents_entry_is_never_quoted() -> None:
    """An entry with a dot leader ("3.4 Outlook: Elliptic Curve Cryptography ........ 28") opened blind20's dev
    summaries, and a form's blank line filled them; prose with an ellipsis stays."""
    text = (
        "3.4 Outlook: Elliptic Curve Cryptography ........................ 28. "
        "Key lengths range from 160 to 512 bit for elliptic curves. The engine paused... then restarted after a long delay. "
        "Presiding Officer: ______________ Time Started: ______"
    )
    chunk = ContextChunk(id=1, chunk_id="c1", doc_id="n.pdf", file="n.pdf", title="", text=text, score=1.0)
    quoted = [x.text for x in SentenceScorer(HashingEmbedder(), AnswerSettings()).sentences([chunk], False)]
    assert not any("Outlook" in q or "Presiding" in q for q in quoted)
    assert any(q.startswith("Key lengths range") for q in quoted)
    assert any("engine paused" in q for q in quoted)


def test_a_bulleted_run_is_cut_into_its_items() -> None:
    """Extracted text runs a list's items into one line, with the bullet a glyph of its own (a symbol font's
    private-use character, "•", or a word processor's "o" before a second-level item): each item is a sentence,
    without its bullet; the first item stays with a lead-in that ends no sentence, and a chart's glyphs stay."""
    run = (
        "o If you have reduced the sample, you can use households for whom data exists. o Otherwise you may "
        "need pre-interviews. This is challenging, but worthwhile! \uf0a7 Ideally the firm will take part. "
        "Important points: o Include a pause before training o Distinguish the pilot from field practice."
    )
    assert split_sentences(run) == [
        "If you have reduced the sample, you can use households for whom data exists.",
        "Otherwise you may need pre-interviews.",
        "This is challenging, but worthwhile!",
        "Ideally the firm will take part.",
        "Important points: o Include a pause before training",
        "Distinguish the pilot from field practice.",
    ]
    assert split_sentences("Grid label • Why do we fork? • How do we merge back?") == [
        "Grid label • Why do we fork?",
        "How do we merge back?",
    ]
    assert split_sentences("project? \uf0e0 may start with Stage 2") == ["project?", "may start with Stage 2"]
    chart = "0.006 ● ● ● 0.004 ● 0.002 ●● ●●● counts."
    assert split_sentences(chart) == [chart]
    assert split_sentences("The value o Fahrenheit was low.") == [
        "The value o Fahrenheit was low."
    ]  # a lead-in
    assert list_items("● ●") == []


def test_a_checklist_and_an_outline_are_cut_into_their_items() -> None:
    """A document editor's checklist boxes and second-level circles are bullets too, and a line of more than a
    few words before a list's first bullet (a page's running head, a closing parenthesis) is a unit of its own,
    not the first item's lead-in."""
    page = (
        "De-risking custom technology projects 16 Checklist □ The budget does not mandate custom software □ "
        "Vendors’ claims are independently investigated ○ by talking to other states"
    )
    assert split_sentences(page) == [
        "De-risking custom technology projects 16 Checklist",
        "The budget does not mandate custom software",
        "Vendors’ claims are independently investigated",
        "by talking to other states",
    ]
    aside = "(If the answer is none, then this project is doomed to fail) ● When this spending is matched"
    assert split_sentences(aside) == [
        "(If the answer is none, then this project is doomed to fail)",
        "When this spending is matched",
    ]
    assert split_sentences("Key questions □ Who owns the code?") == ["Key questions □ Who owns the code?"]
    assert split_sentences("The temperature recorded in the value o Fahrenheit was low.") == [
        "The temperature recorded in the value o Fahrenheit was low."
    ]


def test_a_run_of_label_value_pairs_is_quoted_by_its_pairs() -> None:
    """A report's lines under a plot come out as one "sentence"; each pair is a unit of its own, a value of one
    word stays its label's, and a pair of fewer than three terms stays with the next."""
    line = (
        "Pattern: Unimodal (One hill) Skewed: Mildly skewed right (Mean > Median) Outliers: None Gap: None "
        "Shape: Bell curve Mean Proximity: 8.43 km"
    )
    parts = labelled_parts(line, 3, 3)
    assert parts == [
        "Pattern: Unimodal (One hill)",
        "Skewed: Mildly skewed right (Mean > Median)",
        "Outliers: None Gap: None",
        "Shape: Bell curve",
        "Mean Proximity: 8.43 km",
    ]
    assert all(part in line for part in parts)
    assert labelled_parts(line, 0, 3) == [line]
    assert labelled_parts("Note: the model runs daily.", 3, 3) == ["Note: the model runs daily."]
    row = "Technology: Kibana | Port: 5601/TCP | Location: server"
    assert labelled_parts(row, 3, 3) == [row]
