"""Citations must support: range markers have a width cap, and each cited passage must support its sentence.

The support check runs on the test's short abstracts (tests/answer/conftest.py) with the real MiniLM
embedder where the embedding decides (marked slow), and with the hashing embedder where the lexical rule
decides alone.
"""

from __future__ import annotations

from answer.conftest import PASSAGES, HashingEmbedder
from deepcite.answer.citations import check_citations
from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.prompts import UNKNOWN
from deepcite.answer.support import CitationSupport, SupportJudge, lexical_support
from deepcite.config import AnswerSettings
from deepcite.models import Chunk
from deepcite.retrieval.embedders import Embedder

TEXTS = {i: p[5] for i, p in enumerate(PASSAGES, start=1)}  # display id -> passage text


def test_wide_range_is_dropped_and_narrow_range_expands() -> None:
    valid = set(range(1, 11))
    clean, check = check_citations("Fabricated claim [0-500].", valid, max_range_width=5)
    assert clean == UNKNOWN and check.ranges_dropped == 1 and check.cited_ids == []
    clean, check = check_citations("A narrow claim [3-7].", valid, max_range_width=5)
    assert clean == "A narrow claim [3][4][5][6][7]." and check.ranges_dropped == 0
    clean, check = check_citations("Six ids [3-8]. Backwards [7-3].", valid, max_range_width=5)
    assert clean == UNKNOWN and check.ranges_dropped == 2


def test_unsupported_citation_is_removed_and_the_sentence_repaired(minilm: Embedder) -> None:
    support = CitationSupport(minilm, AnswerSettings())
    text = (
        "Anticoagulation is safe [4][42]. "
        "Warfarin reduces stroke risk by about two thirds in atrial fibrillation [2][4]."
    )
    clean, check = check_citations(
        text, TEXTS, supports=lambda sentence, i: support.supports(sentence, TEXTS[i])
    )
    assert clean == f"{UNKNOWN} Warfarin reduces stroke risk by about two thirds in atrial fibrillation [2]."
    assert (check.supported, check.removed, check.unsupported_sentences) == (1, 2, 1)
    assert (check.invalid_ids, check.repaired, check.cited_ids) == (1, 1, [2])


def test_paraphrase_of_the_cited_passage_is_kept(minilm: Embedder) -> None:
    support = CitationSupport(minilm, AnswerSettings())
    sentence = "Compared with warfarin, apixaban prevented more strokes with less bleeding"
    assert lexical_support(sentence, TEXTS[2]) < AnswerSettings().citations.verbatim_lexical
    assert support.supports(sentence, TEXTS[2])
    assert not support.supports(sentence, TEXTS[4])  # rate control: same topic, another finding


def test_extractive_answers_pass_the_support_check_unchanged(ctx: ResponseContext) -> None:
    settings = AnswerSettings()

    class NeverEmbeds(HashingEmbedder):
        def encode(self, texts, *, kind="passage"):  # noqa: ANN001, ANN202
            raise AssertionError("verbatim sentences are supported on their words alone")

    writer = ExtractiveGenerator(HashingEmbedder(), settings)
    support = CitationSupport(NeverEmbeds(), settings)
    texts = {c.id: c.text for c in ctx.all_chunks()}
    parts = [writer.summary(ctx), writer.long_answer(ctx)]
    parts += [writer.subanswer(ctx, q) for q in ctx.subquery_evidence]
    for raw in parts:
        plain, plain_check = check_citations(raw, texts)
        checked, check = check_citations(raw, texts, supports=lambda s, i: support.supports(s, texts[i]))
        assert checked == plain and check.removed == 0 and check.supported >= plain_check.cited


def test_a_judge_decides_where_the_words_do_not(embedder: HashingEmbedder) -> None:
    class Strict:
        def judge(self, sentence: str, passage: str) -> bool | None:
            return False

    assert isinstance(Strict(), SupportJudge)
    support = CitationSupport(embedder, AnswerSettings(), judge=Strict())
    assert not support.supports("Apixaban is better than warfarin", TEXTS[2])
    assert support.supports(TEXTS[2].split(". ")[1], TEXTS[2])  # verbatim: no judge needed


def test_prime_embeds_in_one_batch_and_later_checks_use_it() -> None:
    calls: list[int] = []

    class Counting(HashingEmbedder):
        def encode(self, texts, *, kind="passage"):  # noqa: ANN001, ANN202
            calls.append(len(texts))
            return super().encode(texts, kind=kind)

    support = CitationSupport(Counting(), AnswerSettings())
    sentences = ["Apixaban is better than warfarin", "Beta blockers slow the heart"]
    support.prime(sentences, [TEXTS[2], TEXTS[4]])
    assert len(calls) == 1  # one batch: both sentences and both passages' sentences
    scores = [support.similarity(s, TEXTS[i]) for s, i in zip(sentences, (2, 4), strict=True)]
    assert len(calls) == 1 and all(-1.0 <= x <= 1.0 for x in scores)


def test_a_chunk_passage_is_compared_sentence_by_sentence_as_stored_at_ingest() -> None:
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota."
    embedder = HashingEmbedder()
    support = CitationSupport(embedder, AnswerSettings())
    # stored offsets say the chunk is one sentence: one passage vector, nothing split at answer time
    whole = Chunk(chunk_id="c1", doc_id="d", text=text, sentence_spans=[(0, len(text))])
    support.similarity("Delta epsilon zeta", whole)
    assert embedder.encoded == 2  # the sentence and the one stored passage sentence
    older = Chunk(chunk_id="c2", doc_id="d", text=text + " More.")  # stored before offsets: split on use
    support.similarity("Delta epsilon zeta", older)
    assert embedder.encoded == 2 + 4
    assert support.similarity("Delta epsilon zeta", older) > support.similarity("Delta epsilon zeta", whole)
