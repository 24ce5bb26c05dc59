"""One data dir, several processes, and damaged index files: cases tried and failures, with real processes.

Every case runs real separate processes: ``deepcite serve`` on 127.0.0.1, the ``deepcite`` CLI, and small
``python -c`` holders that keep a collection open. A case passes when the outcome is a correct result or a
clear error (exit code 2 or 1 with a one-line message, an HTTP 4xx/409/503 with a JSON message) that says what
happened: never a traceback, "Can't init WAL", a 500, or a server path.

    nice -n 10 .venv/bin/python benchmarks/multiproc_faults.py                  # this tree
    nice -n 10 .venv/bin/python benchmarks/multiproc_faults.py --src /path/to/base/src   # another checkout

Writes ``benchmarks/results/multiproc_faults/<date>_<commit>[_<label>].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from results_path import result_path

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "deepcite" / "data" / "sample" / "corpus.jsonl"
BAD_SIGNS = ("Traceback", "WouldBlock", "Can't init WAL", "server bug")

# a BM25-only collection written without loading the embedding model
MAKE_COLLECTION = """
import json, sys
from deepcite.config import Settings
from deepcite.models import Document
from deepcite.ingest.chunker import chunk_document
from deepcite.retrieval.store import open_store
settings = Settings()
store = open_store(settings)
docs = [Document(**{k: v for k, v in json.loads(line).items() if k in ("id", "title", "text")})
        for line in open(sys.argv[2], encoding="utf-8")]
store.create_collection(sys.argv[1], dense_dim=None)
store.upsert(sys.argv[1], [c for d in docs for c in chunk_document(d, settings.chunker)], None)
store.close()
"""
# keeps a collection open (as a CLI ingest would) until killed
HOLD = """
import sys, time
from deepcite.config import Settings
from deepcite.retrieval.store import open_store
store = open_store(Settings.load())
store.count(sys.argv[1])
print("holding", flush=True)
time.sleep(600)
"""
CREATE_RACE = """
import sys, time
from deepcite.errors import DeepciteError
from deepcite.config import Settings
from deepcite.retrieval.store import open_store
store = open_store(Settings.load())
start = float(sys.argv[1])
while time.time() < start:
    time.sleep(0.001)
for i in range(int(sys.argv[2])):
    try:
        store.create_collection(f"race{i}", dense_dim=8)
    except DeepciteError as exc:
        print(f"clear error: {exc}")
store.close()
"""


@dataclass
class Report:
    cases: dict[str, list[dict]] = field(default_factory=dict)

    def add(self, category: str, name: str, ok: bool, detail: str) -> None:
        self.cases.setdefault(category, []).append({"case": name, "ok": ok, "detail": detail[:400]})
        print(f"[{'ok' if ok else 'FAIL'}] {category}/{name}: {detail[:200]}", flush=True)

    def summary(self) -> dict[str, dict[str, int]]:
        return {
            cat: {"tried": len(rows), "failed": sum(not r["ok"] for r in rows)}
            for cat, rows in self.cases.items()
        }


class Env:
    """How to run deepcite processes on one data dir."""

    def __init__(self, data_dir: Path, src: Path | None) -> None:
        self.data_dir = data_dir
        self.env = {
            **os.environ,
            "DEEPCITE_DATA_DIR": str(data_dir),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "DEEPCITE_SEARCH_DEFAULT_MODE": "bm25",
            "COLUMNS": "200",
        }
        if src is not None:
            self.env["PYTHONPATH"] = str(src)

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "deepcite.cli", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def python(self, code: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    @contextmanager
    def holder(self, collection: str) -> Iterator[subprocess.Popen[str]]:
        proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, collection], env=self.env, stdout=subprocess.PIPE, text=True
        )
        try:
            assert proc.stdout is not None
            proc.stdout.readline()
            yield proc
        finally:
            proc.kill()
            proc.wait()

    @contextmanager
    def server(self) -> Iterator[str]:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        proc = subprocess.Popen(
            [sys.executable, "-m", "deepcite.cli", "serve", "--port", str(port), "--log-level", "warning"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 60
            while time.time() < deadline:
                if proc.poll() is not None:
                    raise RuntimeError("deepcite serve exited")
                try:
                    httpx.get(f"{url}/healthz", timeout=1.0)
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            proc.wait()


def clean(text: str, data_dir: Path) -> bool:
    return not any(sign in text for sign in BAD_SIGNS) and str(data_dir) not in text


def cli_case(
    report: Report,
    env: Env,
    category: str,
    name: str,
    args: list[str],
    good: Callable[[subprocess.CompletedProcess[str]], bool],
) -> None:
    done = env.cli(*args)
    out = (done.stdout + done.stderr).strip()
    ok = clean(out, env.data_dir) and good(done)
    report.add(category, name, ok, f"exit {done.returncode}: {out[-300:]}")


def http_case(
    report: Report,
    env: Env,
    category: str,
    name: str,
    response: httpx.Response,
    good: Callable[[httpx.Response], bool],
) -> None:
    ok = response.status_code < 500 or response.status_code == 503
    ok = ok and clean(response.text, env.data_dir) and good(response)
    report.add(category, name, ok, f"{response.status_code}: {response.text[:300]}")


def search_body(collection: str) -> dict:
    return {"query": "anticoagulation trauma", "collection": collection, "mode": "bm25", "k": 3}


def multiprocess(report: Report, env: Env) -> None:
    cat = "multi-process"
    with env.server() as url:
        httpx.post(f"{url}/api/search", json=search_body("demo"), timeout=60)  # the server opens demo
        named = lambda d: d.returncode == 0 or ("pid" in d.stderr and "serve" in d.stderr)  # noqa: E731
        cli_case(
            report,
            env,
            cat,
            "cli search while serve holds it",
            ["search", "anticoagulation", "-c", "demo", "--mode", "bm25", "--json"],
            named,
        )
        cli_case(
            report,
            env,
            cat,
            "cli collections list while serve runs",
            ["collections", "list", "--json"],
            lambda d: d.returncode == 0 and "demo" in d.stdout,
        )
        cli_case(report, env, cat, "cli stats while serve holds it", ["collections", "stats", "demo"], named)
        small = env.data_dir.parent / "one.jsonl"
        small.write_text(
            json.dumps({"id": "x1", "title": "Heparin", "text": "Heparin dosing in trauma."}) + "\n"
        )
        cli_case(
            report, env, cat, "cli ingest while serve holds it", ["ingest", str(small), "-c", "demo"], named
        )
        cli_case(
            report,
            env,
            cat,
            "cli search --server URL",
            ["search", "anticoagulation", "-c", "demo", "--mode", "bm25", "--json", "--server", url],
            lambda d: d.returncode == 0 and '"hits"' in d.stdout,
        )
        with env.holder("other"):
            r = httpx.post(f"{url}/api/search", json=search_body("other"), timeout=60)
            http_case(
                report,
                env,
                cat,
                "server search while a CLI holds it",
                r,
                lambda r: r.status_code in (409, 503) and "pid" in r.text,
            )
            r = httpx.get(f"{url}/api/collections", timeout=60)
            http_case(
                report,
                env,
                cat,
                "server listing while a CLI holds one",
                r,
                lambda r: r.status_code == 200 and "other" in r.text and "demo" in r.text,
            )
        broken = env.data_dir / "edge" / "broken"
        (broken / "deepcite.json").write_text("{not json", encoding="utf-8")
        for segment in broken.glob("shard/segments/*/segment.json"):
            segment.write_text("{not json", encoding="utf-8")
        r = httpx.get(f"{url}/api/collections", timeout=60)
        http_case(
            report,
            env,
            cat,
            "server listing with one unreadable collection",
            r,
            lambda r: r.status_code == 200 and "demo" in r.text and "broken" in r.text,
        )
        cli_case(
            report,
            env,
            cat,
            "cli listing with one unreadable collection",
            ["collections", "list", "--json"],
            lambda d: d.returncode == 0 and "demo" in d.stdout and "broken" in d.stdout,
        )
        long_name = "a" * 300
        r = httpx.post(f"{url}/api/search", json=search_body(long_name), timeout=60)
        http_case(report, env, cat, "server search, 300-byte name", r, lambda r: 400 <= r.status_code < 500)
        cli_case(
            report,
            env,
            cat,
            "cli search, 300-byte name",
            ["search", "x", "-c", long_name, "--mode", "bm25"],
            lambda d: d.returncode == 2,
        )
    for round_ in range(3):
        race = env.python(
            "import subprocess, sys, time\n"
            f"code = {CREATE_RACE!r}\n"
            "start = str(time.time() + 4)\n"
            "procs = [subprocess.Popen([sys.executable, '-c', code, start, '6'], stdout=subprocess.PIPE,"
            " stderr=subprocess.PIPE, text=True) for _ in range(2)]\n"
            "for p in procs:\n"
            "    out, err = p.communicate()\n"
            "    print('EXIT', p.returncode, out, err)\n"
        )
        check = env.python(
            "from deepcite.config import Settings\n"
            "from deepcite.retrieval.store import open_store\n"
            "s = open_store(Settings.load())\n"
            "print([s.count(f'race{i}') for i in range(6)])\n"
        )
        for i in range(6):
            shutil.rmtree(env.data_dir / "edge" / f"race{i}", ignore_errors=True)
        out = race.stdout + race.stderr
        ok = clean(out, env.data_dir) and "EXIT 0" in out and check.returncode == 0
        report.add(
            cat,
            f"two processes create the same 6 collections (round {round_ + 1})",
            ok,
            out[-300:] + check.stdout + check.stderr[-300:],
        )


DAMAGE: dict[str, Callable[[Path], None]] = {}


def damage(name: str) -> Callable[[Callable[[Path], None]], Callable[[Path], None]]:
    def register(fn: Callable[[Path], None]) -> Callable[[Path], None]:
        DAMAGE[name] = fn
        return fn

    return register


def _segment_files(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(f"shard/segments/*/{pattern}"))


@damage("payload page truncated")
def _payload(folder: Path) -> None:
    for p in _segment_files(folder, "payload_storage/page_0.dat"):
        os.truncate(p, 100)


@damage("payload page zeroed")
def _payload_zero(folder: Path) -> None:
    for p in _segment_files(folder, "payload_storage/page_0.dat"):
        p.write_bytes(b"\0" * p.stat().st_size)


@damage("segment.json garbage")
def _segment(folder: Path) -> None:
    for p in _segment_files(folder, "segment.json"):
        p.write_text("{garbage")


@damage("deepcite.json garbage")
def _meta(folder: Path) -> None:
    (folder / "deepcite.json").write_text("{garbage")


@damage("segments folder removed")
def _segments(folder: Path) -> None:
    shutil.rmtree(folder / "shard" / "segments")


@damage("sparse index files truncated")
def _sparse(folder: Path) -> None:
    for p in _segment_files(folder, "vector_storage-bm25/**/*"):
        if p.is_file() and p.stat().st_size > 100:
            os.truncate(p, 50)


def corruption(report: Report, env: Env, pristine: Path) -> None:
    cat = "corruption"
    for kind, hurt in DAMAGE.items():
        target = env.data_dir / "edge" / "demo"
        shutil.rmtree(target)
        shutil.copytree(pristine, target)
        hurt(target)
        damaged = lambda d: d.returncode == 0 or "damaged" in d.stderr  # noqa: E731
        cli_case(
            report,
            env,
            cat,
            f"{kind}: cli search",
            ["search", "anticoagulation", "-c", "demo", "--mode", "bm25"],
            damaged,
        )
        cli_case(
            report,
            env,
            cat,
            f"{kind}: cli check",
            ["collections", "check", "demo"],
            lambda d: d.returncode == 1 and "damaged" in (d.stdout + d.stderr),
        )
        with env.server() as url:
            r = httpx.post(f"{url}/api/search", json=search_body("demo"), timeout=60)
            http_case(
                report,
                env,
                cat,
                f"{kind}: server search",
                r,
                lambda r: r.status_code == 200 or (r.status_code in (409, 503) and "damaged" in r.text),
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", type=Path, default=None, help="the src/ folder of the checkout to run")
    parser.add_argument("--label", default="", help="suffix of the results file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="deepcite-mp-", dir=os.environ.get("DEEPCITE_BENCH_TMP")) as tmp:
        env = Env(Path(tmp) / "data", args.src)
        made = env.cli("ingest", str(SAMPLE), "--collection", "demo", timeout=600)  # dense + BM25
        assert made.returncode == 0, made.stderr
        for name in ("other", "broken"):  # BM25-only
            made = env.python(MAKE_COLLECTION, name, str(SAMPLE))
            assert made.returncode == 0, made.stderr
        report = Report()
        t0 = time.perf_counter()
        multiprocess(report, env)
        pristine = Path(tmp) / "pristine-demo"
        shutil.copytree(env.data_dir / "edge" / "demo", pristine)
        corruption(report, env, pristine)
        result = {
            "summary": report.summary(),
            "seconds": round(time.perf_counter() - t0, 1),
            "cases": report.cases,
        }
    out = result_path("multiproc_faults", args.label)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result["summary"], indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
