"""Read-ahead (``ingest.read_ahead``): files read and chunked one batch ahead in a worker thread write the same
chunks, ids and report as one step after the other; a file that fails mid-run is still reported; an ingest
stopped between batches leaves whole batches only. Real fixture documents, the real MiniLM and store."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from deepcite.config import Settings
from deepcite.errors import IngestError
from deepcite.ingest.pipeline import IngestPipeline, _read_ahead
from deepcite.ingest.readers import SkipReason
from deepcite.ingest.report import FileStage, FileStatus, IngestProgress, IngestReport
from deepcite.retrieval.collection import Collection, open_collection
from deepcite.retrieval.embedders import Embedder

pytestmark = pytest.mark.slow
DOCS = Path(__file__).resolve().parent.parent / "fixtures" / "docs"
# a corrupt PDF between readable files of three formats
FILES = (
    "two-column-page.pdf",
    "directorate.pptx",
    "paper-excerpt.docx",
    "corrupt.pdf",
    "three-column-notice.pdf",
    "detectors-table.pptx",
    "detectors-table.docx",
)
TIMINGS = ("seconds", "read_seconds", "embed_seconds", "index_seconds", "graph_seconds", "docs_per_s")


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("docs")
    for name in FILES:
        shutil.copy(DOCS / name, folder / name)
    return [folder / name for name in FILES]


def collection(
    data_dir: Path, embedder: Embedder | Callable[[], Embedder], *, read_ahead: bool
) -> Collection:
    """Batches of about one file each (``ingest.batch_chars`` small), so there is a next batch to read."""
    settings = Settings(data_dir=data_dir, ingest={"batch_chars": 3_000, "read_ahead": read_ahead})
    return open_collection("docs", settings, embedder=embedder)


def without_timings(report: IngestReport) -> dict[str, Any]:
    data = report.to_dict()
    for key in TIMINGS:
        data.pop(key)
    for file in data["files"]:
        file.pop("seconds")
    return data


def stored(col: Collection) -> list[tuple[str, str, int | None]]:
    return sorted((c.chunk_id, c.text, c.page) for c in col.store.scroll("docs"))


@dataclass
class Run:
    """One whole ingest of the files: what it stored and reported, and which thread loaded the embedder."""

    report: dict[str, Any]
    chunks: list[tuple[str, str, int | None]]
    events: list[IngestProgress]
    batches: list[tuple[int, int]]
    vectors: dict[str, list[float]]
    written: int
    loaded_by: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, paths: list[Path], minilm: Embedder) -> dict[bool, Run]:
    """The files ingested once without and once with read-ahead (the embedder handed in as a loader), shared
    by the tests that only compare or read the two runs."""
    found = {}
    for read_ahead in (False, True):
        loaded_by: list[str] = []

        def load(loaded_by: list[str] = loaded_by) -> Embedder:
            loaded_by.append(threading.current_thread().name)
            return minilm

        col = collection(tmp_path_factory.mktemp(f"read-ahead-{read_ahead}"), load, read_ahead=read_ahead)
        events: list[IngestProgress] = []
        batches: list[tuple[int, int]] = []
        report = IngestPipeline(col).ingest_files(
            paths,
            on_error="skip",
            on_progress=events.append,
            progress=lambda docs, written, batches=batches: batches.append((docs, written)),
        )
        chunks = stored(col)
        vectors = col.store.dense_vectors("docs", [c[0] for c in chunks])
        found[read_ahead] = Run(
            without_timings(report), chunks, events, batches, vectors, report.written, loaded_by
        )
        col.store.close()
    return found


def test_read_ahead_writes_the_same_chunks_ids_and_report(runs: dict[bool, Run]) -> None:
    ahead, plain = runs[True], runs[False]
    assert len(ahead.batches) >= 4  # several write batches, each read while the one before was embedded
    assert ahead.report == plain.report and ahead.chunks == plain.chunks and ahead.batches == plain.batches
    # each file's report as it is done, in the same order (a file's reading and read stages run ahead)
    assert [(e.done, e.file.file, e.file.status) for e in ahead.events if e.stage is FileStage.DONE] == [
        (e.done, e.file.file, e.file.status) for e in plain.events if e.stage is FileStage.DONE
    ]
    assert ahead.vectors == plain.vectors  # the same batches embedded: the same vectors, bit for bit
    status = {f["file"]: (f["status"], f["reason"]) for f in ahead.report["files"]}
    assert status.pop("corrupt.pdf") == (FileStatus.SKIPPED, SkipReason.CORRUPT)  # failed mid-run, reported
    assert set(status.values()) == {(FileStatus.INGESTED, None)} and len(status) == len(FILES) - 1


def test_fail_with_read_ahead_names_the_corrupt_file_and_writes_nothing(
    tmp_path: Path, paths: list[Path], minilm: Embedder
) -> None:
    col = collection(tmp_path, minilm, read_ahead=True)
    with pytest.raises(IngestError, match=r"1 problem, nothing was written \(corrupt.pdf: "):
        IngestPipeline(col).ingest_files(paths, on_error="fail")
    assert not col.store.has_collection("docs") or col.count() == 0


def test_an_ingest_stopped_between_batches_leaves_whole_batches_and_resumes(
    tmp_path: Path, paths: list[Path], minilm: Embedder, runs: dict[bool, Run]
) -> None:
    """Ctrl-C (a KeyboardInterrupt) as the second file is done, while the worker reads the next batch."""
    reference = runs[False].chunks  # the same files ingested whole, one step after the other
    col = collection(tmp_path / "stopped", minilm, read_ahead=True)

    def stop_at_second(event: IngestProgress) -> None:
        if event.done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        IngestPipeline(col).ingest_files(paths, on_error="skip", on_progress=stop_at_second)
    written = stored(col)
    assert 0 < len(written) < len(reference)
    assert set(written) <= set(reference)  # no chunk of a half-written or different batch
    rerun = IngestPipeline(col).ingest_files(paths, on_error="skip")
    assert stored(col) == reference
    assert rerun.unchanged == len(written)  # whole documents were written: none is embedded again


@pytest.mark.parametrize("batches", [1, 3])
def test_read_ahead_makes_at_most_its_batches_ahead_in_order_and_raises_the_workers_error(
    batches: int,
) -> None:
    made: list[int] = []

    def items() -> Iterator[int]:
        for n in range(5):
            made.append(n)
            yield n
        raise ValueError("the sixth batch could not be chunked")

    seen: list[tuple[int, int]] = []
    with pytest.raises(ValueError, match="sixth batch"), _read_ahead(items(), batches) as ahead:
        for item in ahead:
            seen.append((item, len(made)))
    assert [n for n, _ in seen] == [0, 1, 2, 3, 4]
    assert all(made_then <= item + 1 + batches for item, made_then in seen)  # the one in hand and `batches`


@pytest.mark.parametrize("read_ahead", [True, False])
def test_the_model_loads_once_while_the_first_files_are_read(runs: dict[bool, Run], read_ahead: bool) -> None:
    """With read-ahead the embedder is loaded by the loader thread (the ingest's first embedding waits on the
    collection's lock for it, never loads a second one); without, by the ingesting thread at first use."""
    run = runs[read_ahead]
    assert run.written > 0
    assert len(run.loaded_by) == 1
    assert run.loaded_by[0].startswith("deepcite-load-embedder") == read_ahead
