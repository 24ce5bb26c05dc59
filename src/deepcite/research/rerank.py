"""The reranker adapter (a sentence-transformers cross-encoder loaded by name or path) and its node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deepcite.config import ResearchSettings
from deepcite.errors import ConfigError
from deepcite.research.protocols import Reranker
from deepcite.research.state import ExecutorState
from deepcite.research.vectors import passage_text


class CrossEncoderReranker:
    """A cross-encoder from a model name or local path (``sentence_transformers.CrossEncoder``).

        reranker = CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L-6-v2")
        reranker.score("statins myopathy", ["Statins can cause muscle pain.", "Aspirin thins blood."])

    ``model`` may also be any object with ``predict(pairs) -> scores`` (a model already in memory).
    """

    def __init__(self, model: str | Any, *, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        if isinstance(model, str):
            self.name = model
            self._model = _load_cross_encoder(model)
        else:
            self.name = type(model).__name__
            self._model = model

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        scores = self._model.predict([(query, p) for p in passages], batch_size=self.batch_size)
        return [float(s) for s in scores]


def _load_cross_encoder(name_or_path: str) -> Any:
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(name_or_path, device="cpu")
    except Exception as exc:  # noqa: BLE001 - any loading failure means the model is not usable here
        raise ConfigError(
            f"cannot load the reranker model {name_or_path!r} ({type(exc).__name__}: {exc}); "
            "set research.reranker_model to a local cross-encoder path, or turn research.rerank_enabled off"
        ) from exc


def load_reranker(settings: ResearchSettings, errors: list[str]) -> Reranker | None:
    """The configured reranker, or ``None`` when reranking is off or the model cannot load (recorded)."""
    if not settings.rerank_enabled:
        return None
    if not settings.reranker_model:
        errors.append("reranking is on but research.reranker_model is not set; ranking kept as fused")
        return None
    try:
        return CrossEncoderReranker(settings.reranker_model, batch_size=settings.rerank_batch_size)
    except ConfigError as exc:
        errors.append(f"reranker unavailable: {exc}")
        return None


def rerank_candidates(
    state: ExecutorState, reranker: Reranker | None, settings: ResearchSettings
) -> ExecutorState:
    """Re-order the top ``rerank_top_n`` candidates by the reranker's score against the sub-question.

    The reranked head keeps its fused score scale (the head's fused scores are re-assigned in the new
    order), so scores stay comparable across rounds; the reranker's own score is kept as a feature.
    A reranker that raises is recorded in ``errors`` and the fused order is kept.
    """
    if reranker is None or not state.candidates:
        state.counts["after_rerank"] = len(state.candidates)
        return state
    head = state.candidates[: settings.rerank_top_n]
    tail = state.candidates[settings.rerank_top_n :]
    try:
        scores = reranker.score(state.subquestion, [passage_text(c.chunk) for c in head])
        if len(scores) != len(head):
            raise ValueError(f"the reranker returned {len(scores)} scores for {len(head)} passages")
    except Exception as exc:  # noqa: BLE001 - a broken reranker must not stop the round
        state.errors.append(
            f"round {state.round}: reranker failed ({type(exc).__name__}: {exc}); fused order kept"
        )
        state.counts["after_rerank"] = len(state.candidates)
        return state
    fused_scores = [c.score for c in head]
    order = sorted(range(len(head)), key=lambda i: -scores[i])
    reranked = []
    for new_pos, i in enumerate(order):
        cand = head[i]
        cand.features["rerank"] = scores[i]
        cand.score = fused_scores[new_pos]
        reranked.append(cand)
    state.candidates = reranked + tail
    state.counts["after_rerank"] = len(state.candidates)
    return state
