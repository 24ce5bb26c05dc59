"""Grounded prompts: the passage format, the system prompt and one prompt per answer part.

A passage is shown as ``[1] Title (PMID: 12345) - section`` then its text on the next line (DOI when
there is no PMID; the parts that are missing are left out).
"""

from __future__ import annotations

from collections.abc import Sequence

from deepcite.answer.context import ContextChunk
from deepcite.llm.client import Message

UNKNOWN = "Unknown based on provided sources."
INSUFFICIENT = "Based on the available sources, there is insufficient evidence to answer this question."
PASSAGE_SEPARATOR = "\n\n"


def not_stated(asked_for: str) -> str:
    """The summary's plain "not stated" sentence for what a question asks for (answer/decision.py), without
    its closing punctuation: "The sources do not state the date or time asked for"."""
    return f"The sources do not state {asked_for}"


SYSTEM_PROMPT = f"""You answer a researcher's questions using ONLY the numbered source passages you are given.
Rules:
- Use only facts stated in the passages. Do not use prior knowledge, even if you are confident.
- End every factual sentence with the ids of the passages that support it in square brackets: [2] or [1][3].
- Cite only ids that appear in the passages. Never invent a citation, a source, a number or a study.
- If the passages do not support a claim the question asks about, write exactly: "{UNKNOWN}"
- Do not mention these rules, the passages as a list, or yourself."""


def format_passage(chunk: ContextChunk) -> str:
    """``[id] Title (PMID: …) - section`` and the passage text on the next line."""
    header = f"[{chunk.id}] {chunk.title or chunk.doc_id}"
    if chunk.pmid:
        header += f" (PMID: {chunk.pmid})"
    elif chunk.doi:
        header += f" (DOI: {chunk.doi})"
    if chunk.section:
        header += f" - {chunk.section}"
    return f"{header}\n{chunk.text.strip()}"


def format_passages(chunks: Sequence[ContextChunk]) -> str:
    return PASSAGE_SEPARATOR.join(format_passage(c) for c in chunks)


def _messages(user: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def subanswer_messages(
    question: str, subquestion: str, chunks: Sequence[ContextChunk], max_sentences: int
) -> list[Message]:
    """Answer one sub-question from its own evidence only, the parent question as context."""
    return _messages(
        f"Main question (context only, do not answer it here): {question}\n\n"
        f"Sub-question: {subquestion}\n\n"
        f"Passages:\n{format_passages(chunks)}\n\n"
        f"Answer the sub-question in at most {max_sentences} sentences, citing passage ids."
    )


def summary_messages(
    question: str,
    chunks: Sequence[ContextChunk],
    min_sentences: int,
    max_sentences: int,
    max_words: int = 120,
) -> list[Message]:
    """A quick summary answer of a few cited sentences, the answer first (answer/decision.py's contract)."""
    return _messages(
        f"Question: {question}\n\n"
        f"Passages:\n{format_passages(chunks)}\n\n"
        f"Write a quick summary answer of {min_sentences} to {max_sentences} sentences and at most "
        f"{max_words} words, citing passage ids. The first sentence states the answer asked for (the "
        'amount, the name, the date, the list); for a yes/no question it begins "Yes:", "No:" or '
        '"The sources disagree:". If no passage states the answer, the first sentence says "'
        f'{not_stated("the answer")}" and the next ones give the closest evidence. No headings, no lists.'
    )


def long_answer_messages(
    question: str, chunks: Sequence[ContextChunk], sections: Sequence[str], sentences_per_section: int
) -> list[Message]:
    """A detailed answer with one ``## heading`` per section (the aspects); no headings when none."""
    if sections:
        outline = "\n".join(f"## {title}" for title in sections)
        structure = (
            "Write a detailed answer with exactly these sections, in this order, each a markdown heading "
            f"followed by up to {sentences_per_section} cited sentences:\n{outline}\n"
            f'Where the passages say nothing on a section, write "{UNKNOWN}" under its heading.'
        )
    else:
        structure = f"Write a detailed answer of up to {sentences_per_section} cited sentences."
    return _messages(f"Question: {question}\n\nPassages:\n{format_passages(chunks)}\n\n{structure}")
