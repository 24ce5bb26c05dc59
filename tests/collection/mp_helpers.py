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


@contextmanager
def serve(data_dir: Path, **env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``deepcite serve`` on a free loopback port, until the block ends."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "deepcite.cli", "serve", "--port", str(port), "--log-level", "warning"],
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
