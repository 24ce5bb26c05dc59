"""Where a benchmark writes its results: ``benchmarks/results/<benchmark>/<date>_<commit>[_<variant>].json``.

The date is today's (UTC), the commit the short hash of the checked-out HEAD, with ``-dirty`` when ``src/`` or
``benchmarks/`` differ from it, so a file names the code it measured. A run never overwrites an earlier day's
or commit's file; docs/benchmarks/ cites each file by this name."""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "nogit"
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "src", "benchmarks"], cwd=ROOT).returncode
    return head + ("-dirty" if dirty else "")


def result_path(benchmark: str, variant: str = "") -> Path:
    """``benchmarks/results/<benchmark>/<UTC date>_<short commit>[_<variant>].json``, its folder created."""
    date = datetime.datetime.now(datetime.UTC).date().isoformat()
    folder = RESULTS / benchmark
    folder.mkdir(parents=True, exist_ok=True)
    return folder / (f"{date}_{_commit()}" + (f"_{variant}" if variant else "") + ".json")


def latest_result(benchmark: str, variant: str = "") -> Path | None:
    """The newest file of ``benchmark`` (by name: date first), of ``variant`` when given; None if there is none."""
    suffix = f"_{variant}.json" if variant else ".json"
    found = sorted(p for p in (RESULTS / benchmark).glob("*.json") if p.name.endswith(suffix))
    if not variant:
        found = [p for p in found if p.name.count("_") == 1]
    return found[-1] if found else None
