"""Fault/fuzz run against a real server: cases tried and failures per category (target: 0 failures).

    .venv/bin/python benchmarks/hardening.py --examples 150 --seed 13
    .venv/bin/python benchmarks/hardening.py --examples 150 --seed 13 --load-requests 256   # + 32-client load

    # the same run against an older checkout (its src on PYTHONPATH), for a before/after from one session:
    git worktree add --detach /tmp/base <commit>
    PYTHONPATH=/tmp/base/src .venv/bin/python benchmarks/hardening.py --examples 150 --seed 13 --tag before

One process: the fixture corpus of the server tests (and their practitioner directory) ingested into
``--data-dir``, the real app under uvicorn on 127.0.0.1 (auth off), and the MCP server in-process over the
same Engine. Categories:

- ``issue-13``: the inputs the issue found answering 500 (filter values above 2^63, field names ``"a b"``,
  ``"."``, ``"metadata."``, lone surrogates in filters, query and practitioner location, 5,000-deep filters
  on the stream route, 300-character and NUL paths under ``/static/``, a 300-character collection name),
  each on every route that takes it;
- one category per HTTP route family (``tests/server/fuzz_cases.py``: the same strategies the fuzz tests
  run, here with ``--examples`` random examples each, no shrinking);
- ``mcp-<tool>``: every MCP tool with fuzzed arguments.

A case fails when the answer is a 5xx, holds a stack trace or a server path, reports an internal error, or
does not come within ``--timeout-s`` (a hang). With ``--load-requests``, ``--clients`` clients then send
that many unified searches (the fixture questions, cycled): p50/p95 and the process's RSS before/after.
Results go to ``benchmarks/results/hardening/<date>_<commit>[_<tag>].json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "server")]

from api_common import LiveServer, summary, write_result  # noqa: E402
from api_load import run_clients  # noqa: E402
from fuzz_cases import CATEGORIES, LEAK_MARKERS, Case, Deep, problems, sendable, tool_arguments  # noqa: E402

import deepcite  # noqa: E402
from deepcite.config import Settings  # noqa: E402
from deepcite.ingest.pipeline import IngestPipeline  # noqa: E402
from deepcite.models import Document  # noqa: E402
from deepcite.retrieval.collection import open_collection  # noqa: E402

CORPUS = TESTS / "fixtures" / "server" / "corpus.jsonl"
PRACTITIONERS = TESTS / "fixtures" / "server" / "practitioners.jsonl"
COLLECTION = "fixture"
SURROGATE = "\ud800"
QUESTIONS = [
    "Does atrial fibrillation increase the risk of stroke, and how is it treated?",
    "Do statins cause muscle pain?",
    "What is the CHA2DS2-VASc score used for?",
    "How does anticoagulation change stroke risk?",
]


def issue_cases() -> list[Case]:
    """The inputs issue 13 found answering 500, on every route that takes them."""
    bad_filters: list[Any] = [
        {"equals": {"year": 2**63 + 1}},
        {"equals": {"a b": "x"}},
        {"equals": {".": "x"}},
        {"equals": {"metadata.": "x"}},
        {"equals": {"section": SURROGATE}},
        {"sources": [SURROGATE]},
    ]
    cases: list[Case] = []
    for flt in bad_filters:
        cases.append(Case("POST", "/api/search", {"query": "stroke", "filters": flt}))
        cases.append(Case("POST", "/api/unified-search", {"query": "stroke", "filters": flt}))
        cases.append(
            Case(
                "POST",
                "/api/unified-search",
                {"query": "stroke", "filters": flt, "stream": True},
                stream=True,
            )
        )
        cases.append(
            Case(
                "GET",
                "/api/unified-search/stream",
                params={"query": "stroke", "filters": json.dumps(flt)},
                stream=True,
            )
        )
    cases.append(Case("POST", "/api/search", {"query": f"stroke {SURROGATE}"}))
    cases.append(Case("POST", "/api/unified-search", {"query": f"stroke {SURROGATE}"}))
    cases.append(
        Case("POST", "/api/practitioners/search", {"userQuery": "knee", "location": f"Portland{SURROGATE}"})
    )
    cases.append(
        Case(
            "GET",
            "/api/unified-search/stream",
            params={"query": "a", "filters": Deep(5000).text()},
            stream=True,
        )
    )
    cases.append(Case("POST", "/api/search", {"query": "stroke", "collection": "x" * 300}))
    cases += [Case("GET", "/static/" + "x" * 300), Case("GET", "/static/common.js%00")]
    return cases


def run_category(
    name: str, strategy: st.SearchStrategy[Any], check: Any, examples: int, seed_value: int
) -> dict[str, Any]:
    """Run ``examples`` random cases of a strategy through ``check`` (which returns the problems of one)."""
    tried, failures = 0, []

    @seed(seed_value)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def probe(case: Any) -> None:
        nonlocal tried
        found = check(case)
        if found is None:  # not sendable: its own text holds a marker
            return
        tried += 1
        if found:
            failures.append({"case": repr(case)[:300], "problems": found})

    started = time.perf_counter()
    probe()
    result = {"tried": tried, "failures": len(failures), "samples": failures[:3]}
    print(
        f"  {name:22s} tried {tried:4d}  failures {len(failures):3d}  ({time.perf_counter() - started:.1f} s)",
        flush=True,
    )
    return result


def rss_mb() -> float:
    """This process's resident memory (MB), from /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def prepare(data_dir: Path) -> Settings:
    """Settings over ``data_dir``, holding the fixture collection and practitioner directory (made once)."""
    settings = Settings(data_dir=data_dir, server={"default_collection": COLLECTION})
    if not (data_dir / ".hardening-ready").exists():
        docs = [
            Document.model_validate(json.loads(line))
            for line in CORPUS.read_text().splitlines()
            if line.strip()
        ]
        collection = open_collection(COLLECTION, settings)
        IngestPipeline(collection).ingest(docs)
        try:
            from deepcite.practitioners.directory import Directory
            from deepcite.practitioners.finder import PractitionerFinder

            finder = PractitionerFinder(
                settings,
                directory=Directory.open(settings),
                store=collection.store,
                embedder=collection.embedder,
            )
            finder.import_file(PRACTITIONERS, "jsonl")
            finder.directory.close()
        finally:
            collection.store.close()
        (data_dir / ".hardening-ready").touch()
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-dir", type=Path, default=Path(__file__).resolve().parents[1] / ".data" / "hardening"
    )
    parser.add_argument("--examples", type=int, default=150, help="random cases per category")
    parser.add_argument("--mcp-examples", type=int, default=60, help="random calls per MCP tool")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--timeout-s", type=float, default=60.0, help="a case slower than this is a hang")
    parser.add_argument(
        "--load-requests", type=int, default=0, help="unified searches of the load run (0: none)"
    )
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--tag", default="", help="suffix of the result file, e.g. 'before'")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # the server logs every 500 with its trace: counted here instead

    from mcp import Client

    from deepcite.engine import Engine
    from deepcite.mcp_server.server import build_server

    settings = prepare(args.data_dir)
    col = open_collection(COLLECTION, settings)
    engine = Engine(
        settings, store=col.store, embedder=col.embedder
    )  # the MCP tools' (the app builds its own)
    results: dict[str, Any] = {}
    load: dict[str, Any] = {}
    print(f"deepcite from {Path(deepcite.__file__).parents[1]}", flush=True)
    with (
        LiveServer(settings, col) as live,
        httpx.Client(base_url=live.base_url, timeout=args.timeout_s) as http,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(build_server(engine))) as client,
    ):

        def check_http(case: Case) -> list[str] | None:
            if not sendable(case):
                return None
            try:
                return problems(case.send(http))
            except httpx.InvalidURL:  # the client cannot send it (e.g. a raw newline in a path)
                return None
            except httpx.TimeoutException:
                return [f"no answer within {args.timeout_s} s"]
            except httpx.HTTPError as exc:
                return [f"transport: {type(exc).__name__}"]

        cases = issue_cases()
        results["issue-13"] = run_category(
            "issue-13", st.sampled_from(cases), check_http, len(cases) * 3, args.seed
        )
        for name, (strategy, _) in CATEGORIES.items():
            results[name] = run_category(name, strategy(), check_http, args.examples, args.seed)

        for tool in ("search", "find_practitioners", "research", "ask", "list_collections"):

            def check_tool(arguments: dict[str, Any], tool: str = tool) -> list[str] | None:
                sent = json.dumps(arguments)
                if any(m in sent for m in LEAK_MARKERS):
                    return None

                async def call() -> Any:
                    with anyio.fail_after(args.timeout_s):
                        return await client.call_tool(tool, arguments)

                try:
                    result = portal.call(call)
                except TimeoutError:
                    return [f"no answer within {args.timeout_s} s"]
                except UnicodeEncodeError:  # the in-process client cannot serialise a lone surrogate in a key
                    return None
                text = "\n".join(getattr(p, "text", "") for p in result.content) + json.dumps(
                    result.structured_content or {}
                )
                found = [f"holds {m!r}" for m in LEAK_MARKERS if m in text]
                if "internal error" in text or (
                    result.is_error and text.rstrip("{}").endswith(f"tool {tool}")
                ):
                    found.append(f"no reason: {text[:120]}")
                return found

            results[f"mcp-{tool}"] = run_category(
                f"mcp-{tool}", tool_arguments(tool, COLLECTION), check_tool, args.mcp_examples, args.seed
            )

        if args.load_requests:
            rss_before = rss_mb()
            texts_ = [QUESTIONS[i % len(QUESTIONS)] for i in range(args.load_requests)]
            latencies, errors, seconds = asyncio.run(run_clients(live.base_url, texts_, args.clients, None))
            load = {
                "clients": args.clients,
                "requests": args.load_requests,
                "errors": len(errors),
                "error_samples": errors[:3],
                "seconds": round(seconds, 1),
                "latency": summary(latencies),
                "rss_mb_before": rss_before,
                "rss_mb_after": rss_mb(),
            }
            print(f"  load: {load}", flush=True)
    engine.close()
    col.store.close()

    total = {
        "tried": sum(r["tried"] for r in results.values()),
        "failures": sum(r["failures"] for r in results.values()),
    }
    result = {
        "benchmark": "hardening",
        "command": " ".join(["python benchmarks/hardening.py", *sys.argv[1:]]),
        "deepcite": str(Path(deepcite.__file__).parents[1]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "examples_per_category": args.examples,
        "categories": results,
        "total": total,
        "load": load or None,
    }
    path = write_result("hardening", result, args.tag)
    print(f"total: tried {total['tried']}, failures {total['failures']}; wrote {path}")


if __name__ == "__main__":
    main()
