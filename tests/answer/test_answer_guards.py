"""Issue 30 in the answer stage: an LLM-written part that loops, leaves sections empty or runs long is written
offline instead; the LLM citation judge answers control pairs before its verdicts count, and never carries a
claim scored far below the threshold. The stand-in OpenAI-compatible server plays the remote LLM."""

from __future__ import annotations

from typing import Any

import pytest
from llm.fake_openai_server import FakeOpenAIServer

from answer.conftest import ASPECTS, PASSAGES, make_pack
from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.guards import structure_problem
from deepcite.answer.llm_generator import LLMGenerator
from deepcite.answer.pipeline import answer_budget, answer_context
from deepcite.answer.prompts import UNKNOWN
from deepcite.answer.support import CitationSupport, LLMSupportJudge
from deepcite.config import AnswerSettings, LLMSettings, Settings
from deepcite.config.answer import AnswerGuardSettings
from deepcite.llm.openai_client import OpenAICompatClient
from deepcite.retrieval.embedders import Embedder

GUARDS = AnswerGuardSettings()
TEXTS = [p[5] for p in PASSAGES]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "## treatment\nWarfarin helps [1].\n## treatment\nIt does [2].",
            "heading 'treatment' repeated 2 times",
        ),
        ("## Risk\nRisk rises [1].\n## Drugs\n", "section 'drugs' is empty"),
        (
            "Risk rises with age [1]. Risk rises with age [2].",
            "sentence 'risk rises with age' repeated 2 times",
        ),
        ("Risk rises with age [1].\nRisk rises with age [1].", "line 'risk rises with age' repeated 2 times"),
        (" ".join(f"Claim number {i} holds [1]." for i in range(11)), "11 sentences where at most 10"),
        ("## Risk\n## Drugs", "section 'risk' is empty"),
    ],
)
def test_a_malformed_part_is_caught(text: str, problem: str) -> None:
    found = structure_problem(text, max_sentences=5, settings=GUARDS)
    assert found is not None and found.startswith(problem), found


def test_a_well_formed_part_passes_and_the_unknown_phrase_may_repeat() -> None:
    text = f"## Risk\nRisk rises [1].\n## Drugs\n{UNKNOWN}\n## Harms\n{UNKNOWN}"
    assert structure_problem(text, max_sentences=6, settings=GUARDS) is None


async def test_a_looping_long_answer_is_written_offline_and_the_response_says_why(
    minilm: Embedder,
) -> None:
    def reply(body: dict[str, Any]) -> str:
        if "detailed answer" in body["messages"][-1]["content"]:
            return "## treatment\n" * 40
        return "Atrial fibrillation increases the risk of ischemic stroke about fivefold [1]."

    settings = AnswerSettings()
    with FakeOpenAIServer(responder=reply) as server:
        full = Settings(llm=LLMSettings(base_url=server.base_url, model="stand-in", max_retries=0))
        writer = LLMGenerator(OpenAICompatClient(full.llm), full, ExtractiveGenerator(minilm, settings))
        ctx = ResponseContext.from_pack(make_pack(), settings, aspects=ASPECTS)
        with answer_budget(settings):
            result = await answer_context(ctx, writer, settings, CitationSupport(minilm, settings))
    written = {w.part: w for w in result.written}
    assert written["long answer"].writer == "offline"
    assert written["long answer"].reason == "reply rejected: heading 'treatment' repeated 40 times"
    assert written["summary"].writer == "llm" and result.summary.startswith("Atrial fibrillation increases")
    assert result.answer.count("## ") == len(ASPECTS)  # the offline writer's sections, once each
    assert result.degraded is not None and "long answer" in result.degraded.parts


def judge_server(says: str) -> FakeOpenAIServer:
    """A stand-in judge: "yes" says supported to everything; "right" says what the control pairs expect."""

    def reply(body: dict[str, Any]) -> str:
        content = body["messages"][-1]["content"]
        wrong = "moon" in content or "doubled" in content
        return '{"supported": %s}' % ("false" if says == "right" and wrong else "true")

    return FakeOpenAIServer(responder=reply)


def test_a_judge_that_says_yes_to_everything_is_refused(minilm: Embedder) -> None:
    with judge_server("yes") as server:
        client = OpenAICompatClient(LLMSettings(base_url=server.base_url, model="m", max_retries=0))
        judge = LLMSupportJudge(client)
        support = CitationSupport(minilm, AnswerSettings(), judge)
        standing = support.judge_standing()
        assert standing is not None and standing.writer == "offline"
        assert "The moon is made of cheese." in (standing.reason or "")
        asked = len(server.requests)
        assert judge.judge("Apixaban is better than warfarin.", TEXTS[1]) is None  # not asked: scores decide
        assert len(server.requests) == asked == 2  # the supported control, then the moon; never again
        support.judge_standing()
        assert len(server.requests) == 2


def test_a_judge_that_passes_its_controls_is_used(minilm: Embedder) -> None:
    with judge_server("right") as server:
        client = OpenAICompatClient(LLMSettings(base_url=server.base_url, model="m", max_retries=0))
        judge = LLMSupportJudge(client)
        assert judge.standing().writer == "llm" and len(server.requests) == 3
        assert judge.judge("Apixaban is better than warfarin.", TEXTS[1]) is True
        assert len(server.requests) == 4


def test_a_judges_yes_never_carries_a_claim_scored_far_below_the_threshold(minilm: Embedder) -> None:
    class Yes:
        def judge(self, sentence: str, passage: str) -> bool | None:
            return True

    settings = AnswerSettings()
    support = CitationSupport(minilm, settings, Yes())
    found = support.match("The moon is made of cheese.", TEXTS[0])
    limit = settings.citations.support_threshold - settings.citations.judge_veto_margin
    assert found.score < limit and not found.supported
    near = support.match("Warfarin lowers the chance of a stroke.", TEXTS[1])
    assert near.supported  # within the margin the judge still decides
