"""The first question after ``deepcite serve`` starts against the next ones: is the first as quick as the rest?

    .venv/bin/python benchmarks/warm_start.py                 # the shipped default (server.warm_start on)
    .venv/bin/python benchmarks/warm_start.py --cold          # server.warm_start off: models load on first use
    .venv/bin/python benchmarks/warm_start.py --orders 1      # one server, the questions in their listed order

A real ``deepcite serve`` process on a free loopback port, over a data dir holding the test fixture corpus (22
abstracts, ingested once into ``.data/warm``). The clock starts when the process is spawned: ``ready_s`` is when
``/healthz`` first answers. Then six different questions, one at a time, through the research page's stream
(``/api/unified-search/stream``): for each, the time to its first hop event and to its ``done`` event; and the
first question asked again at the end (``first_again``), which tells what the question costs warm from what the
start costs.

The questions differ in weight (the first listed asks two things), so one order would measure the question as
much as the start: ``--orders n`` (all six by default) starts n servers, one after the other, the k-th asking the
questions rotated so that the k-th goes first. Reported: for each server, the first question's figures, the
median of the next five and their ratio; over the servers, the median ratio (target: at most 2).

Results go to ``benchmarks/results/warm_start/<date>_<commit>[_cold][_<label>].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from api_common import write_result

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "server" / "corpus.jsonl"
DEFAULT_DATA_DIR = ROOT / ".data" / "warm"
COLLECTION = "demo"
DEEPCITE = str(Path(sys.executable).with_name("deepcite"))  # the environment's command
QUESTIONS = [
    "Does atrial fibrillation increase the risk of stroke, and how is it treated?",
    "Do statins cause muscle pain, and what can be done about it?",
    "Is metformin the first treatment for type 2 diabetes?",
    "Do SGLT2 inhibitors help patients with heart failure?",
    "Should older adults who fall still take anticoagulants?",
    "Does vitamin D supplementation prevent fractures?",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ensure_corpus(env: dict[str, str]) -> None:
    """Ingest the fixture corpus into the data dir's ``demo`` collection once (the CLI, a process of its own)."""
    marker = Path(env["DEEPCITE_DATA_DIR"]) / ".warm-corpus-ingested"
    if marker.exists():
        return
    command = [DEEPCITE, "ingest", str(CORPUS), "--collection", COLLECTION]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    marker.write_text("ok\n")


def timed_question(client: httpx.Client, question: str) -> dict[str, float]:
    """Seconds to the first hop event and to ``done`` for one question through the SSE stream."""
    start = time.perf_counter()
    first_hop = None
    params = {"query": question, "collection": COLLECTION}
    with client.stream("GET", "/api/unified-search/stream", params=params) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line == "event: hop" and first_hop is None:
                first_hop = time.perf_counter() - start
            if line in ("event: done", "event: error"):
                break
    total = time.perf_counter() - start
    return {"first_hop_s": round(first_hop if first_hop is not None else total, 3), "done_s": round(total, 3)}


def serve_and_ask(env: dict[str, str], questions: list[str]) -> dict[str, Any]:
    """One ``deepcite serve`` process: seconds to ready, then ``questions`` one at a time and the first again."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    spawned = time.perf_counter()
    command = [DEEPCITE, "serve", "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen(command, env=env)
    try:
        health: dict[str, Any] = {}
        while not health:
            if server.poll() is not None:
                raise SystemExit(f"deepcite serve exited with {server.returncode}")
            try:
                health = httpx.get(url + "/healthz", timeout=5).json()
            except httpx.TransportError:
                time.sleep(0.1)
        ready = time.perf_counter() - spawned
        with httpx.Client(base_url=url, timeout=600) as client:
            runs = [timed_question(client, q) for q in questions]
            again = timed_question(client, questions[0])  # the first question's own cost, warm
    finally:
        server.terminate()
        server.wait(timeout=60)
    first, rest = runs[0], runs[1:]
    result: dict[str, Any] = {
        "ready_s": round(ready, 2),
        "health": health,
        "questions": [{"question": q, **r} for q, r in zip(questions, runs, strict=True)],
    }
    for key in ("first_hop_s", "done_s"):
        median = statistics.median(r[key] for r in rest)
        result[key] = {
            "first": first[key],
            "median_next_five": median,
            "ratio": round(first[key] / median, 2),
            "first_again": again[key],
            "ratio_to_again": round(first[key] / again[key], 2),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--cold", action="store_true", help="server.warm_start off (the baseline)")
    parser.add_argument(
        "--orders",
        type=int,
        default=len(QUESTIONS),
        choices=range(1, len(QUESTIONS) + 1),
        metavar=f"1-{len(QUESTIONS)}",
        help="servers started, each asking the questions rotated one further (question n first in the n-th)",
    )
    parser.add_argument("--label", default="", help="a word added to the result file's name")
    args = parser.parse_args()

    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "DEEPCITE_DATA_DIR": str(args.data_dir),
        "DEEPCITE_SERVER_DEFAULT_COLLECTION": COLLECTION,
        "DEEPCITE_SERVER_WARM_START": "false" if args.cold else "true",
    }
    args.data_dir.mkdir(parents=True, exist_ok=True)
    ensure_corpus(env)
    orders = []
    for n in range(args.orders):
        order = serve_and_ask(env, QUESTIONS[n:] + QUESTIONS[:n])
        print(json.dumps({k: order[k] for k in ("ready_s", "first_hop_s", "done_s")}), flush=True)
        orders.append(order)
    result: dict[str, Any] = {
        "benchmark": "warm_start",
        "command": " ".join(
            ["benchmarks/warm_start.py", *(["--cold"] if args.cold else []), f"--orders {args.orders}"]
        ),
        "warm_start": not args.cold,
        "orders": orders,
    }
    for key in ("first_hop_s", "done_s"):
        ratios = [order[key]["ratio"] for order in orders]
        result[key] = {"ratios": ratios, "median_ratio": round(statistics.median(ratios), 3)}
    suffix = "_".join(part for part in ("cold" if args.cold else "", args.label) if part)
    path = write_result("warm_start", result, suffix)
    print(json.dumps({k: result[k] for k in ("first_hop_s", "done_s")}, indent=2))
    print(f"written to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
