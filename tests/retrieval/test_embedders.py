"""Embedders: an OpenAI-compatible endpoint (a real HTTP server on 127.0.0.1 standing in for a remote
embedding service) and the packaged MiniLM model (slow)."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from llm.fake_openai_server import EMBEDDING_DIM, Fail, FakeOpenAIServer, Hang, stand_in_embedding

from deepcite.config import EmbedderSettings, LLMSettings, Settings
from deepcite.errors import ConfigError, EmbedderError, InputError
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.llm.retry import RetryPolicy
from deepcite.models import Document, VectorSource
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import (
    Embedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    batch_size,
    build_embedder,
    cpuinfo_has_bf16,
    resolve_precision,
)
from deepcite.retrieval.store import open_store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

STANDIN_DIM = 6


def standin_vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [float(b) - 127.5 for b in digest[:STANDIN_DIM]]


class _StandinEmbeddings(BaseHTTPRequestHandler):
    """Stand-in for a remote OpenAI-compatible /v1/embeddings service (deterministic, reversed order)."""

    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"model exploded")
            return
        data = [
            {"index": i, "embedding": standin_vector(t), "object": "embedding"}
            for i, t in enumerate(body["input"])
        ]
        payload = json.dumps({"object": "list", "data": data[::-1], "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


async def _no_wait(seconds: float) -> None:
    return None


def embedder_for(base_url: str, model: str, **kwargs: object) -> OpenAIEmbedder:
    """An embedder with one quick retry (no real waits) and a 30 s deadline per call."""
    retry = RetryPolicy(LLMSettings(max_retries=1), asleep=_no_wait)
    return OpenAIEmbedder(base_url, model, retry=retry, call_deadline_s=30.0, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def endpoint() -> Iterator[str]:
    _StandinEmbeddings.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandinEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_embedder_batches_orders_and_normalises(endpoint: str) -> None:
    embedder = embedder_for(endpoint, "text-embed", api_key="sk-test", batch_size=2, query_prefix="query: ")
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    vectors = embedder.encode(texts)
    assert vectors.shape == (5, STANDIN_DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    for text, row in zip(texts, vectors, strict=True):
        expected = np.asarray(standin_vector(text))
        assert np.allclose(row, expected / np.linalg.norm(expected), atol=1e-6)
    sent = _StandinEmbeddings.requests
    assert [len(r["body"]["input"]) for r in sent] == [2, 2, 1]
    assert all(r["path"] == "/v1/embeddings" and r["auth"] == "Bearer sk-test" for r in sent)
    assert embedder.dim == STANDIN_DIM and embedder.name == "text-embed"
    embedder.encode(["what is alpha"], kind="query")
    assert sent[-1]["body"]["input"] == ["query: what is alpha"]
    assert embedder.encode([]).shape == (0, STANDIN_DIM)
    assert isinstance(embedder, Embedder)


def test_openai_embedder_probes_dim_and_sends_dimensions(endpoint: str) -> None:
    assert embedder_for(endpoint, "m").dim == STANDIN_DIM
    embedder_for(endpoint, "m", dimensions=STANDIN_DIM).encode(["x"])
    assert _StandinEmbeddings.requests[-1]["body"]["dimensions"] == STANDIN_DIM


def test_openai_embedder_errors_are_clear(endpoint: str) -> None:
    with pytest.raises(EmbedderError, match="HTTP 500: model exploded"):
        embedder_for(endpoint, "broken").encode(["x"])
    with pytest.raises(EmbedderError, match="unreachable"):
        embedder_for("http://127.0.0.1:9/v1", "m", timeout_s=2).encode(["x"])
    with pytest.raises(ConfigError, match="needs base_url and model"):
        embedder_for("", "m")


def test_a_429_with_retry_after_is_waited_out_and_the_batch_sent_again() -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    with FakeOpenAIServer() as server:
        server.script(Fail(429, retry_after="3"))
        retry = RetryPolicy(LLMSettings(max_retries=2), asleep=record)
        embedder = OpenAIEmbedder(server.base_url, "m", retry=retry, call_deadline_s=30.0)
        vectors = embedder.encode(["alpha", "beta"])
        assert waits == [3.0]  # the Retry-After, exactly
        assert [r["input"] for r in server.requests] == [["alpha", "beta"]] * 2
        expected = np.asarray(stand_in_embedding("beta"))
        assert vectors.shape == (2, EMBEDDING_DIM)
        assert np.allclose(vectors[1], expected / np.linalg.norm(expected), atol=1e-6)
        server.script(Fail(429, retry_after="3"), Fail(503), Fail(503))  # more failures than retries
        with pytest.raises(EmbedderError, match="HTTP 503"):
            embedder.encode(["gamma"])
        server.script(Fail(429, retry_after="600"))  # longer than llm.backoff_max_s: no retry
        with pytest.raises(EmbedderError, match="HTTP 429"):
            embedder.encode(["delta"])
        embedder.close()


def test_a_call_past_its_deadline_is_an_embedder_error() -> None:
    with FakeOpenAIServer() as server:
        server.script(Hang(30.0))
        retry = RetryPolicy(LLMSettings(max_retries=0), asleep=_no_wait)
        embedder = OpenAIEmbedder(server.base_url, "m", retry=retry, call_deadline_s=0.5)
        with pytest.raises(EmbedderError, match=r"did not answer within 0.5 s.*llm.call_deadline_s"):
            embedder.encode(["alpha"])
        embedder.close()


def test_build_embedder_builds_the_configured_kind(endpoint: str) -> None:
    settings = Settings(embedder=EmbedderSettings(kind="openai", base_url=endpoint, model="m", batch_size=3))
    built = build_embedder(settings)
    assert isinstance(built, OpenAIEmbedder) and built.batch_size == 3
    assert build_embedder(settings) is not built  # no process cache: the Engine builds one and shares it


@pytest.mark.slow
def test_default_minilm_embedder_offline(minilm: Embedder) -> None:
    assert minilm.dim == 384 and minilm.name == "all-MiniLM-L6-v2"
    vectors = minilm.encode(
        [
            "Statins can cause muscle pain.",
            "Muscle aches are a side effect of statin drugs.",
            "Zinc shortens colds.",
        ]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    query = minilm.encode(["do statins hurt muscles"], kind="query")
    assert query.shape == (1, 384)


@pytest.mark.slow
def test_max_seq_length_is_applied(minilm: Embedder) -> None:
    from deepcite.retrieval.embedders import SentenceTransformerEmbedder

    short = SentenceTransformerEmbedder(batch_size=2, max_seq_length=16)
    assert short.max_seq_length == 16
    long_text = "statin " * 10 + "muscle pain " * 100
    assert not np.allclose(short.encode([long_text]), minilm.encode([long_text]), atol=1e-3)


# -- precision ------------------------------------------------------------------------------------------


def test_auto_precision_is_bf16_only_where_the_cpu_computes_it(tmp_path: Path) -> None:
    assert resolve_precision("auto", lambda: True) == "bf16"
    assert resolve_precision("auto", lambda: False) == "fp32"
    assert resolve_precision("fp32", lambda: True) == "fp32"
    assert resolve_precision("bf16", lambda: False) == "bf16"  # asked for: honoured (slow without support)
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_tile\n")
    assert cpuinfo_has_bf16(cpuinfo)
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    assert not cpuinfo_has_bf16(cpuinfo)
    assert not cpuinfo_has_bf16(tmp_path / "missing")


def test_an_unknown_precision_is_refused_naming_the_choices() -> None:
    with pytest.raises(ConfigError, match="embedder.precision.*'auto', 'fp32' or 'bf16'"):
        Settings.load(embedder={"precision": "int8"})


@pytest.fixture(scope="module")
def both_precisions() -> dict[str, SentenceTransformerEmbedder]:
    """The real MiniLM in fp32 and in bf16 (bf16 runs on any CPU, natively where it has AVX512-BF16/AMX)."""
    return {p: SentenceTransformerEmbedder(precision=p) for p in ("fp32", "bf16")}


@pytest.mark.slow
def test_fp32_and_bf16_give_unit_float32_rows_and_the_same_neighbours(both_precisions) -> None:
    corpus = [json.loads(line) for line in (FIXTURES / "beir_mini" / "corpus.jsonl").open(encoding="utf-8")]
    texts = [f"{d['title']}. {d['text']}" for d in corpus]
    vectors = {p: e.encode(texts) for p, e in both_precisions.items()}
    for p, v in vectors.items():
        assert both_precisions[p].precision == p
        assert v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # bf16 is close to fp32, not equal to it
    same_row = np.sum(vectors["fp32"] * vectors["bf16"], axis=1)
    assert same_row.min() > 0.98 and not np.allclose(vectors["fp32"], vectors["bf16"], atol=1e-4)
    k = 5
    agree = []
    for v in vectors.values():
        sims = v @ v.T
        np.fill_diagonal(sims, -1.0)
        # equal similarities in row order for both, as benchmarks/embedding_precision.py orders them
        agree.append(np.argsort(-sims, axis=1, kind="stable")[:, :k])
    overlap = np.mean([len(set(a) & set(b)) / k for a, b in zip(*agree, strict=True)])
    assert overlap >= 0.9, overlap


@pytest.mark.slow
def test_a_collection_refuses_vectors_of_another_precision(tmp_path: Path, both_precisions) -> None:
    settings = Settings(data_dir=tmp_path)
    docs = [
        Document(id="a", text="Statins can cause muscle pain."),
        Document(id="b", text="Zinc shortens colds."),
    ]
    fp32 = IngestPipeline(
        Collection("papers", open_store(settings), settings, embedder=both_precisions["fp32"])
    )
    fp32.ingest(docs)
    store = fp32.collection.store
    assert store.vector_source("papers") == VectorSource(model="all-MiniLM-L6-v2", precision="fp32")
    assert store.describe("papers").vectors == VectorSource(model="all-MiniLM-L6-v2", precision="fp32")
    bf16 = IngestPipeline(Collection("papers", store, settings, embedder=both_precisions["bf16"]))
    more = [Document(id="c", text="Vitamin D and bone density.")]
    with pytest.raises(
        InputError, match=r"fp32; this ingest makes vectors of all-MiniLM-L6-v2 in bf16"
    ) as err:
        bf16.ingest(more)
    assert 'embedder.precision = "fp32"' in str(err.value) and "--rebuild" in str(err.value)
    assert store.count("papers") == 2  # nothing was written
    fp32.ingest(more)  # the same precision adds to it
    assert store.count("papers") == 3
    store.close()


@pytest.mark.slow
def test_a_collection_written_before_sources_were_recorded_counts_as_fp32(
    tmp_path: Path, both_precisions
) -> None:
    settings = Settings(data_dir=tmp_path)
    store = open_store(settings)
    col = IngestPipeline(Collection("old", store, settings, embedder=both_precisions["fp32"]))
    col.ingest([Document(id="a", text="Statins can cause muscle pain.")])
    meta = store.read_meta("old")
    meta.vectors = None  # as an older deepcite left it
    store.write_meta("old", meta)
    assert store.vector_source("old") == VectorSource(model=None, precision="fp32")
    with pytest.raises(InputError, match="an unrecorded model in fp32"):
        IngestPipeline(Collection("old", store, settings, embedder=both_precisions["bf16"])).ingest(
            [Document(id="b", text="Zinc shortens colds.")]
        )
    col.ingest([Document(id="b", text="Zinc shortens colds.")])
    assert store.vector_source("old") == VectorSource(model="all-MiniLM-L6-v2", precision="fp32")
    store.close()


# -- batch size and heap ------------------------------------------------------------------------------


def test_the_batch_size_is_the_setting_else_the_one_for_the_precision() -> None:
    defaults = EmbedderSettings()
    assert [batch_size(defaults, p) for p in ("fp32", "bf16", None)] == [8, 16, 64]
    assert {batch_size(EmbedderSettings(batch_size=5), p) for p in ("fp32", "bf16", None)} == {5}


_HEAP = """
import ctypes, sys

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "keep_heap":  # nothing else imported: no earlier free has moved glibc's thresholds
    from deepcite.retrieval.embedders import keep_heap
    assert keep_heap(128, 32)
elif sys.argv[1] == "settings":
    from deepcite.config import EmbedderSettings, Settings
    from deepcite.retrieval.embedders import build_embedder
    build_embedder(Settings(embedder=EmbedderSettings(precision="fp32")))
before = libc.mallinfo2()
block = libc.malloc(24 << 20)
mapped = libc.mallinfo2().hblkhd - before.hblkhd
libc.free(block)
print(mapped >> 20, libc.mallinfo2().arena >> 20)
"""


@pytest.mark.slow
@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="heap_* tune glibc's malloc")
def test_a_kept_heap_serves_a_large_block_and_keeps_it_after_it_is_freed() -> None:
    """A 24 MiB block (a batch's activations are of this order) in a fresh process: under glibc's own
    thresholds it is a fresh mapping, its pages zeroed by the kernel every time; with the heap kept (by
    keep_heap, or by the default settings through build_embedder) it comes from the heap, which still holds
    it after it is freed, ready for the next batch. Page-fault counts are measured in
    benchmarks/embedding_precision.py."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    seen = {}
    for how in ("glibc", "keep_heap", "settings"):
        done = subprocess.run(
            [sys.executable, "-c", _HEAP, how],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
            env=env,
        )
        mapped_mb, heap_mb = map(int, done.stdout.split()[-2:])
        seen[how] = (mapped_mb, heap_mb)
    assert seen["glibc"][0] >= 24, seen
    for how in ("keep_heap", "settings"):
        assert seen[how][0] == 0 and seen[how][1] >= 24, seen


@pytest.mark.slow
def test_a_small_call_runs_on_its_own_intra_op_threads() -> None:
    """A question's few texts run on embedder.small_call_threads torch threads (torch's own 2 threads made short
    encodes 10x slower on a busy 2-core machine); a larger call, and torch afterwards, keep the process's."""
    import torch

    embedder = SentenceTransformerEmbedder(threads=2, small_call_texts=2, small_call_threads=1)
    seen: list[int] = []
    embedder._model.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
    embedder.encode(["one question"], kind="query")
    embedder.encode(["a", "b", "c"])
    assert seen == [1, 2] and torch.get_num_threads() == 2
