"""Run the three analyses in parallel: the LLM when one is configured, the offline analysis otherwise.

Each LLM call has its own timeout (``PractitionerSettings.analysis.timeout_s``); a call that times out,
fails or answers something unusable is replaced by the offline analysis, and :class:`AnalysisUse` says so.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from deepcite.config import PractitionerSettings
from deepcite.llm.client import LLMClient
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.llm_analysis import llm_clinical, llm_general, llm_insights
from deepcite.practitioners.offline import Conversation, offline_clinical, offline_general, offline_insights
from deepcite.practitioners.schemas import AnalysisUse, ClinicalIntent, GeneralIntent, Insights

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class Analyses:
    """The three analyses of one request and which implementation produced each."""

    insights: Insights
    general: GeneralIntent
    clinical: ClinicalIntent
    used: dict[str, AnalysisUse]


async def _with_fallback(
    name: str,
    llm_call: Callable[[], Awaitable[T]] | None,
    offline: Callable[[], T],
    timeout_s: float,
) -> tuple[T, AnalysisUse]:
    if llm_call is None:
        return offline(), AnalysisUse(source="offline")
    try:
        return await asyncio.wait_for(llm_call(), timeout=timeout_s), AnalysisUse(source="llm")
    except TimeoutError:
        reason = f"the LLM did not answer within {timeout_s:g}s"
    except Exception as exc:  # any failure at the remote boundary falls back; the reason is reported
        reason = f"{type(exc).__name__}: {exc}"
    log.warning("practitioner %s analysis fell back to offline: %s", name, reason)
    return offline(), AnalysisUse(source="offline", fallback_reason=reason)


async def run_analyses(
    conversation: Conversation,
    *,
    catalogue: Catalogue,
    settings: PractitionerSettings,
    cities: list[str],
    specialties: Sequence[str],
    llm: LLMClient | None,
) -> Analyses:
    """Insights, general intent and clinical intent, concurrently (``asyncio.gather``)."""
    timeout = settings.analysis.timeout_s

    def call(make: Callable[[LLMClient], Awaitable[T]]) -> Callable[[], Awaitable[T]] | None:
        if llm is None:
            return None
        client = llm
        return lambda: make(client)

    (insights, i_use), (general, g_use), (clinical, c_use) = await asyncio.gather(
        _with_fallback(
            "insights",
            call(lambda c: llm_insights(c, conversation, settings)),
            lambda: offline_insights(conversation, catalogue, settings, cities),
            timeout,
        ),
        _with_fallback(
            "general",
            call(lambda c: llm_general(c, conversation, settings)),
            lambda: offline_general(conversation, catalogue, settings),
            timeout,
        ),
        _with_fallback(
            "clinical",
            call(lambda c: llm_clinical(c, conversation, settings, catalogue, specialties)),
            lambda: offline_clinical(conversation, catalogue, settings),
            timeout,
        ),
    )
    return Analyses(insights, general, clinical, {"insights": i_use, "general": g_use, "clinical": c_use})
