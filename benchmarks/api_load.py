"""Load run: 32 concurrent clients, ≥ 500 ``POST /api/unified-search`` requests over loopback, offline.

    .venv/bin/python benchmarks/api_load.py --clients 32 --requests 512 --context-cap 200

One process: the real app under uvicorn on 127.0.0.1 over the SciFact collection; ``--clients`` asyncio
clients share ``--requests`` SciFact test queries (cycled) and each sends its next request as soon as the
previous one returns. Reported: throughput (requests/s), latency p50/p95, errors (non-200 or transport
failures), and the response-context store's size after the run against its cap (``--context-cap`` is set
below the request count so eviction is exercised). As a baseline from the same run, the same server's
latency with one client (``--baseline-requests`` sequential requests before the load) gives the
slow-down under load. Results go to ``benchmarks/results/api_load/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
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

from deepcite.config import AnswerSettings, ServerSettings, Settings  # noqa: E402


async def run_clients(
    base_url: str, texts: list[str], clients: int, max_hops: int | None
) -> tuple[list[float], list[str], float]:
    """Send every text once with ``clients`` concurrent workers; latencies (ms), errors, wall seconds."""
    pending = list(enumerate(texts))
    latencies: list[float] = []
    errors: list[str] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async with httpx.AsyncClient(base_url=base_url, timeout=600, limits=limits) as client:

        async def worker() -> None:
            while pending:
                _, text = pending.pop()
                payload: dict[str, object] = {"query": text}
                if max_hops:
                    payload["max_hops"] = max_hops
                t0 = time.perf_counter()
                try:
                    response = await client.post("/api/unified-search", json=payload)
                except httpx.HTTPError as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                if response.status_code == 200:
                    latencies.append((time.perf_counter() - t0) * 1000.0)
                else:
                    errors.append(f"{response.status_code}: {response.text[:200]}")
                done = len(latencies) + len(errors)
                if done % 50 == 0:
                    print(f"  {done}/{len(texts)} done, {len(errors)} errors", flush=True)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return latencies, errors, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--collection", default="scifact")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=512)
    parser.add_argument("--baseline-requests", type=int, default=10)
    parser.add_argument("--context-cap", type=int, default=200, help="answer.context.max_count for the run")
    parser.add_argument("--max-hops", type=int, default=None, help="Per-request max_hops (default: setting).")
    args = parser.parse_args()

    settings = Settings(
        data_dir=args.data_dir,
        server=ServerSettings(default_collection=args.collection),
        answer=AnswerSettings().tuned(context={"max_count": args.context_cap}),
    )
    col, info = ensure_collection(settings, args.collection, args.beir)
    pool = queries(args.beir)
    texts = [pool[i % len(pool)] for i in range(args.requests)]
    baseline_texts = [pool[-(i + 1)] for i in range(args.baseline_requests)]

    with LiveServer(settings, col) as server:
        single, single_errors, _ = asyncio.run(run_clients(server.base_url, baseline_texts, 1, args.max_hops))
        latencies, errors, seconds = asyncio.run(
            run_clients(server.base_url, texts, args.clients, args.max_hops)
        )
        health = httpx.get(f"{server.base_url}/healthz").json()

    load = summary(latencies)
    one = summary(single)
    result = {
        "benchmark": "api_load",
        "command": f"python benchmarks/api_load.py --clients {args.clients} --requests {args.requests} "
        f"--context-cap {args.context_cap}" + (f" --max-hops {args.max_hops}" if args.max_hops else ""),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "collection": info,
        "clients": args.clients,
        "requests": args.requests,
        "ok": len(latencies),
        "errors": len(errors) + len(single_errors),
        "error_samples": (errors + single_errors)[:5],
        "seconds": round(seconds, 1),
        "throughput_rps": round(len(latencies) / seconds, 2) if seconds else None,
        "latency_under_load": load,
        "latency_single_client": one,
        "ratio_load_p50_to_single_p50": round(load["p50_ms"] / one["p50_ms"], 1)
        if latencies and single
        else None,
        "context_store": {
            "size_after": health["contexts"],
            "cap": health["context_cap"],
            "within_cap": health["contexts"] <= health["context_cap"],
        },
    }
    path = write_result("api_load", result)
    print(f"wrote {path}")
    for key in ("ok", "errors", "seconds", "throughput_rps", "latency_under_load", "latency_single_client",
                "ratio_load_p50_to_single_p50", "context_store"):  # fmt: skip
        print(f"  {key}: {result[key]}")


if __name__ == "__main__":
    main()
