"""Passage format and grounded prompts."""

from __future__ import annotations

from answer.conftest import QUESTION, SQ_DRUGS
from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.prompts import (
    SYSTEM_PROMPT,
    UNKNOWN,
    format_passage,
    long_answer_messages,
    subanswer_messages,
    summary_messages,
)


def _chunk(**fields: object) -> ContextChunk:
    base: dict[str, object] = {
        "id": 1,
        "chunk_id": "c",
        "doc_id": "doc-9",
        "text": " Body text. ",
        "score": 1.0,
    }
    return ContextChunk(**{**base, **fields})


def test_passage_with_pmid_and_section() -> None:
    chunk = _chunk(title="AF and stroke", pmid="12345", doi="10.1/x", section="Results")
    assert format_passage(chunk) == "[1] AF and stroke (PMID: 12345) - Results\nBody text."


def test_passage_falls_back_to_doi_then_nothing() -> None:
    assert format_passage(_chunk(id=4, title="T", doi="10.1/x")) == "[4] T (DOI: 10.1/x)\nBody text."
    assert format_passage(_chunk(id=2)) == "[2] doc-9\nBody text."


def test_system_prompt_is_grounded() -> None:
    for rule in ("ONLY", UNKNOWN, "Never invent a citation", "factual sentence", "prior knowledge"):
        assert rule in SYSTEM_PROMPT


def test_subanswer_prompt_holds_parent_question_and_only_its_evidence(ctx: ResponseContext) -> None:
    chunks = ctx.subquery_evidence[SQ_DRUGS]
    system, user = subanswer_messages(QUESTION, SQ_DRUGS, chunks, 4)
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    content = user["content"]
    assert QUESTION in content and SQ_DRUGS in content and "at most 4 sentences" in content
    assert "[2] Anticoagulation in atrial fibrillation (DOI: 10.1000/af.2) - Abstract" in content
    assert "[3] Bleeding on anticoagulants (PMID: 1003)" in content
    assert "[1]" not in content.replace("[1][3]", "")  # chunk 1 is not this sub-question's evidence


def test_summary_prompt_asks_for_the_sentence_range(ctx: ResponseContext) -> None:
    content = summary_messages(QUESTION, ctx.selected_chunks, 3, 5)[1]["content"]
    assert "3 to 5 sentences" in content
    assert all(f"[{c.id}] " in content for c in ctx.selected_chunks)


def test_long_answer_prompt_lists_one_heading_per_section(ctx: ResponseContext) -> None:
    content = long_answer_messages(QUESTION, ctx.selected_chunks, ["Risk", "Treatment"], 3)[1]["content"]
    assert "## Risk\n## Treatment" in content and UNKNOWN in content
    plain = long_answer_messages(QUESTION, ctx.selected_chunks, [], 3)[1]["content"]
    assert "##" not in plain
