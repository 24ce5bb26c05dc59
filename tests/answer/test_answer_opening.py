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
CHUNKS = [
    ContextChunk(
        id=i,
        chunk_id=f"c{i}",
        doc_id="dpr.pdf",
        file="dpr.pdf",
        title="Dense Passage Retrieval",
        text=text,
        score=1 - i / 10,
    )
    for i, text in enumerate(
        [
            "The dense retriever encodes every passage once with the passage encoder before questions arrive.",
            "With the FAISS in-memory index, DPR processes 995.0 questions per second at top 100 passages.",
            "BM25 with an inverted index processes 23.7 questions per second per CPU thread.",
        ],
        start=1,
    )
]
# the hashing embedder's similarities are no measure of fit: the decision's fit bar (set on MiniLM) is off
BASE = AnswerSettings().tuned(decision={"min_fit": 0.0})
ZERO = {name: 0.0 for name in AnswerOpeningSettings.model_fields if name != "enabled"}


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
