"""The answer pipeline: shared context, sub-answers, summary and long answer in parallel, citation-checked."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Sequence

import numpy as np
import pytest
from llm.fake_openai_server import FakeOpenAIServer

from answer.conftest import ASPECTS, QUESTION, SQ_DRUGS, SQ_RISK, HashingEmbedder, make_pack
from deepcite.answer.citations import unresolved_citations
from deepcite.answer.context import ResponseContext, ResponseContextManager
from deepcite.answer.decision import Verdict
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.llm_generator import LLMGenerator
from deepcite.answer.pipeline import AnswerResult, answer, answer_context, generate_summary
from deepcite.answer.prompts import INSUFFICIENT, UNKNOWN
from deepcite.config import AnswerSettings, LLMSettings, Settings
from deepcite.llm.openai_client import OpenAICompatClient
from deepcite.models import EvidencePack, QueryAspect

RESPONSE_KEYS = {
    "success", "request_id", "query", "summary", "answer", "subanswers", "citations", "coverage",
    "retrieval_report", "citation_check", "retrieval_latency_ms", "summary_latency_ms", "answer_latency_ms",
    "total_chunks", "chunks_used_summary", "chunks_used_answer", "degraded", "insufficient", "written", "decision",
}  # fmt: skip


def assert_all_resolved(result: AnswerResult, ctx: ResponseContext) -> None:
    """Every text of the result cites only chunks it may cite."""
    selected = [c.id for c in ctx.selected_chunks]
    assert unresolved_citations(result.summary, selected) == []
    assert unresolved_citations(result.answer, selected) == []
    for sub in result.subanswers:
        own = [c.id for c in ctx.subquery_evidence[sub.subquestion]]
        assert unresolved_citations(sub.answer, own) == []
        assert set(sub.citations) <= set(own)
    assert {c.id for c in result.citations} >= set(result.citation_check.cited_ids)


async def test_extractive_pipeline_end_to_end(settings: AnswerSettings, embedder: HashingEmbedder) -> None:
    store = ResponseContextManager(settings)
    pack = make_pack()
    result = await answer(pack, ASPECTS, ExtractiveGenerator(embedder, settings), settings, contexts=store)
    ctx = store.get(result.request_id)
    assert_all_resolved(result, ctx)
    assert result.success and result.query == QUESTION
    assert "[1]" in result.summary
    # the sentences ranked next after the summary's lead (length.long_answer_ranked_sentences), then the sections
    lead, _, sections = result.answer.partition("\n\n")
    assert "##" not in lead and sections.startswith("## Stroke risk in atrial fibrillation")
    assert [s.subquestion for s in result.subanswers] == [SQ_RISK, SQ_DRUGS]
    assert result.subanswers[1].citations and set(result.subanswers[1].citations) <= {2, 3}
    assert [c.id for c in result.citations] == [1, 2, 3, 4, 5, 6, 7]
    first = result.citations[0]
    assert (first.title, first.pmid, first.doi, first.section, first.score) == (
        "Atrial fibrillation and stroke",
        "1001",
        None,
        "Results",
        0.9,
    )
    assert result.total_chunks == 7
    assert result.chunks_used_summary == len({int(x) for x in re.findall(r"\[(\d+)\]", result.summary)})
    assert result.chunks_used_answer >= 3
    check = result.citation_check
    assert check.sentences > 0 and check.cited == check.sentences and check.invalid_ids == 0
    assert result.summary_latency_ms >= 0 and result.answer_latency_ms >= 0
    assert set(result.model_dump()) == RESPONSE_KEYS
    assert result.degraded is None  # nothing fell back: no LLM was asked
    assert result.insufficient is False
    # the decision the summary was written from: the question asks yes or no, and the evidence says yes
    assert result.decision is not None and result.decision.stated
    assert result.decision.verdict is Verdict.YES and result.summary.startswith("Yes: ")
    assert result.decision.cite is not None and f"[{result.decision.cite}]" in result.summary


async def test_empty_pack_gives_the_insufficient_template(
    settings: AnswerSettings, embedder: HashingEmbedder
) -> None:
    pack = EvidencePack(question=QUESTION, subquery_evidence={SQ_RISK: []})
    result = await answer(pack, ASPECTS, ExtractiveGenerator(embedder, settings), settings)
    assert result.success is True
    assert result.summary == result.answer == INSUFFICIENT and result.insufficient is True
    assert result.subanswers[0].answer == INSUFFICIENT and result.subanswers[0].citations == []
    assert result.citations == [] and result.total_chunks == 0
    assert (result.chunks_used_summary, result.chunks_used_answer, result.citation_check.cited) == (0, 0, 0)


async def test_only_subquestion_evidence(settings: AnswerSettings, embedder: HashingEmbedder) -> None:
    pack = make_pack(final=(), subquestions={SQ_DRUGS: ("c2", "c3")})
    result = await answer(pack, ASPECTS, ExtractiveGenerator(embedder, settings), settings)
    assert result.summary == result.answer == INSUFFICIENT and result.insufficient is True
    assert result.subanswers[0].citations and [c.id for c in result.citations] == [1, 2]


class RecordingGenerator:
    """A sync generator that records call order and requires summary and long answer to overlap in time."""

    def __init__(self, text: str = "Stroke risk rises [1].") -> None:
        self.text = text
        self.calls: list[str] = []
        self.barrier = threading.Barrier(2, timeout=30)  # a bound on waiting, not a timing assertion

    def summary(self, ctx: ResponseContext) -> str:
        self.calls.append("summary")
        self.barrier.wait()  # only returns once long_answer is running too
        return self.text

    def long_answer(self, ctx: ResponseContext, aspects: Sequence[QueryAspect] | None = None) -> str:
        self.calls.append("long_answer")
        self.barrier.wait()
        return self.text

    def subanswer(self, ctx: ResponseContext, subquestion: str) -> str:
        self.calls.append("subanswer")
        return self.text


async def test_summary_and_long_answer_run_in_parallel_after_subanswers(settings: AnswerSettings) -> None:
    gen = RecordingGenerator()
    result = await answer(make_pack(), ASPECTS, gen, settings)
    assert gen.calls[:2] == ["subanswer", "subanswer"]
    assert sorted(gen.calls[2:]) == ["long_answer", "summary"]
    assert result.summary == result.answer == "Stroke risk rises [1]."


class AsyncRecordingGenerator:
    """An async generator whose summary waits for the long answer to start (and vice versa)."""

    def __init__(self) -> None:
        self.started = {"summary": asyncio.Event(), "long_answer": asyncio.Event()}

    async def summary(self, ctx: ResponseContext) -> str:
        self.started["summary"].set()
        await asyncio.wait_for(self.started["long_answer"].wait(), 30)
        return "Summary with an invented source [99]."

    async def long_answer(self, ctx: ResponseContext, aspects: Sequence[QueryAspect] | None = None) -> str:
        self.started["long_answer"].set()
        await asyncio.wait_for(self.started["summary"].wait(), 30)
        return "## Risk\nRisk rises [2]. Nothing cited here."

    async def subanswer(self, ctx: ResponseContext, subquestion: str) -> str:
        return "Drugs work [1][2]."  # [1] is not this sub-question's evidence when it is the drugs one


async def test_async_generators_run_on_the_loop_and_are_checked(settings: AnswerSettings) -> None:
    ctx = ResponseContext.from_pack(make_pack(), settings)
    result = await answer_context(ctx, AsyncRecordingGenerator(), settings)
    assert_all_resolved(result, ctx)
    assert result.summary == UNKNOWN
    assert result.answer == f"## Risk\nRisk rises [2]. {UNKNOWN}"
    drugs = next(s for s in result.subanswers if s.subquestion == SQ_DRUGS)
    assert drugs.answer == "Drugs work [2]." and drugs.citations == [2]
    check = result.citation_check
    assert check.invalid_ids == 3  # [99] in the summary, [1] in the drugs sub-answer, [2] in the risk one
    assert check.repaired == 2


async def test_drop_policy_applies_to_every_part() -> None:
    settings = AnswerSettings().tuned(citations={"unsupported_policy": "drop"})
    ctx = ResponseContext.from_pack(make_pack(), settings)
    result = await answer_context(ctx, AsyncRecordingGenerator(), settings)
    assert result.summary == UNKNOWN  # everything dropped leaves the unknown phrase, never an empty text
    assert result.answer == "## Risk\nRisk rises [2]."
    assert result.citation_check.dropped == 2


async def test_regenerate_summary_from_a_stored_context(
    settings: AnswerSettings, embedder: HashingEmbedder
) -> None:
    store = ResponseContextManager(settings)
    gen = ExtractiveGenerator(embedder, settings)
    first = await answer(make_pack(), None, gen, settings, contexts=store, request_id="fixed-id")
    assert first.request_id == "fixed-id"
    part = await generate_summary(store.get("fixed-id"), gen, settings)
    assert part.text == first.summary and part.check.repaired == 0


async def test_llm_pipeline_checks_what_the_model_wrote(
    settings: AnswerSettings, embedder: HashingEmbedder
) -> None:
    def reply(body: dict) -> str:  # the stand-in for a remote LLM cites one real and one invented source
        return "Atrial fibrillation raises stroke risk [1]. Aspirin is better [42]."

    with FakeOpenAIServer(responder=reply) as server:
        full = Settings(llm=LLMSettings(base_url=server.base_url, model="stand-in", max_retries=0))
        gen = LLMGenerator(OpenAICompatClient(full.llm), full, ExtractiveGenerator(embedder, settings))
        pack = make_pack()
        result = await answer(pack, ASPECTS, gen, settings)
        assert len(server.requests) == 4  # two sub-answers, the summary, the long answer
    ctx = ResponseContext.from_pack(pack, settings)
    assert_all_resolved(result, ctx)
    assert result.summary == f"Atrial fibrillation raises stroke risk [1]. {UNKNOWN}"
    # [1] is not the drugs sub-question's evidence: nothing the model wrote there kept a citation, so the
    # offline writer's sub-answer, which cites that evidence, is shipped instead, and the response says why
    drugs = next(s for s in result.subanswers if s.subquestion == SQ_DRUGS)
    assert drugs.answer != UNKNOWN and drugs.citations
    assert drugs.citations == [c.id for c in ctx.subquery_evidence[SQ_DRUGS] if c.id in drugs.citations]
    written = {w.part: w for w in result.written}
    assert written[f"sub-answer: {SQ_DRUGS}"].writer == "offline"
    assert "0 of 2 sentences kept a citation" in (written[f"sub-answer: {SQ_DRUGS}"].reason or "")
    assert written["summary"].writer == written["long answer"].writer == "llm"
    assert result.citation_check.invalid_ids == 3  # the summary's, the long answer's, the other sub-answer's


@pytest.mark.parametrize("aspects", [None, []])
async def test_aspects_argument(
    aspects: list | None, settings: AnswerSettings, embedder: HashingEmbedder
) -> None:
    result = await answer(make_pack(), aspects, ExtractiveGenerator(embedder, settings), settings)
    headings = [line for line in result.answer.split("\n") if line.startswith("## ")]
    assert len(headings) == (3 if aspects is None else 2)  # pack aspects, else the two sub-questions


async def test_every_evidence_sentence_is_embedded_in_one_batch_before_the_parts(
    settings: AnswerSettings,
) -> None:
    """The sub-answers run in parallel and share the writer's cache; a text's bf16 vector depends a little on the
    batch it is encoded in, so which part embedded a sentence first changed an answer near a threshold from one
    run to the next (blind13, about one question a run). The stage embeds them all in one batch first."""

    class Recording(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.batches: list[list[str]] = []

        def encode(self, texts: Sequence[str], *, kind: str = "passage") -> np.ndarray:  # type: ignore[override]
            if kind == "passage":
                self.batches.append(list(texts))
            return super().encode(texts, kind=kind)  # type: ignore[arg-type]

    embedder = Recording()
    writer = ExtractiveGenerator(embedder, settings)
    ctx = ResponseContext.from_pack(make_pack(), settings)
    await answer_context(ctx, writer, settings)
    sentences = {x.text for keep in (False, True) for x in writer._scorer.sentences(ctx.all_chunks(), keep)}
    assert sentences <= set(embedder.batches[0])
