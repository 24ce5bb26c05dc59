"""Real separate processes on one data dir: a holder that keeps a collection open, `deepcite serve` on
127.0.0.1, and the `deepcite` CLI (tests/collection/test_multiprocess*.py, test_corruption*.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from deepcite.config import Settings
from deepcite.models import Chunk
from deepcite.retrieval.store import open_store

# keeps a collection open (its shard locked, as during a CLI ingest) until killed
HOLD = """
import sys, time
from deepcite.config import Settings
from deepcite.retrieval.store import open_store
store = open_store(Settings.load())
store.count(sys.argv[1])
print("holding", flush=True)
time.sleep(600)
"""
TRACEBACK_SIGNS = ("Traceback", "WouldBlock", "Can't init WAL")
# a stand-in hook for fault injection: runs ``deepcite ARGS`` with one method wrapped so that its N-th call
# (DEEPCITE_TEST_PAUSE="module:Class.method:before|after:N") creates the file DEEPCITE_TEST_PAUSED and waits
# there, so a test kills the process (kill -9) at exactly that moment
PAUSE = """
import functools, importlib, os, runpy, sys, time
where, when, nth = os.environ["DEEPCITE_TEST_PAUSE"].rsplit(":", 2)
module, attr = where.split(":")
owner_name, method = attr.rsplit(".", 1)
owner = getattr(importlib.import_module(module), owner_name)
original = getattr(owner, method)
calls = [0]

def pause():
    open(os.environ["DEEPCITE_TEST_PAUSED"], "w").close()
    time.sleep(600)

@functools.wraps(original)
def wrapped(*args, **kwargs):
    calls[0] += 1
    if when == "before" and calls[0] == int(nth):
        pause()
    result = original(*args, **kwargs)
    if when == "after" and calls[0] == int(nth):
        pause()
    return result

setattr(owner, method, wrapped)
runpy.run_module("deepcite.cli", run_name="__main__")
"""


def env_for(data_dir: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DEEPCITE_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "COLUMNS": "200",
        **extra,
    }


def bm25_collection(settings: Settings, name: str, texts: list[str]) -> None:
    """A BM25-only collection of one chunk per text, written by this process and closed again."""
    store = open_store(settings)
    try:
        store.create_collection(name, dense_dim=None)
        chunks = [
            Chunk(chunk_id=f"{name}-{i}", doc_id=f"{name}-{i}", title="", text=t) for i, t in enumerate(texts)
        ]
        store.upsert(name, chunks, None)
    finally:
        store.close()


def cli(data_dir: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``deepcite ARGS`` as a separate process on ``data_dir``."""
    return subprocess.run(
        [sys.executable, "-m", "deepcite.cli", *args],
        env=env_for(data_dir),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@contextmanager
def holder(data_dir: Path, collection: str) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``collection`` open until the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, collection], env=env_for(data_dir), stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _pause_env(data_dir: Path, point: str) -> dict[str, str]:
    """The environment of a process that pauses at ``point`` (see PAUSE) and says so in ``<data dir>.paused``."""
    return {"DEEPCITE_TEST_PAUSE": point, "DEEPCITE_TEST_PAUSED": str(data_dir.with_suffix(".paused"))}


def paused_at(data_dir: Path, point: str, *args: str, **env: str) -> subprocess.Popen[bytes]:
    """Start ``deepcite ARGS`` on ``data_dir`` to pause at ``point`` (see PAUSE): :func:`kill_9_when_paused`."""
    return subprocess.Popen(
        [sys.executable, "-c", PAUSE, *args],
        env=env_for(data_dir, **_pause_env(data_dir, point), **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def kill_9_when_paused(proc: subprocess.Popen[bytes], data_dir: Path, timeout: float = 300) -> None:
    """Wait until ``proc`` on ``data_dir`` has paused at its point, then kill it with SIGKILL."""
    marker = data_dir.with_suffix(".paused")
    deadline = time.monotonic() + timeout
    while not marker.exists():
        assert proc.poll() is None, f"the process exited ({proc.returncode}) before its pause point"
        assert time.monotonic() < deadline, "the process did not reach its pause point"
        time.sleep(0.05)
    proc.kill()
    proc.wait()


@contextmanager
def serve(
    data_dir: Path, *, pause: str | None = None, **env: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``deepcite serve`` on a free loopback port, until the block ends (with ``pause``, one that pauses
    there, as :func:`paused_at`)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = ["serve", "--port", str(port), "--log-level", "warning"]
    if pause:
        env = {**env, **_pause_env(data_dir, pause)}
    proc = subprocess.Popen(
        [sys.executable, *(["-c", PAUSE] if pause else ["-m", "deepcite.cli"]), *command],
        env=env_for(data_dir, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            assert proc.poll() is None, "deepcite serve exited"
            try:
                httpx.get(f"{url}/healthz", timeout=1.0)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait()


def clean(text: str, data_dir: Path) -> bool:
    """No traceback, no raw engine error, no server path."""
    return not any(sign in text for sign in TRACEBACK_SIGNS) and str(data_dir) not in text


def segment_files(folder: Path, pattern: str) -> list[Path]:
    """The files matching ``pattern`` in every segment of the collection folder's shard."""
    found = sorted(folder.glob(f"shard/segments/*/{pattern}"))
    assert found, pattern
    return found


def truncate_payload(folder: Path) -> None:
    """Damage a collection: its payload pages cut to 100 bytes."""
    for page in segment_files(folder, "payload_storage/page_0.dat"):
        os.truncate(page, 100)
