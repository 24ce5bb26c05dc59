"""Worst request time with a misbehaving LLM, before and after the request budget, on a real server.

    nice -n 10 .venv/bin/python benchmarks/llm_faults.py --before 55b813d --budget 10

For each code version (this tree, and ``--before`` checked out in a git worktree and run with
``PYTHONPATH``), the fixture corpus (tests/fixtures/server/corpus.jsonl) is ingested into a data dir under
``--work``, ``deepcite serve`` starts in a subprocess, and the stand-in for a remote LLM
(tests/llm/fake_openai_server.py, on 127.0.0.1 in this process) is switched through its fault modes. Per
mode the routes a user waits on are timed: ``POST /api/unified-search``, the SSE stream until its ``done``
event, and ``POST /api/quick-summary`` of that request. A request still running after ``--cap`` seconds is
given up and counted at the cap. Settings for both versions: ``llm.timeout_s=5``, 4 retries (the default);
this tree also gets ``answer.budget.request_s=--budget`` (target: worst request within budget + 2 s).
Writes ``benchmarks/results/llm_faults/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from results_path import result_path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from llm.fake_openai_server import Action, Drip, Fail, FakeOpenAIServer, Hang, Malformed  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "server" / "corpus.jsonl"
QUESTION = "Does atrial fibrillation raise stroke risk?"
GOOD_ANSWER = "Atrial fibrillation raises the risk of ischaemic stroke [1]."
MODES: dict[str, Action | str | None] = {
    "healthy": None,
    "slow drip (1 byte / 1.5 s)": Drip(GOOD_ANSWER, interval_s=1.5),
    "hang": Hang(900.0),
    "HTTP 500": Fail(500),
    "429 Retry-After 10 s": Fail(429, retry_after="10"),
    "invalid JSON body": Malformed(),
    "schema-violating reply": "Sure! Here is my answer, in prose rather than the JSON you asked for.",
}
INGEST = """
import json, sys
from deepcite.config import Settings
from deepcite.models import Document
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import build_embedder
from deepcite.retrieval.store import open_store
from deepcite.ingest.pipeline import IngestPipeline
settings = Settings()
store = open_store(settings)
docs = [Document.model_validate(json.loads(l)) for l in open(sys.argv[1]) if l.strip()]
IngestPipeline(open_collection("fixture", settings, store=store, embedder=build_embedder(settings))).ingest(docs)
store.close()
"""
SERVE = "import sys; from deepcite.cli.main import app; sys.argv[0] = 'deepcite'; app()"


class Responder:
    """The stand-in's behaviour: the current fault mode for every request."""

    def __init__(self) -> None:
        self.mode: Action | str | None = None

    def __call__(self, body: dict[str, Any]) -> str | Action:
        if self.mode is not None:
            return self.mode
        if body.get("response_format"):
            return "{}"
        return GOOD_ANSWER


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def timed(call: Any, cap: float) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        outcome = call()
    except httpx.TimeoutException:
        return cap, f"gave up after {cap:g} s"
    except httpx.HTTPError as exc:
        outcome = f"{type(exc).__name__}"
    return round(time.perf_counter() - started, 2), outcome


def measure(client: httpx.Client, cap: float) -> dict[str, tuple[float, str]]:
    """Seconds and outcome of each route a user waits on, in the stand-in's current mode."""
    body: dict[str, Any] = {}

    def ask() -> str:
        response = client.post("/api/unified-search", json={"query": QUESTION})
        body.update(response.json() if response.status_code == 200 else {})
        degraded = body.get("degraded")
        return f"{response.status_code} " + (degraded["reason"] if degraded else "not degraded")

    def stream() -> str:
        # the server's keep-alive pings reset a per-read timeout: the cap is checked between lines
        give_up = time.perf_counter() + cap
        events: list[str] = []
        with client.stream("GET", "/api/unified-search/stream", params={"query": QUESTION}) as r:
            for line in r.iter_lines():
                events += [line] if line.startswith("event:") else []
                if time.perf_counter() > give_up:
                    raise httpx.ReadTimeout("the stream ran past the cap")
        return f"{r.status_code} {events[-1] if events else 'no events'}"

    def regenerate() -> str:
        if "request_id" not in body:
            return "skipped: no request id"
        response = client.post("/api/quick-summary", json={"request_id": body["request_id"]})
        return f"{response.status_code}"

    return {
        route: timed(call, cap)
        for route, call in (("unified-search", ask), ("stream", stream), ("quick-summary", regenerate))
    }


def run_version(label: str, src: Path, llm_url: str, responder: Responder, args: argparse.Namespace) -> dict:
    data_dir = Path(args.work) / label
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "DEEPCITE_DATA_DIR": str(data_dir),
        "DEEPCITE_SERVER_DEFAULT_COLLECTION": "fixture",
        "DEEPCITE_LLM_BASE_URL": llm_url,
        "DEEPCITE_LLM_MODEL": "stand-in",
        "DEEPCITE_LLM_TIMEOUT_S": "5",
    }
    if label == "after":
        env["DEEPCITE_ANSWER_BUDGET_REQUEST_S"] = str(args.budget)
        env["DEEPCITE_ANSWER_BUDGET_OFFLINE_RESERVE_S"] = str(args.reserve)
    if not (data_dir / ".ingested").exists():
        subprocess.run([sys.executable, "-c", INGEST, str(CORPUS)], env=env, check=True, cwd=src.parent)
        (data_dir / ".ingested").write_text("ok")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE, "serve", "--port", str(port), "--log-level", "warning"],
        env=env,
        cwd=src.parent,
    )
    base = f"http://127.0.0.1:{port}"
    results: dict[str, Any] = {}
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        with httpx.Client(base_url=base, timeout=args.cap) as client:
            responder.mode = None
            # warm-up, not timed: loads the embedder and opens the collection
            client.post("/api/unified-search", json={"query": QUESTION}, timeout=600)
            for name, mode in MODES.items():
                responder.mode = mode
                timings = measure(client, args.cap)
                worst = max(seconds for seconds, _ in timings.values())
                results[name] = {"worst_s": worst, "routes": timings}
                print(f"{label:6} {name:28} worst {worst:7.2f} s  {timings}", flush=True)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", help="git revision to compare with (checked out in a worktree)")
    parser.add_argument("--budget", type=float, default=10.0, help="answer.budget.request_s for this tree")
    parser.add_argument(
        "--reserve", type=float, default=2.0, help="answer.budget.offline_reserve_s for this tree"
    )
    parser.add_argument("--cap", type=float, default=90.0, help="seconds after which a request is given up")
    parser.add_argument("--work", default="/work/bench/deadline/llm_faults", help="data dirs and worktree")
    args = parser.parse_args()

    versions = [("after", ROOT / "src")]
    if args.before:
        tree = Path(args.work) / "before-tree"
        if not tree.exists():
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(tree), args.before], cwd=ROOT, check=True
            )
        versions.insert(0, ("before", tree / "src"))
    responder = Responder()
    report: dict[str, Any] = {
        "command": " ".join(sys.argv[1:]),
        "budget_s": args.budget,
        "target_s": args.budget + 2.0,
        "cap_s": args.cap,
    }
    with FakeOpenAIServer(responder) as llm:
        for label, src in versions:
            report[label] = run_version(label, src, llm.base_url, responder, args)
    result_path("llm_faults").write_text(json.dumps(report, indent=2) + "\n")
    for name in MODES:
        row = [f"{report[label][name]['worst_s']:.1f}" for label, _ in versions]
        print(f"{name:28} " + " → ".join(row) + " s")


if __name__ == "__main__":
    main()
