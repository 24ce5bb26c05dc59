"""Ingest on Ray: a local Ray instance (2 CPUs, two actors) gives the collection a single-process ingest of
the same input gives, point for point; a worker killed mid-ingest loses and doubles nothing.

The inputs are real: documents from ``tests/fixtures/docs`` (PDF, DOCX, PPTX, HTML, JSON records, a corrupt
and an encrypted PDF that are skipped with their reasons) and the sample corpus of 50 PubMed-style
abstracts. Batches are small (8 records, 20k characters) so an ingest has several batches in flight.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deepcite.config import Settings
from deepcite.errors import ConfigError, EmbedderError, IngestError
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.ingest.report import FileStage, IngestProgress, IngestReport
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder, resolve_precision

ray = pytest.importorskip("ray", reason="the Ray tests need the ray extra (make test installs it)")
pytestmark = (
    pytest.mark.slow
)  # each test starts actors that load the model (a few seconds on a quiet machine)

TESTS = Path(__file__).resolve().parent.parent
DOCS = TESTS / "fixtures" / "docs"
SAMPLE_CORPUS = TESTS.parent / "src" / "deepcite" / "data" / "sample" / "corpus.jsonl"
FILES = [
    "corrupt.pdf",
    "directorate.pptx",
    "encrypted.pdf",
    "flag_day.html",
    "paper-excerpt.docx",
    "records-jsonl.json",
    "two-column-page.pdf",
]
QUERIES = ["stroke risk in atrial fibrillation", "flag day celebration", "directorate budget", "statins"]


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """One local Ray instance for the module; the ingests join it (``ray="local"`` keeps a connection)."""
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    yield
    ray.shutdown()


def small_batches(data_dir: Path, **ray: Any) -> Settings:
    return Settings(
        data_dir=data_dir,
        embedder={"ingest_batch_docs": 8},
        ingest={"batch_chars": 20_000},
        ray={"workers": 2, **ray},
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("docs")
    for name in FILES:
        shutil.copy(DOCS / name, target / name)
    return target


@dataclass
class Ingested:
    collection: Collection
    report: IngestReport
    progress: list[tuple[int, int]] = field(default_factory=list)
    files: list[tuple[int, int, str, str]] = field(default_factory=list)


def ingest(
    settings: Settings, source: Path, ray_address: str | None, embedder: Embedder | None = None
) -> Ingested:
    col = open_collection("c", settings, embedder=embedder)
    run = Ingested(col, IngestReport(collection="c"))

    def on_file(event: IngestProgress) -> None:  # each file as it is done (not its reading and read stages)
        if event.stage is FileStage.DONE and event.file is not None:
            run.files.append((event.done, event.total, event.file.file, event.file.status.value))

    run.report = IngestPipeline(col).ingest(
        source,
        on_error="skip",
        progress=lambda d, w: run.progress.append((d, w)),
        on_progress=on_file,
        ray=ray_address,
    )
    return run


@pytest.fixture(scope="module")
def single_files(tmp_path_factory: pytest.TempPathFactory, folder: Path, minilm: Embedder) -> Ingested:
    return ingest(small_batches(tmp_path_factory.mktemp("single-files")), folder, None, minilm)


@pytest.fixture(scope="module")
def single_corpus(tmp_path_factory: pytest.TempPathFactory, minilm: Embedder) -> Ingested:
    return ingest(small_batches(tmp_path_factory.mktemp("single-corpus")), SAMPLE_CORPUS, None, minilm)


def assert_same_collection(got: Collection, want: Collection) -> None:
    """Same chunk ids and payloads, vectors equal within float noise, same BM25 and dense results. In bf16
    (``auto`` on this CPU) an actor's torch, on one thread, splits a small batch's products otherwise than
    this process's two threads, so the vectors agree to bf16's rounding; in fp32 to float noise."""
    got_chunks = {c.chunk_id: c for c in got.store.scroll(got.name)}
    want_chunks = {c.chunk_id: c for c in want.store.scroll(want.name)}
    assert got.count() == want.count() == len(want_chunks)
    assert sorted(got_chunks) == sorted(want_chunks)
    assert got_chunks == want_chunks  # every payload field
    ids = sorted(want_chunks)
    got_vectors = got.store.dense_vectors(got.name, ids)
    want_vectors = want.store.dense_vectors(want.name, ids)
    got_rows, want_rows = np.array([got_vectors[i] for i in ids]), np.array([want_vectors[i] for i in ids])
    bf16 = resolve_precision(Settings().embedder.precision) == "bf16"
    np.testing.assert_allclose(got_rows, want_rows, atol=5e-3 if bf16 else 1e-5)
    assert np.min(np.sum(got_rows * want_rows, axis=1)) > (0.9999 if bf16 else 0.999999)
    for query in QUERIES:
        for mode in ("bm25", "dense"):
            got_hits = got.search(query, mode=mode, k=10)
            want_hits = want.search(query, mode=mode, k=10)
            assert [h.chunk.chunk_id for h in got_hits] == [h.chunk.chunk_id for h in want_hits], (
                query,
                mode,
            )
            tolerance = {"atol": 1e-3} if bf16 and mode == "dense" else {"rtol": 1e-5}
            np.testing.assert_allclose([h.score for h in got_hits], [h.score for h in want_hits], **tolerance)


def report_facts(report: IngestReport) -> dict[str, Any]:
    """The report without its timings."""
    data = report.model_dump(
        exclude={"seconds", "read_seconds", "embed_seconds", "index_seconds", "graph_seconds"}
    )
    for file in data["files"]:
        file.pop("seconds")
    return data


def test_a_folder_on_ray_is_the_single_process_collection(
    tmp_path: Path, folder: Path, single_files: Ingested
) -> None:
    run = ingest(small_batches(tmp_path), folder, "local")
    assert_same_collection(run.collection, single_files.collection)
    assert report_facts(run.report) == report_facts(single_files.report)
    assert {f.file: f.reason for f in run.report.skipped_files} == {
        "corrupt.pdf": "corrupt",
        "encrypted.pdf": "encrypted",
    }
    assert run.files == single_files.files  # each file reported as it is done, in the same order
    assert run.progress == single_files.progress
    assert run.collection.originals.get("two-column-page.pdf") is not None


def test_a_corpus_on_ray_is_the_single_process_collection(tmp_path: Path, single_corpus: Ingested) -> None:
    run = ingest(small_batches(tmp_path), SAMPLE_CORPUS, "local")
    assert_same_collection(run.collection, single_corpus.collection)
    assert report_facts(run.report) == report_facts(single_corpus.report)
    assert run.progress == single_corpus.progress  # one call per batch of 8 records
    assert len(run.progress) == 7


def _parent(pid: int) -> int:
    """The parent process of ``pid`` (0 when it is gone)."""
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _ours(pid: int) -> bool:
    """Whether ``pid`` descends from this test process: the local Ray cluster this process started runs its
    workers under its own raylet, and another test run on the same machine has workers of its own."""
    while pid > 1:
        pid = _parent(pid)
        if pid == os.getpid():
            return True
    return False


def newest_ingest_worker_pid() -> int:
    """The process of this run's ingest actor started last (this test's pool), preferring one at work: Ray
    titles an actor's process ``ray::IngestWorker`` and, while it runs a call, ``ray::IngestWorker.<method>``;
    between two calls the worker is idle, so an idle one is taken rather than none (a race on a loaded
    machine). Workers of another test run on the same machine are never taken."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes() if proc.name.isdigit() else b""
            if cmdline.startswith(b"ray::IngestWorker") and _ours(int(proc.name)):
                started = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[19])
                found.append((cmdline.startswith(b"ray::IngestWorker."), started, int(proc.name)))
        except (OSError, ValueError, IndexError):
            continue
    assert found, "no Ray ingest worker process is running"
    return max(found)[2]


def killing_a_worker_at_first_progress(col: Collection, **options: Any) -> IngestReport:
    killed: list[int] = []

    def progress(docs: int, written: int) -> None:
        if not killed:
            killed.append(newest_ingest_worker_pid())
            os.kill(killed[0], signal.SIGKILL)  # as the kernel's OOM killer would

    report = IngestPipeline(col).ingest(SAMPLE_CORPUS, progress=progress, ray="local", **options)
    assert killed
    return report


def test_a_worker_lost_for_good_stops_the_ingest_and_a_rerun_finishes_it(
    tmp_path: Path, single_corpus: Ingested
) -> None:
    col = open_collection("c", small_batches(tmp_path, workers=1, max_restarts=0, max_task_retries=0))
    with pytest.raises(IngestError, match="Run the same ingest again"):
        killing_a_worker_at_first_progress(col)
    interrupted = col.count()
    assert 0 < interrupted < single_corpus.collection.count()

    rerun = IngestPipeline(col).ingest(SAMPLE_CORPUS, ray="local")
    assert_same_collection(col, single_corpus.collection)  # nothing lost, nothing doubled
    assert rerun.unchanged == interrupted  # what was written is not embedded again
    assert rerun.written == single_corpus.report.written - interrupted


def test_a_killed_worker_is_restarted_and_the_ingest_completes(
    tmp_path: Path, single_corpus: Ingested
) -> None:
    col = open_collection("c", small_batches(tmp_path, workers=1))  # ray.max_restarts = max_task_retries = 1
    report = killing_a_worker_at_first_progress(col)
    assert report.written == single_corpus.report.written
    assert_same_collection(col, single_corpus.collection)


def test_more_worker_cpus_than_the_cluster_has_is_a_config_error(tmp_path: Path) -> None:
    col = open_collection("c", small_batches(tmp_path, workers=2, cpus_per_worker=2))
    with pytest.raises(ConfigError, match="need 4 CPUs, but the Ray cluster has 2"):
        IngestPipeline(col).ingest(SAMPLE_CORPUS, ray="local")


def test_a_model_the_workers_cannot_load_is_named(tmp_path: Path) -> None:
    settings = small_batches(tmp_path / "data", workers=1, max_restarts=0).model_copy(deep=True)
    settings.embedder.model = str(tmp_path / "no-such-model")
    # the driver opens the collection's embedder first (the Engine-owned pipeline), so it names the model
    # before any worker starts; a driver that could load it leaves the workers to say so
    with pytest.raises(
        (IngestError, EmbedderError), match="cannot load sentence-transformers model .*no-such-model"
    ):
        IngestPipeline(open_collection("c", settings)).ingest(SAMPLE_CORPUS, ray="local")


def test_cli_ingest_on_ray(tmp_path: Path, single_corpus: Ingested) -> None:
    from typer.testing import CliRunner

    from deepcite.cli.main import app

    env = {
        "DEEPCITE_DATA_DIR": str(tmp_path),
        "DEEPCITE_EMBEDDER_INGEST_BATCH_DOCS": "8",
        "DEEPCITE_RAY_WORKERS": "1",  # the CLI's --ray path; two actors' batches in flight: the tests above
    }
    out = CliRunner().invoke(
        app, ["ingest", str(SAMPLE_CORPUS), "-c", "c", "--ray", "local", "--json"], env=env
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["written"] == single_corpus.report.written
    assert_same_collection(open_collection("c", small_batches(tmp_path)), single_corpus.collection)
