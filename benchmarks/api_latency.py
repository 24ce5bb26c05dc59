"""End-to-end ``POST /api/unified-search`` latency on SciFact, offline, with the parts apart.

    .venv/bin/python benchmarks/api_latency.py --requests 50

One process: the real app under uvicorn on 127.0.0.1, one client sending SciFact test queries one at a
time over loopback HTTP (no LLM: extractive answers). Reported (p50/p95/mean, ms):

- ``end_to_end``: the client's wall time per request (HTTP, research, answer, JSON);
- ``retrieval`` / ``summary`` / ``answer``: the server's own figures from the response; ``answer_stage``
  is end-to-end minus retrieval (sub-answers first, then summary and long answer in parallel, plus HTTP);
- ``baseline_search``: one plain hybrid search (k=10, query embedding included) of the same queries,
  measured in the same run, so ``ratio_end_to_end_p50_to_search_p50`` says what the research and answer
  stages cost on top of a single search.

Results go to ``benchmarks/results/api_latency/<date>_<commit>.json``. Target: p50 end-to-end ≤ 1.5 s.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import httpx

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from api_common import (  # noqa: E402
    DEFAULT_BEIR,
    DEFAULT_DATA_DIR,
    LiveServer,
    ensure_collection,
    queries,
    summary,
    write_result,
)

from deepcite.config import ServerSettings, Settings  # noqa: E402

TARGET_P50_MS = 1500.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--collection", default="scifact")
    parser.add_argument("--requests", type=int, default=50, help="Measured requests (after the warm-up).")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--max-hops", type=int, default=None, help="Per-request max_hops (default: setting).")
    args = parser.parse_args()

    settings = Settings(data_dir=args.data_dir, server=ServerSettings(default_collection=args.collection))
    col, info = ensure_collection(settings, args.collection, args.beir)
    texts = queries(args.beir)
    measured = [texts[i % len(texts)] for i in range(args.warmup, args.warmup + args.requests)]

    baseline: list[float] = []
    for text in measured:
        t0 = time.perf_counter()
        col.search(text, mode="hybrid", k=10)
        baseline.append((time.perf_counter() - t0) * 1000.0)

    parts: dict[str, list[float]] = {
        "end_to_end": [],
        "retrieval": [],
        "answer_stage": [],  # end to end minus retrieval: sub-answers, then summary ∥ long answer, and HTTP
        "summary": [],
        "answer": [],
    }
    hops: list[int] = []
    errors: list[str] = []
    with LiveServer(settings, col) as server, httpx.Client(base_url=server.base_url, timeout=300) as client:
        body: dict[str, object] = {}
        for i, text in enumerate(texts[: args.warmup] + measured):
            payload: dict[str, object] = {"query": text}
            if args.max_hops:
                payload["max_hops"] = args.max_hops
            t0 = time.perf_counter()
            response = client.post("/api/unified-search", json=payload)
            elapsed = (time.perf_counter() - t0) * 1000.0
            if response.status_code != 200:
                errors.append(f"{response.status_code}: {response.text[:200]}")
                continue
            if i < args.warmup:
                continue
            body = response.json()
            parts["end_to_end"].append(elapsed)
            parts["retrieval"].append(body["retrieval_latency_ms"])
            parts["answer_stage"].append(elapsed - body["retrieval_latency_ms"])
            parts["summary"].append(body["summary_latency_ms"])
            parts["answer"].append(body["answer_latency_ms"])
            hops.append(len(body["retrieval_report"]))
        health = client.get("/healthz").json()

    stats = {name: summary(values) for name, values in parts.items()}
    stats["baseline_search"] = summary(baseline)
    e2e_p50 = stats["end_to_end"].get("p50_ms", 0.0)
    result = {
        "benchmark": "api_latency",
        "command": f"python benchmarks/api_latency.py --requests {args.requests}"
        + (f" --max-hops {args.max_hops}" if args.max_hops else ""),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "collection": info,
        "requests": len(parts["end_to_end"]),
        "errors": len(errors),
        "error_samples": errors[:5],
        "latency": stats,
        "hops_mean": round(sum(hops) / len(hops), 2) if hops else None,
        "ratio_end_to_end_p50_to_search_p50": round(e2e_p50 / stats["baseline_search"]["p50_ms"], 1)
        if baseline
        else None,
        "target_p50_ms": TARGET_P50_MS,
        "target_met": bool(e2e_p50) and e2e_p50 <= TARGET_P50_MS and not errors,
        "context_store": {"size": health["contexts"], "cap": health["context_cap"]},
    }
    path = write_result("api_latency", result)
    print(f"wrote {path}")
    for name, row in stats.items():
        print(f"  {name:16s} {row}")
    print(
        f"  errors {len(errors)} · hops/request {result['hops_mean']} · e2e/search {result['ratio_end_to_end_p50_to_search_p50']}x"
    )


if __name__ == "__main__":
    main()
