"""The quote: each citation carries the sentence(s) of its passage that the support check matched, with
character offsets into the passage text (``text[quote_start:quote_end] == quote``, always)."""

from __future__ import annotations

import pytest

from answer.conftest import PASSAGES, HashingEmbedder, make_pack
from deepcite.answer.citations import check_citations
from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.pipeline import answer_context
from deepcite.answer.support import CitationSupport
from deepcite.config import AnswerSettings
from deepcite.retrieval.embedders import Embedder
from deepcite.text import sentence_spans, split_sentences

TEXTS = {i: p[5] for i, p in enumerate(PASSAGES, start=1)}
# white space the splitter collapses, a section label glued to a full stop, a lone parenthesis
AWKWARD = (
    "BACKGROUND: Statins lower  LDL\ncholesterol.METHODS: We pooled 12 trials (n=4,102).\n\n"
    "(Table 2) Stroke fell by 21%\u00a0overall. RESULTS: Myopathy was rare."
)


@pytest.mark.parametrize("text", [*TEXTS.values(), AWKWARD, "", "   ", "One sentence without a stop"])
def test_each_sentence_is_found_where_the_text_writes_it(text: str) -> None:
    spans = sentence_spans(text)
    sentences = split_sentences(text)
    assert len(spans) == len(sentences)
    for (start, end), sentence in zip(spans, sentences, strict=True):
        assert text[start:end].split() == sentence.split() or "".join(text[start:end].split()) == "".join(
            sentence.split()
        )
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # in order, not overlapping


def test_a_verbatim_claim_quotes_its_own_sentence() -> None:
    support = CitationSupport(HashingEmbedder(), AnswerSettings())
    claim = "Apixaban prevented more strokes than warfarin and caused less bleeding."
    found = support.match(claim, TEXTS[2])
    assert found.supported
    assert TEXTS[2][found.quote_start : found.quote_end] == claim


def test_a_claim_drawing_on_two_sentences_quotes_both_up_to_the_cap() -> None:
    claim = "Warfarin reduces stroke risk, yet apixaban prevented more strokes with less bleeding"
    wide = CitationSupport(
        HashingEmbedder(), AnswerSettings().tuned(citations={"quote_max_sentences": 2})
    ).match(claim, TEXTS[2])
    assert (wide.quote_start, wide.quote_end) == (0, len(TEXTS[2]))
    narrow = CitationSupport(
        HashingEmbedder(), AnswerSettings().tuned(citations={"quote_max_sentences": 1})
    ).match(claim, TEXTS[2])
    assert TEXTS[2][narrow.quote_start : narrow.quote_end] == split_sentences(TEXTS[2])[1]


def test_an_unsupported_claim_is_removed_and_still_says_what_it_was_checked_against() -> None:
    support = CitationSupport(HashingEmbedder(), AnswerSettings())
    clean, check = check_citations(
        "Beta blockers control the heart rate [4][6].",
        TEXTS,
        supports=lambda s, i: support.match(s, TEXTS[i]),
    )
    assert clean.endswith("[4].")
    verdicts = {c.id: c.verdict for c in check.claims}
    assert verdicts == {4: "supported", 6: "removed"}
    for claim in check.claims:
        assert claim.claim == "Beta blockers control the heart rate."
        assert 0 <= claim.quote_start < claim.quote_end <= len(TEXTS[claim.id])
        assert claim.score is not None


@pytest.mark.slow
def test_a_paraphrase_quotes_the_sentence_it_paraphrases(minilm: Embedder) -> None:
    support = CitationSupport(minilm, AnswerSettings().tuned(citations={"quote_max_sentences": 1}))
    found = support.match(
        "Compared with warfarin, apixaban prevented more strokes with less bleeding", TEXTS[2]
    )
    assert found.supported
    assert TEXTS[2][found.quote_start : found.quote_end] == split_sentences(TEXTS[2])[1]


async def test_every_citation_of_an_answer_holds_its_quote() -> None:
    settings = AnswerSettings()
    embedder = HashingEmbedder()
    ctx = ResponseContext.from_pack(make_pack(), settings, request_id="quotes")
    result = await answer_context(
        ctx, ExtractiveGenerator(embedder, settings), settings, CitationSupport(embedder, settings)
    )
    cited = set(result.citation_check.cited_ids) | {i for s in result.subanswers for i in s.citations}
    assert cited
    for citation in result.citations:
        assert citation.text[citation.quote_start : citation.quote_end] == citation.quote
        assert bool(citation.quote) == (citation.id in cited)
    parts = {c.part for c in result.citation_check.claims}
    assert {"summary", "answer"} <= parts and parts - {"summary", "answer"} <= set(ctx.subquery_evidence)
    # the extractive writer quotes its passages: each claim's quote is the sentence it copied
    for claim in result.citation_check.claims:
        text = next(c.text for c in result.citations if c.id == claim.id)
        assert claim.supported and claim.claim.rstrip(".") in text[claim.quote_start : claim.quote_end]


def test_a_passage_without_sentence_ends_quotes_the_words_of_the_claim_not_the_passage() -> None:
    """A long run of text with no full stop (a filing's table, a list) is one "sentence": its quote is the
    window of at most ``quote_max_chars`` characters holding the claim's words, cut at word boundaries."""
    filler = " ".join(f"segment {n} revenue unchanged" for n in range(60))
    claim = "Net revenue from the clinical services segment rose 14 percent in 2021"
    text = f"{filler} Net revenue from the clinical services segment rose 14 percent in 2021 {filler}"
    assert len(text) > 3000
    settings = AnswerSettings().tuned(citations={"quote_max_chars": 200})
    found = CitationSupport(HashingEmbedder(), settings).match(claim, text)
    quote = text[found.quote_start : found.quote_end]
    assert claim in quote and len(quote) <= 200
    assert quote == quote.strip() and text[found.quote_start - 1] == " "  # whole words
