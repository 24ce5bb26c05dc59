"""Rerankers: a sentence-transformers cross-encoder loaded by name or path (off by default: no weights
ship offline), and the loader that turns the research settings into one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deepcite.config import ResearchSettings
from deepcite.errors import ConfigError


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
        """One relevance score per passage for ``query``; higher is more relevant."""
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
            "set research.retrieval.reranker_model to a local cross-encoder path, or turn research.retrieval.rerank_enabled off"
        ) from exc


def load_reranker(settings: ResearchSettings, errors: list[str]) -> CrossEncoderReranker | None:
    """The configured reranker, or ``None`` when reranking is off or the model cannot load (recorded)."""
    if not settings.retrieval.rerank_enabled:
        return None
    if not settings.retrieval.reranker_model:
        errors.append(
            "reranking is on but research.retrieval.reranker_model is not set; ranking kept as fused"
        )
        return None
    try:
        return CrossEncoderReranker(
            settings.retrieval.reranker_model, batch_size=settings.retrieval.rerank_batch_size
        )
    except ConfigError as exc:
        errors.append(f"reranker unavailable: {exc}")
        return None
