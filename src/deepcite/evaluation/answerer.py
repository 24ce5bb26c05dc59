"""Research plus answer through the Engine for the answer evaluations (:class:`Answerer`): the offline writer and,
with an LLM, the Engine as configured, on one research context or each on its own."""

from __future__ import annotations

import asyncio
import time

from deepcite.answer.context import ContextChunk, ResponseContext
from deepcite.answer.pipeline import AnswerResult, answer_budget
from deepcite.app.assembly import answer_stage
from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.errors import InputError
from deepcite.service import QuestionRequest

OFFLINE, LLM = "deepcite_summary", "deepcite_llm_summary"
Answered = tuple[AnswerResult, float, ResponseContext]  # an answer, its milliseconds, the context it cites


class Answerer:
    """Research plus the answer through the Engine, as ``deepcite ask`` runs them: the Engine's research with
    no LLM, and on that one research context the answer stage (:func:`deepcite.app.assembly.answer_stage`) of
    the offline Engine and, with ``llm``, of the Engine as configured with its LLM."""

    def __init__(
        self, engine: Engine, collection: str, *, llm: bool = False, same_context: bool = False
    ) -> None:
        self.collection = collection
        self.engine = engine
        self.same_context = same_context
        self.offline = (
            engine
            if not engine.settings.llm.configured
            else engine.sharing(offline_settings(engine.settings))
        )
        self.engines: dict[str, Engine] = {OFFLINE: self.offline}
        if llm:
            if not engine.settings.llm.configured:
                raise InputError("--llm needs a model: set DEEPCITE_LLM_BASE_URL and DEEPCITE_LLM_MODEL")
            self.engines[LLM] = engine

    @property
    def writers(self) -> list[str]:
        return list(self.engines)

    def ask(self, question: str) -> tuple[ResponseContext, dict[str, Answered]]:
        """The offline research context, and each writer's answer with the milliseconds research and it took
        and the context it was written from (the LLM's own research unless ``same_context``)."""
        request = QuestionRequest(query=question, collection=self.collection)
        started = time.perf_counter()
        result = self.offline.research_sync(request)
        ctx = ResponseContext.from_pack(result.pack, self.offline.settings.answer)
        research_ms = (time.perf_counter() - started) * 1000.0
        answers: dict[str, Answered] = {}
        for name, engine in self.engines.items():
            started = time.perf_counter()
            if engine is self.offline or self.same_context:
                answered = asyncio.run(_answer(ctx, engine))
                answers[name] = (answered, research_ms + (time.perf_counter() - started) * 1000.0, ctx)
                continue
            asked = engine.ask_sync(request)  # research and answer under one budget, as deepcite ask
            own = ResponseContext(
                request_id=asked.request_id,
                query=question,
                selected_chunks=[
                    ContextChunk.model_validate(c, from_attributes=True) for c in asked.citations
                ],
            )
            answers[name] = (asked, (time.perf_counter() - started) * 1000.0, own)
        return ctx, answers

    def close(self) -> None:
        """Close the offline Engine when it was made here."""
        if self.offline is not self.engine:
            self.offline.close()


def offline_settings(settings: Settings) -> Settings:
    """``settings`` with no LLM: every step offline."""
    return settings.model_copy(
        update={"llm": settings.llm.model_copy(update={"base_url": None, "model": None})}
    )


async def _answer(ctx: ResponseContext, engine: Engine) -> AnswerResult:
    with answer_budget(engine.settings.answer):
        return await answer_stage(ctx, engine.resources)
