"""Fault injection with real processes (issue 46): a small file system that fills, ``kill -9`` of an ingest while
its readers run, and a killed server's upload folder. Every case ends readable, with a sentence instead of a
signal or a traceback, and nothing left running or lying around.

The small file systems are tmpfs mounts (root only: skipped with the reason otherwise).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from server.conftest import LiveServer

from deepcite.config import Settings
from deepcite.server.app import create_app
from deepcite.server.routes_upload import UPLOADS_DIR

from .mp_helpers import clean, cli, env_for

pytestmark = pytest.mark.slow

UPLOADS = Path(__file__).parents[1] / "fixtures" / "uploads"
WORDS = "heart stroke warfarin anticoagulation bleeding risk atrial fibrillation elderly trial dose".split()


def _texts(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        body = ". ".join(" ".join(WORDS[(i + j * 5 + k) % len(WORDS)] for k in range(10)) for j in range(40))
        (folder / f"note{i}.txt").write_text(body, encoding="utf-8")
    return folder


@contextmanager
def small_fs(where: Path, mb: int) -> Iterator[Path]:
    """A tmpfs of ``mb`` megabytes mounted at ``where`` until the block ends."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={mb}m", "tmpfs", str(where)], capture_output=True, text=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _said_no_space(run: subprocess.CompletedProcess[str]) -> None:
    assert run.returncode > 0, (run.returncode, run.stderr)  # an exit code, never a signal (SIGBUS: -7)
    assert "not enough space in" in run.stderr and "MB free" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_a_full_disk_is_a_sentence_and_reads_keep_working(tmp_path: Path) -> None:
    notes = _texts(tmp_path / "in", 3)
    with small_fs(
        tmp_path / "tiny", 20
    ) as tiny:  # too small for a new shard's margin: refused before writing
        _said_no_space(cli(tiny / "data", "ingest", str(notes), "--collection", "c"))
        listing = cli(tiny / "data", "collections", "list")
        assert listing.returncode == 0 and clean(listing.stdout + listing.stderr, tiny), listing.stderr
    with small_fs(tmp_path / "small", 120) as small:
        data = small / "data"
        first = cli(data, "ingest", str(notes), "--collection", "c")
        assert first.returncode == 0, first.stderr
        free = shutil.disk_usage(small).free
        (small / "filler").write_bytes(b"\0" * (free - 40 * 1024 * 1024))  # 40 MB left: under the margin
        _said_no_space(cli(data, "ingest", str(_texts(tmp_path / "more", 2)), "--collection", "c"))
        check = cli(data, "collections", "check", "c")  # what was committed reads as before
        assert check.returncode == 0, check.stdout + check.stderr
        found = cli(data, "search", "warfarin bleeding", "--collection", "c", "--mode", "bm25", "--json")
        assert found.returncode == 0 and "note" in found.stdout, found.stderr


def _descendants(pid: int) -> set[int]:
    """Every live process under ``pid`` (children, their children, …), read from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_kill_9_of_an_ingest_leaves_no_reader_or_fork_server(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(3):  # PDFs are read in isolated children forked by the fork server
        shutil.copy(UPLOADS / "pasa-p1-2.pdf", folder / f"paper{i}.pdf")
    data = tmp_path / "data"
    ingest = subprocess.Popen(
        [sys.executable, "-m", "deepcite.cli", "ingest", str(folder), "--collection", "c"],
        env=env_for(data),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    helpers: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and ingest.poll() is None:
        children = _descendants(ingest.pid)
        helpers |= children
        if any(_descendants(c) for c in children):  # a reader forked by the fork server: kill now
            break
        time.sleep(0.05)
    assert ingest.poll() is None, "the ingest ended before its readers were seen"
    ingest.send_signal(signal.SIGKILL)
    ingest.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(p) for p in helpers):
        time.sleep(0.1)
    assert not [p for p in helpers if _alive(p)], "processes of the killed ingest run on"
    listing = cli(data, "collections", "list")  # the data dir reads (a re-run's count: tests/collection)
    assert listing.returncode == 0 and clean(listing.stdout + listing.stderr, data), listing.stderr


def test_a_killed_servers_upload_folder_is_removed_at_start_up(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", server={"warm_start": False})
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    left = settings.data_dir / UPLOADS_DIR / f"{dead.stdout.strip()}-abandoned"
    (left / "0").mkdir(parents=True)
    (left / "0" / "big.txt").write_bytes(b"x" * 1024)
    mine = settings.data_dir / UPLOADS_DIR / f"{os.getpid()}-in-progress"  # a live process's: kept
    mine.mkdir()
    with LiveServer(create_app(settings)):
        pass
    assert not left.exists() and mine.exists()
