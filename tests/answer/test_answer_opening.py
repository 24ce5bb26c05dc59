"""The summary's first sentence comes from the opening model (answer/opening.py): its weights are settings and
decide, the sentences it may choose from are the ones that may lead, and turning it off gives the writer's own
order back. Sentences are of the shared real documents' kind (the DPR paper), written for these tests."""

from __future__ import annotations

from answer.conftest import HashingEmbedder
from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.config import AnswerSettings
from deepcite.config.answer import AnswerOpeningSettings

QUESTION = "How fast is the dense retriever at answering questions once it uses FAISS?"


def _chunks(doc: str, title: str, texts: list[str]) -> list[ContextChunk]:
    """One passage per text, of one document, in the context's order."""
    return [
        ContextChunk(id=i, chunk_id=f"c{i}", doc_id=doc, file=doc, title=title, text=text, score=1 - i / 10)
        for i, text in enumerate(texts, start=1)
    ]


CHUNKS = _chunks(
    "dpr.pdf",
    "Dense Passage Retrieval",
    [
        "The dense retriever encodes every passage once with the passage encoder before questions arrive.",
        "With the FAISS in-memory index, DPR processes 995.0 questions per second at top 100 passages.",
        "BM25 with an inverted index processes 23.7 questions per second per CPU thread.",
    ],
)
# the hashing embedder's similarities are no measure of fit: the decision's fit bar (set on MiniLM) is off here;
# these tests are about the linear model's weights, so the sentence reader (tests/answer/test_answer_reader.py) is off
BASE = AnswerSettings().tuned(decision={"min_fit": 0.0}, reader={"enabled": False})
ZERO = {name: 0.0 for name in AnswerOpeningSettings.model_fields if name not in ("enabled", "ranks_rest")}


def _summary(settings: AnswerSettings) -> str:
    ctx = ResponseContext(request_id="r", query=QUESTION, selected_chunks=CHUNKS)
    return ExtractiveGenerator(HashingEmbedder(), settings).summary(ctx)


def test_the_weights_in_settings_choose_the_opening() -> None:
    """All weights zero but the passage's place in the context: the first passage that bears the amount's cue
    opens; with that weight negative, the last does (the weights are read, not fixed in code)."""
    first = _summary(BASE.tuned(opening={**ZERO, "context_rank": 1.0}))
    last = _summary(BASE.tuned(opening={**ZERO, "context_rank": -1.0}))
    assert first.startswith("With the FAISS in-memory index, DPR processes 995.0")
    assert last.startswith("BM25 with an inverted index processes 23.7")


def test_an_amount_opens_with_a_sentence_bearing_a_number_whatever_the_weights() -> None:
    """The decision requires an amount's answer to bear a number: a sentence without one never opens while one
    with it may, even when the weights prefer it (here: the first passage, which states no number)."""
    text = _summary(BASE.tuned(opening={**ZERO, "context_rank": 5.0, "cued": -5.0}))
    assert not text.startswith("The dense retriever encodes")


def test_turned_off_the_writer_orders_as_before() -> None:
    on = _summary(BASE.tuned(opening={**ZERO, "context_rank": -1.0}))
    off = _summary(BASE.tuned(opening={**ZERO, "context_rank": -1.0, "enabled": False}))
    assert on.startswith("BM25 with an inverted index")
    assert off.startswith("With the FAISS in-memory index")  # the writer's own order: the best cued sentence


def test_a_table_row_holding_the_question_s_terms_may_open_and_its_weight_decides() -> None:
    """A reader asks in plain words ("private schools in 2021") with no capitalised name a row could match
    (the row fit's test): a row holding enough of the question's terms (``kinds.row_open_coverage``) may open,
    and the ``row_coverage`` weight brings it first; with the share out of reach, or weighed against, the prose
    sentence opens."""
    question = "What pupil to teacher ratio is expected for private schools in 2021?"
    texts = [
        "Pupil to teacher ratios in private schools are expected to fall by about 2 over the decade.",
        "Year: 2021 | Pupil Teacher Ratio, Public: 14.4 | Private Schools: 11.7",
    ]
    chunks = _chunks("nces.pdf", "Projections", texts)
    ctx = ResponseContext(request_id="r", query=question, selected_chunks=chunks)
    weights = {**ZERO, "row_coverage": 5.0}
    opens = ExtractiveGenerator(HashingEmbedder(), BASE.tuned(opening=weights)).summary(ctx)
    assert opens.startswith("Year: 2021 | Pupil Teacher Ratio")
    # a row is no sentence: out of reach by its terms, and by its fit with the amount's cue
    out_of_reach = BASE.tuned(
        opening=weights, kinds={"row_open_coverage": 1.0}, decision={"fragment_open_relevance": 1.1}
    )
    assert ExtractiveGenerator(HashingEmbedder(), out_of_reach).summary(ctx).startswith("Pupil to teacher")
    prose = ExtractiveGenerator(HashingEmbedder(), BASE.tuned(opening={**ZERO, "table_row": -5.0})).summary(
        ctx
    )
    assert prose.startswith("Pupil to teacher ratios in private schools")


def test_the_summary_s_further_sentences_follow_the_model_s_ranking() -> None:
    """After the opening, the further sentences are the ones the opening model ranks next (``opening.ranks_rest``):
    of two sentences for the one place left, the cued one when the cue weighs positively, the other when it
    weighs negatively (the opening itself must bear the amount's cue either way)."""
    # no sentence is a repeat of another here (the hashing embedder's similarities are no measure of that)
    two = {
        "length": {"extractive_summary_sentences": 2, "extractive_summary_room_sentences": 0},
        "extractive": {"continue_ratio": 0.0, "redundancy_threshold": 1.01},
    }
    cued = _summary(BASE.tuned(opening={**ZERO, "cued": 5.0, "context_rank": -1.0}, **two))
    uncued = _summary(BASE.tuned(opening={**ZERO, "cued": -5.0, "context_rank": -1.0}, **two))
    assert cued.startswith("BM25 with an inverted index") and uncued.startswith("BM25 with an inverted index")
    assert "With the FAISS in-memory index" in cued and "The dense retriever encodes" not in cued
    assert "The dense retriever encodes" in uncued and "With the FAISS in-memory index" not in uncued


def test_places_left_are_filled_in_the_model_s_order_below_the_continue_ratio() -> None:
    """A further sentence whose value is under ``continue_ratio`` of the opening's still takes a place left under
    the sentence limit (``extractive.fill_ranked``), in the model's order, after those that reach it; off, the
    summary stops at the sentences valuable enough."""
    strict = {
        "length": {"extractive_summary_sentences": 3},
        "extractive": {"continue_ratio": 10.0, "redundancy_threshold": 1.01},
    }
    weights = {**ZERO, "cued": 5.0, "context_rank": -1.0}
    filled = _summary(BASE.tuned(opening=weights, **strict))
    alone = _summary(
        BASE.tuned(
            opening=weights, **{**strict, "extractive": {**strict["extractive"], "fill_ranked": False}}
        )
    )
    assert alone.startswith("BM25 with an inverted index") and "With the FAISS" not in alone
    assert filled.startswith("BM25 with an inverted index")
    assert filled.index("With the FAISS in-memory index") < filled.index("The dense retriever encodes")


def test_the_writer_reads_how_strongly_the_evidence_offers_an_opening() -> None:
    """The opening model's best score and the candidates' number reach the decision (``opening_evidence``): with
    the bar out of reach the summary says the sources do not state it and quotes the closest evidence; without
    it, the same evidence states it."""
    out_of_reach = _summary(BASE.tuned(decision={"min_opening_evidence": 1000.0}))
    assert out_of_reach.startswith("The sources do not state")
    assert "995.0 questions per second" in out_of_reach
    assert _summary(BASE.tuned(decision={"min_opening_evidence": None})).startswith("With the FAISS")
