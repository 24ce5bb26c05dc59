"""The extractive answer path with the real MiniLM embedder (slow: loads the model once per session)."""

from __future__ import annotations

import pytest

from answer.conftest import ASPECTS, SQ_DRUGS, make_pack
from deepcite.answer.citations import unresolved_citations
from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.pipeline import answer
from deepcite.answer.prompts import UNKNOWN
from deepcite.config import AnswerSettings
from deepcite.retrieval.embedders import Embedder

pytestmark = pytest.mark.slow


async def test_real_embedder_answers_with_resolved_citations(minilm: Embedder) -> None:
    settings = AnswerSettings()
    pack = make_pack()
    result = await answer(pack, ASPECTS, ExtractiveGenerator(minilm, settings), settings)
    ctx = ResponseContext.from_pack(pack, settings)
    selected = [c.id for c in ctx.selected_chunks]
    assert unresolved_citations(result.summary, selected) == []
    assert unresolved_citations(result.answer, selected) == []
    for sub in result.subanswers:
        assert unresolved_citations(sub.answer, [c.id for c in ctx.subquery_evidence[sub.subquestion]]) == []
    first = result.summary.split(". ")[0]
    assert "stroke" in first and "fivefold" in first  # the most direct answer leads
    assert result.summary.count("fivefold") == 1  # c1 and its paraphrase c5 are not both quoted
    assert "Vitamin D" not in result.summary + result.answer
    sections = result.answer.split("## ")[1:]
    assert len(sections) == 3 and all(UNKNOWN not in s for s in sections)
    assert "bleeding" in sections[2].lower()
    drugs = next(s for s in result.subanswers if s.subquestion == SQ_DRUGS)
    assert "Warfarin" in drugs.answer and set(drugs.citations) <= {2, 3}
    assert result.citation_check.repaired == result.citation_check.invalid_ids == 0


def test_real_embedder_says_unknown_for_off_topic_evidence(minilm: Embedder) -> None:
    settings = AnswerSettings()
    ctx = ResponseContext.from_pack(make_pack(final=("c6",), subquestions={}), settings)
    assert (
        ExtractiveGenerator(minilm, settings).summary(ctx) == "The sources do not state a yes or no answer."
    )
