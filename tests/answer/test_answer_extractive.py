"""ExtractiveGenerator with a deterministic test embedder; every output goes through the citation check."""

from __future__ import annotations

import re

import pytest

from answer.conftest import QUESTION, SQ_DRUGS, SQ_RISK, HashingEmbedder, make_pack
from deepcite.answer.citations import check_citations
from deepcite.answer.context import ResponseContext
from deepcite.answer.decision import AnswerStatus
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.generators import Generator
from deepcite.answer.prompts import UNKNOWN
from deepcite.config import AnswerSettings
from deepcite.errors import InputError, InsufficientEvidenceError
from deepcite.models import EvidencePack

# a yes/no question whose evidence states nothing: the summary says so, citing nothing
NOT_STATED = "The sources do not state a yes or no answer."
FIVEFOLD = "Atrial fibrillation increases the risk of ischemic stroke about fivefold"


def assert_clean(text: str, valid_ids: set[int]) -> None:
    """The generator's text passes the citation check unchanged: nothing unresolved, nothing unsupported."""
    clean, check = check_citations(text, valid_ids)
    assert clean == text
    assert (check.repaired, check.dropped, check.invalid_ids) == (0, 0, 0)


def cited(text: str) -> set[int]:
    return {int(i) for i in re.findall(r"\[(\d+)\]", text)}


def selected_ids(ctx: ResponseContext) -> set[int]:
    return {c.id for c in ctx.selected_chunks}


def sentences_of(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip() and not s.startswith("##")]


@pytest.fixture
def gen(embedder: HashingEmbedder, settings: AnswerSettings) -> ExtractiveGenerator:
    return ExtractiveGenerator(embedder, settings)


def test_it_is_a_generator(gen: ExtractiveGenerator) -> None:
    assert isinstance(gen, Generator)


def test_summary_quotes_supporting_sentences_with_their_citations(
    gen: ExtractiveGenerator, ctx: ResponseContext, settings: AnswerSettings
) -> None:
    text = gen.summary(ctx)
    assert_clean(text, selected_ids(ctx))
    assert text.startswith(f"Yes: {FIVEFOLD} [1].")  # a yes/no question: the verdict opens
    assert 1 <= len(sentences_of(text)) <= settings.length.summary_max_sentences
    assert cited(text) <= selected_ids(ctx)
    assert "Vitamin D" not in text  # off-topic evidence does not clear the support threshold
    assert "[12]" not in text  # the source's own reference marker is not passed off as a citation


def test_near_duplicate_evidence_is_written_once(gen: ExtractiveGenerator, ctx: ResponseContext) -> None:
    text = gen.summary(ctx)  # c5 says what c1 says, in other words
    assert text.count("fivefold") == 1 and "[5]" not in text


def test_identical_sentences_are_cited_from_the_best_chunk(
    gen: ExtractiveGenerator, settings: AnswerSettings
) -> None:
    pack = make_pack(final=("c1", "c7"))
    pack.final_evidence[1].chunk.text = pack.final_evidence[0].chunk.text  # same text, lower score
    text = gen.summary(ResponseContext.from_pack(pack, settings))
    assert text.count(FIVEFOLD) == 1 and "[1]" in text and "[2]" not in text


def test_redundancy_threshold_is_the_setting(embedder: HashingEmbedder, ctx: ResponseContext) -> None:
    never_redundant = ExtractiveGenerator(
        embedder,
        AnswerSettings().tuned(
            extractive={"redundancy_threshold": 1.01, "other_study_ratio": 0.0, "continue_ratio": 0.0}
        ),
    )
    text = never_redundant.summary(ctx)
    assert text.count("fivefold") == 2 and {1, 5} <= cited(text)


def test_output_is_deterministic(
    embedder: HashingEmbedder, ctx: ResponseContext, gen: ExtractiveGenerator
) -> None:
    again = ExtractiveGenerator(HashingEmbedder(), AnswerSettings())
    assert gen.summary(ctx) == gen.summary(ctx) == again.summary(ctx)
    assert gen.long_answer(ctx) == again.long_answer(ctx)


def test_long_answer_has_one_section_per_aspect(gen: ExtractiveGenerator, ctx: ResponseContext) -> None:
    text = gen.long_answer(ctx)
    assert_clean(text, selected_ids(ctx))
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == ["Stroke risk in atrial fibrillation", "Anticoagulant treatment", "Bleeding harms"]
    sections = re.split(r"^## .+$", text, flags=re.M)[1:]
    for section in sections:
        assert 1 <= len(sentences_of(section)) <= AnswerSettings().length.long_answer_sentences_per_aspect
    assert "bleeding" in sections[2].lower()
    body = sentences_of(text)
    assert len(body) == len(set(body))  # no sentence used twice


def test_long_answer_section_without_own_sentences_is_served_before_others_fill_up(
    ctx: ResponseContext,
) -> None:
    """With room for 4 sentences a section, the stroke section's own sentences include both drug
    sentences; it keeps the per-aspect share of 3 until the treatment section, which has none of its
    own, has taken the best unused one. Filling up never adds a sentence below the support threshold."""
    settings = AnswerSettings().tuned(length={"long_answer_min_sentences": 12})
    text = ExtractiveGenerator(HashingEmbedder(), settings).long_answer(ctx)
    assert_clean(text, selected_ids(ctx))
    sections = dict(re.findall(r"^## (.+)\n(.+)$", text, flags=re.M))
    assert UNKNOWN not in sections["Anticoagulant treatment"]
    assert "Apixaban" in sections["Anticoagulant treatment"]
    assert "Vitamin D" not in text  # off every aspect: no section's filler


def test_long_answer_without_aspects_uses_subquestions(
    gen: ExtractiveGenerator, ctx: ResponseContext
) -> None:
    text = gen.long_answer(ctx, [])
    assert re.findall(r"^## (.+)$", text, flags=re.M) == [SQ_RISK, SQ_DRUGS]
    assert_clean(text, selected_ids(ctx))


def test_long_answer_without_aspects_or_subquestions_has_no_headings(
    gen: ExtractiveGenerator, settings: AnswerSettings
) -> None:
    ctx = ResponseContext.from_pack(make_pack(subquestions={}), settings, aspects=[])
    text = gen.long_answer(ctx)
    assert "##" not in text and cited(text)
    assert_clean(text, selected_ids(ctx))


def test_subanswer_uses_only_its_own_evidence(gen: ExtractiveGenerator, ctx: ResponseContext) -> None:
    drugs = gen.subanswer(ctx, SQ_DRUGS)
    own = {c.id for c in ctx.subquery_evidence[SQ_DRUGS]}
    assert_clean(drugs, own)
    assert cited(drugs) and cited(drugs) <= own == {2, 3}
    risk = gen.subanswer(ctx, SQ_RISK)
    assert_clean(risk, {1, 5, 7})
    assert cited(risk) == {1}  # the other studies' sentences (severity, a restatement) are not padding
    wide = ExtractiveGenerator(
        HashingEmbedder(),
        AnswerSettings().tuned(extractive={"other_study_ratio": 0.0, "continue_ratio": 0.0}),
    )
    assert 7 in cited(wide.subanswer(ctx, SQ_RISK))  # the sub-question's extra chunk, numbered globally
    assert len(sentences_of(risk)) <= AnswerSettings().length.subanswer_max_sentences


def test_unknown_when_nothing_clears_the_support_threshold(
    gen: ExtractiveGenerator, settings: AnswerSettings
) -> None:
    pack = make_pack(final=("c6",), subquestions={"Does warfarin prevent stroke?": ("c6",)})
    ctx = ResponseContext.from_pack(pack, settings)
    assert gen.summary(ctx) == NOT_STATED
    assert gen.decide(ctx).status is AnswerStatus.NOT_STATED
    assert gen.subanswer(ctx, "Does warfarin prevent stroke?") == UNKNOWN
    long = gen.long_answer(ctx)
    assert long.count(UNKNOWN) == 3 and not cited(long)
    for text in (gen.summary(ctx), long):
        assert_clean(text, {1})
    # the not-stated sentence passes the citation check though it cites nothing
    assert check_citations(NOT_STATED, [1])[0] == NOT_STATED


def test_support_threshold_is_the_setting(embedder: HashingEmbedder, ctx: ResponseContext) -> None:
    """Nothing reaches a strict support threshold: not stated, the closest evidence quoted after it."""
    strict = ExtractiveGenerator(embedder, AnswerSettings().tuned(extractive={"support_threshold": 0.99}))
    assert strict.decide(ctx).status is AnswerStatus.NOT_STATED
    assert strict.summary(ctx).startswith(NOT_STATED.removesuffix(".") + "; the closest passages say:\n")


def test_the_relevance_floor_ranks_but_never_refuses(embedder: HashingEmbedder, ctx: ResponseContext) -> None:
    """Relevance counts from ``relevance_floor``; whether a sentence may be quoted is ``support_threshold``'s."""
    high = ExtractiveGenerator(embedder, AnswerSettings().tuned(extractive={"relevance_floor": 0.99}))
    summary = high.summary(ctx)
    assert summary != UNKNOWN and cited(summary) <= selected_ids(ctx)


def test_subquestion_without_evidence_is_unknown(gen: ExtractiveGenerator, settings: AnswerSettings) -> None:
    ctx = ResponseContext.from_pack(make_pack(subquestions={"empty one": ()}), settings)
    assert gen.subanswer(ctx, "empty one") == UNKNOWN


def test_empty_context_is_refused(gen: ExtractiveGenerator, settings: AnswerSettings) -> None:
    ctx = ResponseContext.from_pack(EvidencePack(question=QUESTION, subquery_evidence={"q": []}), settings)
    with pytest.raises(InsufficientEvidenceError, match="empty context"):
        gen.summary(ctx)
    with pytest.raises(InsufficientEvidenceError):
        gen.long_answer(ctx)
    with pytest.raises(InsufficientEvidenceError):
        gen.subanswer(ctx, "q")


def test_unknown_subquestion_is_an_input_error(gen: ExtractiveGenerator, ctx: ResponseContext) -> None:
    with pytest.raises(InputError, match="known: "):
        gen.subanswer(ctx, "Is this a sub-question?")


def test_each_sentence_is_embedded_once_per_request(
    gen: ExtractiveGenerator, embedder: HashingEmbedder, ctx: ResponseContext
) -> None:
    gen.summary(ctx)
    gen.long_answer(ctx)
    before = embedder.encoded
    gen.summary(ctx)
    gen.long_answer(ctx)
    assert embedder.encoded == before


def test_embedding_cache_is_bounded(embedder: HashingEmbedder, ctx: ResponseContext) -> None:
    gen = ExtractiveGenerator(embedder, AnswerSettings(embedding_cache_size=3))
    first = gen.summary(ctx)
    assert gen.summary(ctx) == first  # evicted vectors are recomputed identically
    assert len(gen._scorer._cache) == 3  # noqa: SLF001 - the cache the writer embeds through


def test_only_the_lexically_closest_sentences_are_embedded(
    embedder: HashingEmbedder, ctx: ResponseContext
) -> None:
    capped = ExtractiveGenerator(embedder, AnswerSettings().tuned(extractive={"max_embedded_sentences": 2}))
    text = capped.summary(ctx)
    titles = len({c.title for c in ctx.selected_chunks if c.title})  # each study's title is embedded once
    assert embedder.passages == 2 + titles
    assert_clean(text, selected_ids(ctx))
    assert text.startswith(f"Yes: {FIVEFOLD} [1].")  # lexical support alone still ranks the rest
