"""Embedding precision (issue #22): fp32 against ``auto`` (bf16 where the CPU has AVX512-BF16/AMX), with the
settings behind the defaults, and the answer stage before/after stored sentence offsets.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/embedding_precision.py settings --files ../shared/datasets/real_docs/files
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/embedding_precision.py ingest --files ../shared/datasets/real_docs/files
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/embedding_precision.py answers --pubmedqa ../shared/datasets/pubmedqa_pqal

``settings``: the embedder's own rate (passages/s) on chunks of the ingested documents (``--passages`` drawn
at random), each variant in a fresh process: precision x ``embedder.batch_size`` (8, 16, 32, 64) with the heap
kept (``embedder.heap_trim_mb``), each precision's default batch and 64 with glibc's own heap thresholds, and
``embedder.threads``; also the system time and page faults of the encoding; the timed runs are interleaved
across variants so other users' load falls on all alike; medians of ``--runs``.

``ingest``: ``deepcite ingest FOLDER --json`` in a fresh data dir, one child process per precision
(``DEEPCITE_EMBEDDER_PRECISION=fp32`` / ``auto``), alternated ``--repeats`` times, under GNU time: chunks/s end
to end, the embedder's own passages/s inside the ingest (chunks written / embedding seconds) and the child's
peak RSS; ``--read-ahead-off`` adds ``auto`` with ``ingest.read_ahead`` off, to see what overlapping reading
and chunking with embedding buys. Then top-10 neighbour agreement of the fp32 and auto collections' vectors
(each chunk's 10 nearest other chunks by cosine, the shared share, averaged), and the peak RSS of ingesting
only the 37-page PDF and only the 820k-character DOCX in each precision.

``answers``: ``ask`` (research + offline answer, as ``deepcite eval answers`` runs it) on the PubMedQA PQA-L
test questions over one ingested collection, two ways per question, alternated: ``stored`` (chunks carry
their sentence offsets) and ``resegment`` (the same chunks with ``sentence_spans=None``, as a collection
written before offsets were stored: the answer stage splits them again). Each way has its own Engine
objects; the text module's sentence caches are cleared before every question so neither inherits the
other's splits. p50/p95 of the answer stage alone and of the whole ``ask``.

Results: ``benchmarks/results/embedding_precision/<date>_<commit>_<stage>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from results_path import result_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MEMORY_FILES = ("2206.10883v3.pdf", "handbook-872p.docx")
PRECISIONS = ("fp32", "auto")
NO_READ_AHEAD = "_read_ahead_off"  # a run's name ending: the same precision with ingest.read_ahead off


def _machine() -> dict[str, object]:
    """This machine, and its load average as a stage starts (call it first; :func:`_write` adds the end's)."""
    from deepcite.retrieval.embedders import cpu_has_bf16

    return {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "bf16_native": cpu_has_bf16(),
        "load_average_at_start": os.getloadavg(),
    }


def _write(stage: str, out: dict[str, object]) -> None:
    out["load_average_at_end"] = os.getloadavg()
    path = result_path("embedding_precision", stage)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


# -- settings: batch size, threads, heap -----------------------------------------------------------------------
def _chunk_texts(files: Path, passages: int) -> list[str]:
    """The texts an ingest of ``files`` embeds (read and chunked with the default settings), ``passages`` of
    them drawn at random (all with 0)."""
    from deepcite.config import Settings
    from deepcite.ingest.chunker import chunk_reads
    from deepcite.ingest.formats import document_files
    from deepcite.ingest.readers import read_file
    from deepcite.retrieval.collection import passage_text

    settings = Settings()
    docs = [
        doc
        for path in document_files(files)
        for doc in read_file(path, doc_id=path.name, name=path.name, settings=settings.ingest).documents
    ]
    texts = [passage_text(c) for chunks in chunk_reads(docs, settings.chunker).values() for c in chunks]
    return random.Random(7).sample(texts, passages) if 0 < passages < len(texts) else texts


def _encode_child(texts_file: Path, precision: str, batch: int, threads: int, heap: bool) -> dict[str, float]:
    """One variant timed in a fresh process, as an ingest meets it (the heap setting is process-wide and
    glibc's thresholds move with what a process has freed, so variants must not share one)."""
    code = (
        "import json, resource, sys, time\n"
        "from deepcite.config import EmbedderSettings, Settings\n"
        "from deepcite.retrieval.embedders import build_embedder\n"
        "texts_file, precision, batch, threads, heap = sys.argv[1:]\n"
        "texts = json.loads(open(texts_file, encoding='utf-8').read())\n"
        "kept = {} if heap == 'on' else {'heap_trim_mb': None}  # on: the setting's default\n"
        "s = EmbedderSettings(precision=precision, batch_size=int(batch), threads=int(threads), **kept)\n"
        "embedder = build_embedder(Settings(embedder=s))\n"
        "embedder.encode(texts[:8])\n"
        "r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()\n"
        "embedder.encode(texts)\n"
        "r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()\n"
        "print(json.dumps({'seconds': t1 - t0, 'sys_seconds': r1.ru_stime - r0.ru_stime,\n"
        "                  'page_faults': r1.ru_minflt - r0.ru_minflt}))\n"
    )
    args = [str(texts_file), precision, str(batch), str(threads), "on" if heap else "off"]
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"encoding ({precision}, batch {batch}) failed: {done.stderr[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def settings_sweep(
    files: Path, passages: int, runs: int, batches: list[int], threads_list: list[int]
) -> None:
    import torch

    from deepcite.config import EmbedderSettings
    from deepcite.retrieval.embedders import batch_size, resolve_precision

    machine = _machine()
    texts = _chunk_texts(files, passages)
    default_threads = torch.get_num_threads()
    precisions = ("fp32", resolve_precision("auto"))
    chosen = {p: batch_size(EmbedderSettings(), p) for p in precisions}
    variants = [(p, b, default_threads, True) for p in precisions for b in batches]
    variants += [(p, b, default_threads, False) for p in precisions for b in sorted({chosen[p], 64})]
    variants += [(p, chosen[p], t, True) for p in precisions for t in threads_list if t != default_threads]
    timed: dict[tuple[str, int, int, bool], list[dict[str, float]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory(prefix="deepcite-settings-") as tmp:
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts), encoding="utf-8")
        for r in range(runs):  # run 1 of every variant, then run 2, ...: other users' load falls on all alike
            for variant in variants:
                timed[variant].append(_encode_child(texts_file, *variant))
                print(f"run {r + 1} {variant}: {timed[variant][-1]}", file=sys.stderr, flush=True)
    rows = [
        {
            "precision": p,
            "batch_size": b,
            "threads": t,
            "heap_kept": heap,
            "passages_per_s": round(len(texts) / statistics.median(x["seconds"] for x in timed[v]), 1),
            "sys_seconds": round(statistics.median(x["sys_seconds"] for x in timed[v]), 2),
            "page_faults": int(statistics.median(x["page_faults"] for x in timed[v])),
            "runs_s": [round(x["seconds"], 2) for x in timed[v]],
        }
        for v in variants
        for p, b, t, heap in [v]
    ]
    base = next(r for r in rows if (r["precision"], r["batch_size"], r["heap_kept"]) == ("fp32", 64, False))
    for row in rows:
        row["ratio_to_fp32_batch64_heap_off"] = round(row["passages_per_s"] / base["passages_per_s"], 2)
    out = {"machine": machine, "files": files.name, "passages": len(texts), "runs": runs, "rows": rows}
    _write("settings", out)


# -- ingest: end to end, agreement, memory ------------------------------------------------------------------
def _ingest_child(path: Path, data_dir: Path, variant: str) -> dict[str, object]:
    """``deepcite ingest path`` in a child process under GNU time, in the precision ``variant`` starts with
    (read-ahead off when it ends with ``NO_READ_AHEAD``): the report and the peak RSS (MB)."""
    precision = variant.removesuffix(NO_READ_AHEAD)
    env = {
        **os.environ,
        "DEEPCITE_DATA_DIR": str(data_dir),
        "DEEPCITE_EMBEDDER_PRECISION": precision,
        "DEEPCITE_INGEST_READ_AHEAD": str(not variant.endswith(NO_READ_AHEAD)).lower(),
    }
    command = [sys.executable, "-m", "deepcite.cli", "ingest", str(path), "-c", "bench", "--on-error", "skip"]
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *command, "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"ingesting {path.name} ({precision}) failed: {done.stderr[-800:]}")
    report = json.loads(done.stdout)
    return {"report": report, "peak_rss_mb": round(int(done.stderr.strip().splitlines()[-1]) / 1024, 1)}


def _vectors(data_dir: Path) -> tuple[list[str], np.ndarray]:
    from deepcite.config import Settings
    from deepcite.retrieval.store import open_store

    store = open_store(Settings(data_dir=data_dir))
    try:
        ids = sorted(c.chunk_id for c in store.scroll("bench"))
        found = store.dense_vectors("bench", ids)
    finally:
        store.close()
    return ids, np.asarray([found[i] for i in ids], dtype=np.float32)


def neighbour_agreement(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """Mean share of each row's k nearest other rows (cosine; rows are unit length) that both agree on. Equal
    similarities are ordered by row, the same way in both: a document repeats text (on the 19 real documents
    324 of the 1,691 chunks repeat another chunk's text), and an unstable sort picked among such exact ties
    at random, which read as disagreement (0.980 where the stable order gives 0.993 on the same vectors)."""

    def nearest(v: np.ndarray) -> np.ndarray:
        sims = v @ v.T
        np.fill_diagonal(sims, -np.inf)
        return np.argsort(-sims, axis=1, kind="stable")[:, :k]

    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(nearest(a), nearest(b), strict=True)]))


def ingest_bench(files: Path, picked: list[str], repeats: int, k: int, read_ahead_off: bool) -> None:
    machine = _machine()
    variants = PRECISIONS + ((f"auto{NO_READ_AHEAD}",) if read_ahead_off else ())
    runs: dict[str, list[dict[str, object]]] = {v: [] for v in variants}
    kept: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(prefix="deepcite-precision-") as tmp:
        folder = files
        if picked:  # only these files of the folder, linked into a folder of their own
            folder = Path(tmp) / "files"
            folder.mkdir()
            for name in picked:
                (folder / name).symlink_to((files / name).resolve())
        for r in range(repeats):
            for precision in variants if r % 2 == 0 else variants[::-1]:
                data_dir = Path(tmp) / f"{precision}-{r}"
                result = _ingest_child(folder, data_dir, precision)
                report = result["report"]
                runs[precision].append(
                    {
                        "chunks": report["chunks"],
                        "seconds": report["seconds"],
                        "read_seconds": report["read_seconds"],
                        "embed_seconds": report["embed_seconds"],
                        "chunks_per_s": round(report["chunks"] / report["seconds"], 2),
                        "embedder_passages_per_s": round(report["written"] / report["embed_seconds"], 1),
                        "peak_rss_mb": result["peak_rss_mb"],
                        "load_average_after": os.getloadavg(),
                    }
                )
                print(f"{precision} run {r + 1}: {runs[precision][-1]}", file=sys.stderr, flush=True)
                kept[precision] = data_dir
        ids_fp32, fp32 = _vectors(kept["fp32"])
        ids_auto, auto = _vectors(kept["auto"])
        if ids_fp32 != ids_auto:
            raise SystemExit("the two ingests made different chunks; agreement cannot be compared")
        same_row = np.sum(fp32 * auto, axis=1)
        agreement = {
            f"top{k}_neighbour_agreement": round(neighbour_agreement(fp32, auto, k), 4),
            "chunks": len(ids_fp32),
            "cosine_same_chunk_mean": round(float(same_row.mean()), 5),
            "cosine_same_chunk_min": round(float(same_row.min()), 5),
        }
        memory = {p: {} for p in PRECISIONS}
        for name in MEMORY_FILES:
            for precision in PRECISIONS:
                data_dir = Path(tmp) / f"mem-{precision}-{name}"
                memory[precision][name] = _ingest_child(files / name, data_dir, precision)["peak_rss_mb"]

    def median(precision: str, key: str) -> float:
        return round(statistics.median(float(run[key]) for run in runs[precision]), 2)

    summary = {
        p: {
            key: median(p, key)
            for key in ("chunks_per_s", "embedder_passages_per_s", "seconds", "peak_rss_mb")
        }
        for p in variants
    }
    ratios = {
        "end_to_end_chunks_per_s": round(
            summary["auto"]["chunks_per_s"] / summary["fp32"]["chunks_per_s"], 2
        ),
        "embedder_passages_per_s": round(
            summary["auto"]["embedder_passages_per_s"] / summary["fp32"]["embedder_passages_per_s"], 2
        ),
    }
    if read_ahead_off:
        off = summary[f"auto{NO_READ_AHEAD}"]["chunks_per_s"]
        ratios["end_to_end_auto_read_ahead_on_over_off"] = round(summary["auto"]["chunks_per_s"] / off, 2)
    out = {
        "machine": machine,
        "files": sorted(picked) or str(files.name),
        "repeats": repeats,
        "median": summary,
        "auto_over_fp32": ratios,
        "agreement": agreement,
        "peak_rss_mb_one_file": memory,
        "runs": runs,
    }
    _write("ingest", out)


# -- answers: stored sentence offsets against re-segmenting ------------------------------------------------
def answers_bench(folder: Path, split: str, limit: int | None) -> None:
    """With ``limit``, only the abstracts of the first ``limit`` questions are ingested (a smaller corpus, the
    same answer stage)."""
    from deepcite.answer.context import ResponseContext
    from deepcite.answer.pipeline import answer_context
    from deepcite.config import Settings
    from deepcite.evaluation.answerer import OFFLINE, Answerer
    from deepcite.evaluation.pubmedqa import PUBMEDQA_COLLECTION, load_pubmedqa, pubmedqa_collection
    from deepcite.retrieval.collection import open_collection
    from deepcite.text import _sentences, sentence_spans

    machine = _machine()
    items = load_pubmedqa(folder, split, limit)
    with tempfile.TemporaryDirectory(prefix="deepcite-offsets-") as tmp:
        settings = Settings(data_dir=Path(tmp))
        corpus = folder
        if limit is not None:
            corpus = Path(tmp) / "pubmedqa"
            corpus.mkdir()
            records = json.loads((folder / "ori_pqal.json").read_text(encoding="utf-8"))
            kept = {item.pmid: records[item.pmid] for item in items}
            (corpus / "ori_pqal.json").write_text(json.dumps(kept), encoding="utf-8")
        collection = pubmedqa_collection(corpus, open_collection(PUBMEDQA_COLLECTION, settings))
        ways = {"stored": Answerer(collection, settings), "resegment": Answerer(collection, settings)}
        answer_ms: dict[str, list[float]] = {w: [] for w in ways}
        ask_ms: dict[str, list[float]] = {w: [] for w in ways}
        summaries_equal = 0
        for n, item in enumerate(items):
            order = list(ways) if n % 2 == 0 else list(reversed(ways))
            summaries: dict[str, str] = {}
            for way in order:
                answerer = ways[way]
                _sentences.cache_clear()
                sentence_spans.cache_clear()
                started = time.perf_counter()
                result = answerer.agent.process(item.question)
                ctx = ResponseContext.from_pack(result.pack, settings.answer)
                if way == "resegment":
                    for chunk in ctx.all_chunks():
                        chunk.sentence_spans = None
                answer_started = time.perf_counter()
                answered = asyncio.run(
                    answer_context(ctx, answerer.writers[OFFLINE], settings.answer, answerer.support)
                )
                done = time.perf_counter()
                answer_ms[way].append((done - answer_started) * 1000.0)
                ask_ms[way].append((done - started) * 1000.0)
                summaries[way] = answered.summary
            summaries_equal += summaries["stored"] == summaries["resegment"]
            if (n + 1) % 50 == 0:
                print(f"{n + 1}/{len(items)}", file=sys.stderr)

    def quantiles(values: list[float]) -> dict[str, float]:
        cuts = statistics.quantiles(values, n=20)
        return {"p50": round(statistics.median(values), 1), "p95": round(cuts[18], 1)}

    out = {
        "machine": machine,
        "questions": len(items),
        "abstracts_ingested": "the questions' own" if limit is not None else "all 1,000",
        "split": split,
        "answer_stage_ms": {w: quantiles(v) for w, v in answer_ms.items()},
        "ask_ms": {w: quantiles(v) for w, v in ask_ms.items()},
        "answer_stage_p50_ratio_stored_over_resegment": round(
            statistics.median(answer_ms["stored"]) / statistics.median(answer_ms["resegment"]), 3
        ),
        "same_summary_share": round(summaries_equal / len(items), 3),
    }
    _write("answers", out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    stages = parser.add_subparsers(dest="stage", required=True)
    sweep = stages.add_parser("settings")
    sweep.add_argument("--files", type=Path, required=True, help="documents whose chunks are embedded")
    sweep.add_argument("--passages", type=int, default=512, help="chunks drawn at random (0: all)")
    sweep.add_argument("--runs", type=int, default=2)
    sweep.add_argument("--batches", default="8,16,32,64", help="batch sizes, heap kept, torch's threads")
    sweep.add_argument("--threads", default="1,2", help="thread counts, at each precision's batch size")
    ingest = stages.add_parser("ingest")
    ingest.add_argument("--files", type=Path, required=True)
    ingest.add_argument("--pick", action="append", default=[], help="only this file of --files (repeatable)")
    ingest.add_argument("--repeats", type=int, default=1)
    ingest.add_argument("--k", type=int, default=10)
    ingest.add_argument(
        "--read-ahead-off", action="store_true", help="also ingest in auto with ingest.read_ahead off"
    )
    answers = stages.add_parser("answers")
    answers.add_argument("--pubmedqa", type=Path, required=True)
    answers.add_argument("--split", default="test")
    answers.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    if args.stage == "settings":
        ints = [[int(x) for x in value.split(",")] for value in (args.batches, args.threads)]
        settings_sweep(args.files, args.passages, args.runs, *ints)
    elif args.stage == "ingest":
        ingest_bench(args.files, args.pick, args.repeats, args.k, args.read_ahead_off)
    else:
        answers_bench(args.pubmedqa, args.split, args.limit)


if __name__ == "__main__":
    main()
