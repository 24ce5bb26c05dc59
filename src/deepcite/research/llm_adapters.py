"""LLM steps of the research engine: aspects, the next sub-question, HyDE, coverage grading and the next hop.

Each asks for JSON with a schema and validates the reply; callers catch any exception and fall back
to their heuristic, recording the error.

Sanity checks before a reply is used (settings ``research.planning.llm_*``): planned aspects are
de-duplicated (same stemmed terms), at most ``llm_max_aspects`` are kept, and each must share
``llm_min_shared_terms`` terms with the question; a next sub-question or next-hop query must share them with
the question, the uncovered aspects or the passages shown. Values out of bounds are clamped
before validation (:func:`deepcite.llm.json.conform`), not the reply refused. The coverage grader's schema names
each aspect as a key, so a constrained server cannot answer with keys of its own. Each step notes on the
request's budget whether the LLM or the offline path wrote it (:func:`deepcite.llm.deadline.note_written`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from deepcite.config import LLMStageSettings, NextHopSettings, ResearchSettings, Settings
from deepcite.errors import LLMError
from deepcite.llm.budget import fit_to_budget
from deepcite.llm.client import LLMClient, Message
from deepcite.llm.deadline import LLMUnavailableError, in_stage, note_fallback, note_written
from deepcite.llm.json import chat_json
from deepcite.models import AspectType, QueryAspect
from deepcite.research.aspects import keywords_of
from deepcite.research.state import HopChoice
from deepcite.text import tokenize

T = TypeVar("T")

ASPECTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "aspects": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "aspect": {"type": "string"},
                    "type": {"type": "string", "enum": [t.value for t in AspectType]},
                    "importance": {"type": "number", "minimum": 0, "maximum": 1},
                    "keywords": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["aspect", "type", "importance"],
            },
        }
    },
    "required": ["aspects"],
}
NEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"subquestion": {"type": "string"}},
    "required": ["subquestion"],
}
HYDE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"passage": {"type": "string"}},
    "required": ["passage"],
}
NEXT_HOP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answered": {"type": "boolean"},
        "next_query": {"type": "string"},
        "entity": {"type": "string"},
        "supporting": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["answered", "next_query", "entity"],  # a reply without "supporting" keeps its query
}
GRADE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "scores": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1}},
        "contradictions": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["scores"],
}
_SCORE: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}


def aspects_schema(max_aspects: int) -> dict[str, Any]:
    """:data:`ASPECTS_SCHEMA` with at most ``max_aspects`` aspects."""
    aspects = {**ASPECTS_SCHEMA["properties"]["aspects"], "maxItems": max_aspects}
    return {**ASPECTS_SCHEMA, "properties": {"aspects": aspects}}


def grade_schema(aspects: Sequence[str]) -> dict[str, Any]:
    """:data:`GRADE_SCHEMA` with each aspect a required key of ``scores`` (other keys are dropped)."""
    scores = {
        "type": "object",
        "properties": {a: _SCORE for a in aspects},
        "required": list(aspects),
        "additionalProperties": _SCORE,
    }
    return {**GRADE_SCHEMA, "properties": {**GRADE_SCHEMA["properties"], "scores": scores}}


def shares_terms(text: str, *others: str, at_least: int) -> bool:
    """Whether ``text`` shares ``at_least`` stemmed content terms with the ``others`` together."""
    if at_least <= 0:
        return True
    known = {t for other in others for t in tokenize(other)}
    return len(set(tokenize(text)) & known) >= at_least


def noted(part: str, step: Callable[[], T]) -> T:
    """``step()``, noted on the request's budget as written by the LLM, or as fallen back (and re-raised); its
    calls write ``part`` (:func:`deepcite.llm.deadline.in_stage`: that stage's output cap applies)."""
    try:
        with in_stage(part):
            result = step()
    except Exception as exc:
        note_fallback(part, exc)
        raise
    note_written(part, "llm")
    return result


def failure_level(error: BaseException) -> int:
    """The level to log a research step's LLM failure at: INFO for a dead server (the client's breaker said it
    once, with what to do), WARNING otherwise."""
    return logging.INFO if isinstance(error, LLMUnavailableError) else logging.WARNING


def ask_json(llm: LLMClient, system: str, user: str, schema: dict[str, Any]) -> dict[str, Any]:
    """One chat call whose reply must be a JSON object matching ``schema`` (tolerant parsing)."""
    messages: list[Message] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return chat_json(llm, messages, schema)


def llm_aspects(llm: LLMClient, question: str, settings: ResearchSettings) -> list[QueryAspect]:
    """Aspects proposed by the LLM, de-duplicated, bounded and on the question's topic (module doc); raises on
    an unusable reply."""
    planning = settings.planning
    data = ask_json(
        llm,
        "You split research questions into the aspects a complete answer must cover. Types: "
        + ", ".join(t.value for t in AspectType)
        + f". Core aspects get importance >= {settings.coverage.core_importance}. Give at most "
        f"{planning.llm_max_aspects} distinct aspects. Reply with JSON only.",
        f"Question: {question}",
        aspects_schema(planning.llm_max_aspects),
    )
    aspects: list[QueryAspect] = []
    seen: set[frozenset[str]] = set()
    off_topic: list[str] = []
    for item in data.get("aspects") or []:
        text = str(item.get("aspect", "")).strip()
        terms = frozenset(tokenize(text))
        if not text or not terms or terms in seen:
            continue
        if not shares_terms(text, question, at_least=planning.llm_min_shared_terms):
            off_topic.append(text)
            continue
        seen.add(terms)
        if len(aspects) == planning.llm_max_aspects:
            break
        aspects.append(
            QueryAspect(
                aspect=text,
                aspect_type=AspectType.from_str(str(item.get("type", "definition"))),
                importance=min(
                    1.0, max(0.0, float(item.get("importance", settings.planning.main_aspect_importance)))
                ),
                keywords=[str(k).lower() for k in item.get("keywords") or []] or keywords_of(text),
            )
        )
    if not aspects:
        why = f" on the question's topic (off topic: {'; '.join(off_topic[:3])})" if off_topic else ""
        raise LLMError(f"the LLM proposed no aspects{why}")
    wanted = set(tokenize(question))
    named = wanted & {term for a in aspects for term in tokenize(a.aspect)}
    if wanted and len(named) < planning.llm_min_question_share * len(wanted):
        raise LLMError(
            f"the LLM's aspects ({'; '.join(a.aspect for a in aspects[:3])}) name {len(named)} of the question's "
            f"{len(wanted)} terms, fewer than {planning.llm_min_question_share:.0%}: no plan of the whole question"
        )
    return aspects


def llm_next_subquestion(
    llm: LLMClient,
    question: str,
    uncovered: Sequence[str],
    evidence: Sequence[str],
    asked: Sequence[str],
    *,
    min_shared_terms: int = 0,
    max_chars: int | None = None,
) -> str:
    """The next sub-question the LLM proposes from the uncovered aspects and the evidence so far; LLMError when
    it shares fewer than ``min_shared_terms`` terms with the question, the uncovered aspects and the evidence
    shown (off topic) or runs over ``max_chars``."""
    excerpts = "\n".join(f"- {text[:400]}" for text in evidence)
    data = ask_json(
        llm,
        "You plan the next search of a multi-hop research process. Propose ONE new, specific, searchable "
        "sub-question that targets what is still missing; use names found in the evidence when the "
        "question depends on them. Reply with JSON only.",
        f"Question: {question}\nUncovered aspects: {'; '.join(uncovered) or 'none'}\n"
        f"Already asked: {'; '.join(asked)}\nEvidence so far:\n{excerpts or '(none)'}",
        NEXT_SCHEMA,
    )
    proposed = str(data.get("subquestion", "")).strip()
    if proposed and not shares_terms(proposed, question, *uncovered, *evidence, at_least=min_shared_terms):
        raise LLMError(f"the LLM's next sub-question {proposed[:120]!r} is off the question's topic")
    if max_chars is not None and len(proposed) > max_chars:
        raise LLMError(f"the LLM's next sub-question runs to {len(proposed)} characters (limit {max_chars})")
    return proposed


def llm_coverage(
    llm: LLMClient,
    aspects: Sequence[QueryAspect],
    passages: Sequence[str],
    stages: LLMStageSettings | None = None,
) -> tuple[dict[str, float], list[str]]:
    """Per-aspect support scores in [0, 1] and any contradictions, graded by the LLM (each aspect a key of the
    schema; scores out of bounds clamped, other keys dropped); the first ``llm.stages.coverage_passages``
    passages are shown, each cut to ``coverage_passage_chars``."""
    s = stages or LLMStageSettings()
    shown = passages[: s.coverage_passages]
    listing = "\n".join(f"[{i + 1}] {text[: s.coverage_passage_chars]}" for i, text in enumerate(shown))
    data = ask_json(
        llm,
        "For each aspect, score from 0 to 1 how fully the passages support an answer (1 = fully supported, "
        "0 = not addressed). Only count what the passages state. List contradictions between passages. "
        "Reply with JSON only; use the aspect texts as keys.",
        "Aspects:\n" + "\n".join(f"- {a.aspect}" for a in aspects) + f"\nPassages:\n{listing}",
        grade_schema(list(dict.fromkeys(a.aspect for a in aspects))),
    )
    raw = data.get("scores")
    if not isinstance(raw, dict):
        raise LLMError("the LLM grader answered without a 'scores' object")
    scores = {a.aspect: min(1.0, max(0.0, float(raw[a.aspect]))) for a in aspects if a.aspect in raw}
    if not scores:
        raise LLMError("the LLM grader scored none of the aspects")
    return scores, [str(c) for c in data.get("contradictions") or []]


class LLMHyde:
    """HyDE through the LLM: a short hypothetical passage that would answer the query."""

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm

    def generate(self, query: str) -> str:
        return noted("HyDE passage", lambda: self._generate(query))

    def _generate(self, query: str) -> str:
        data = ask_json(
            self.llm,
            "Write a short factual passage (2-4 sentences) that would answer the query, as it might appear "
            "in a reference text. Reply with JSON only.",
            f"Query: {query}",
            HYDE_SCHEMA,
        )
        passage = str(data.get("passage", "")).strip()
        if not passage:
            raise LLMError("the LLM wrote an empty HyDE passage")
        return passage


class LLMCoverageGrader:
    """The :class:`CoverageGrader` adapter over an LLM client."""

    def __init__(self, llm: LLMClient, stages: LLMStageSettings | None = None) -> None:
        self.llm = llm
        self.stages = stages

    def grade(
        self, aspects: Sequence[QueryAspect], passages: Sequence[str]
    ) -> tuple[dict[str, float], list[str]]:
        return noted("coverage grade", lambda: llm_coverage(self.llm, aspects, passages, self.stages))


class LLMHopChooser:
    """The :class:`HopChooser` adapter over an LLM client (IRCoT / HippoRAG style): the question and the best
    evidence (titles and texts cut to ``passage_chars``, as many as fit ``token_budget``) go in; whether it is
    answered, the next query, its entity and the passages it read facts from come back as JSON checked against
    :data:`NEXT_HOP_SCHEMA`."""

    def __init__(
        self,
        llm: LLMClient,
        settings: NextHopSettings,
        *,
        chars_per_token: float,
        min_shared_terms: int = 0,
    ) -> None:
        self.llm = llm
        self.settings = settings
        self.chars_per_token = chars_per_token
        self.min_shared_terms = min_shared_terms

    def choose(self, question: str, evidence: Sequence[tuple[str, str]], asked: Sequence[str]) -> HopChoice:
        return noted("next hop", lambda: self._choose(question, evidence, asked))

    def _choose(self, question: str, evidence: Sequence[tuple[str, str]], asked: Sequence[str]) -> HopChoice:
        s = self.settings
        lines = [
            f"[{n}] {title}: {text[: s.passage_chars]}" for n, (title, text) in enumerate(evidence, start=1)
        ]
        shown = lines[: fit_to_budget(lines, s.token_budget, self.chars_per_token, separator="\n")]
        data = ask_json(
            self.llm,
            "You guide a multi-hop search over a document collection. Read the question and the passages found "
            "so far. If they answer the question, set answered to true. Otherwise name the one missing fact: "
            "next_query is a short search query for it (use names found in the passages, e.g. the person a "
            "passage identifies), and entity is the name it is about. Do not repeat a query already run. "
            "supporting lists the numbers of the passages that state a fact the answer needs ([] if none). "
            "Reply with JSON only.",
            f"Question: {question}\nQueries already run: {'; '.join(asked) or 'none'}\n"
            f"Passages:\n{chr(10).join(shown) or '(none)'}",
            NEXT_HOP_SCHEMA,
        )
        choice = HopChoice(
            answered=bool(data["answered"]),
            next_query=str(data["next_query"]).strip(),
            entity=str(data["entity"]).strip(),
            supporting=_shown_positions(data.get("supporting") or [], len(shown)),
        )
        if not choice.answered and not choice.next_query:
            raise LLMError("the LLM neither judged the question answered nor named a next query")
        if not choice.answered and not shares_terms(
            choice.next_query, question, *shown, at_least=self.min_shared_terms
        ):
            raise LLMError(
                f"the LLM's next query {choice.next_query[:120]!r} is off the question and passages"
            )
        return choice


def _shown_positions(numbers: Sequence[int], shown: int) -> tuple[int, ...]:
    """The passage numbers an LLM named (1 = the first shown) as positions among the ``shown`` passages, in
    its order, without repeats; numbers outside them are dropped. The reply's schema has already made them
    integers (``llm/json.py`` drops an item that is none, a boolean among them)."""
    return tuple(dict.fromkeys(n - 1 for n in numbers if 1 <= n <= shown))


def hop_chooser_for(settings: Settings, llm: LLMClient | None) -> LLMHopChooser | None:
    """The LLM's next-hop chooser when ``research.next_hop.enabled`` and an LLM is configured, else None."""
    if llm is None or not settings.research.next_hop.enabled:
        return None
    return LLMHopChooser(
        llm,
        settings.research.next_hop,
        chars_per_token=settings.llm.chars_per_token,
        min_shared_terms=settings.research.planning.llm_min_shared_terms,
    )
