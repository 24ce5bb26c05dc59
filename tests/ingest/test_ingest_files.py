"""Folders of real documents through IngestPipeline.ingest: every file accounted for, fail and skip, re-ingest,
remove, originals kept; the real MiniLM embedder and the real on-disk store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepcite.config import Settings
from deepcite.errors import IngestError
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.ingest.readers import SkipReason
from deepcite.ingest.report import FileStage, FileStatus, IngestProgress
from deepcite.models import Filters
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder

pytestmark = pytest.mark.slow
DOCS = Path(__file__).resolve().parent.parent / "fixtures" / "docs"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A mixed folder: three readable documents, an encrypted PDF and an unsupported file."""
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    shutil.copy(DOCS / "two-column-page.pdf", root / "dpr-page.pdf")
    shutil.copy(DOCS / "directorate.pptx", root / "sub" / "directorate.pptx")
    shutil.copy(DOCS / "records-jsonl.json", root / "records.json")
    shutil.copy(DOCS / "encrypted.pdf", root / "locked.pdf")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (root / ".hidden.txt").write_text("not ingested: hidden")
    return root


def test_fail_writes_nothing_and_names_every_failed_file(
    folder: Path, settings: Settings, minilm: Embedder
) -> None:
    col = open_collection("docs", settings, embedder=minilm)
    with pytest.raises(
        IngestError, match=r"2 problems, nothing was written.*locked.pdf: the PDF is encrypted"
    ):
        IngestPipeline(col).ingest(folder, on_error="fail")
    assert not col.store.has_collection("docs") or col.count() == 0


def test_skip_accounts_for_every_file_and_keeps_pages(
    folder: Path, settings: Settings, minilm: Embedder
) -> None:
    col = open_collection("docs", settings, embedder=minilm)
    events: list[IngestProgress] = []
    report = IngestPipeline(col).ingest_files(
        sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")),
        names=None,
        acl=["team"],
        on_error="skip",
        on_progress=events.append,
    )
    status = {f.file: (f.status, f.reason) for f in report.files}
    assert status == {
        "dpr-page.pdf": (FileStatus.INGESTED, None),
        "directorate.pptx": (FileStatus.INGESTED, None),
        "records.json": (FileStatus.INGESTED, None),
        "locked.pdf": (FileStatus.SKIPPED, SkipReason.ENCRYPTED),
        "photo.png": (FileStatus.SKIPPED, SkipReason.UNSUPPORTED),
    }
    done = [e for e in events if e.stage is FileStage.DONE]
    assert [e.done for e in done] == [1, 2, 3, 4, 5] and events[-1].total == 5
    for name in status:  # each file is told as it is read, then read (or skipped), then done
        assert [e.stage for e in events if e.name == name] == list(FileStage), name
    read = {e.name: e for e in events if e.stage is FileStage.READ}
    assert read["photo.png"].file and read["photo.png"].file.status is FileStatus.SKIPPED
    assert read["dpr-page.pdf"].passages == next(e.file.chunks for e in done if e.name == "dpr-page.pdf")
    slides = list(col.store.scroll("docs", Filters(doc_ids=["directorate.pptx"])))
    assert {c.page for c in slides} == {1, 2, 3} and all(c.acl == ["team"] for c in slides)
    pdf_chunks = list(col.store.scroll("docs", Filters(doc_ids=["dpr-page.pdf"])))
    assert pdf_chunks and all(c.page == 1 and c.file == "dpr-page.pdf" for c in pdf_chunks)
    assert "3.1 Overview" in {c.section for c in pdf_chunks}
    original = col.originals.path_for("dpr-page.pdf")
    assert original is not None and original.read_bytes() == (folder / "dpr-page.pdf").read_bytes()
    assert col.originals.media_type("directorate.pptx").endswith("presentationml.presentation")
    assert col.originals.path_for("records.json") is None  # records, not one document: no original


def test_reingest_is_idempotent_changed_file_replaced_and_remove_deletes(
    folder: Path, settings: Settings, minilm: Embedder
) -> None:
    for bad in ("locked.pdf", "photo.png"):
        (folder / bad).unlink()
    col = open_collection("docs", settings, embedder=minilm)
    first = IngestPipeline(col).ingest(folder, on_error="fail")
    ids = {c.chunk_id for c in col.store.scroll("docs")}
    again = IngestPipeline(col).ingest(folder, on_error="fail")
    assert again.written == 0 and {f.status for f in again.files} == {FileStatus.UNCHANGED}
    assert {c.chunk_id for c in col.store.scroll("docs")} == ids and first.written == len(ids)
    shutil.copy(DOCS / "paper-excerpt.docx", folder / "dpr-page.pdf")  # same name, new content
    changed = IngestPipeline(col).ingest(folder, on_error="fail")
    assert {f.file: f.status for f in changed.files}["dpr-page.pdf"] is FileStatus.INGESTED
    texts = " ".join(c.text for c in col.store.scroll("docs", Filters(doc_ids=["dpr-page.pdf"])))
    assert "Molecular" in texts and "Dense Passage" not in texts  # replaced whole
    assert col.delete_document("sub/directorate.pptx") > 0
    assert col.count(Filters(doc_ids=["sub/directorate.pptx"])) == 0
    assert col.originals.path_for("sub/directorate.pptx") is None


def test_cli_ingest_json_lists_every_file(folder: Path, settings: Settings) -> None:
    from deepcite.cli.main import app

    env = {"DEEPCITE_DATA_DIR": str(settings.data_dir)}
    out = CliRunner().invoke(
        app, ["ingest", str(folder), "--collection", "cli", "--on-error", "skip", "--json"], env=env
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert sorted(f["file"] for f in report["files"]) == [
        "dpr-page.pdf",
        "locked.pdf",
        "photo.png",
        "records.json",
        "sub/directorate.pptx",
    ]
    skipped = {f["file"]: f["reason"] for f in report["files"] if f["status"] == "skipped"}
    assert skipped == {"locked.pdf": "encrypted", "photo.png": "unsupported"}
    removed = CliRunner().invoke(
        app, ["remove", "sub/directorate.pptx", "--collection", "cli", "--json"], env=env
    )
    assert removed.exit_code == 0, removed.output
    assert json.loads(removed.output)["chunks_removed"] > 0
    missing = CliRunner().invoke(app, ["remove", "nothing.pdf", "--collection", "cli"], env=env)
    assert missing.exit_code != 0 and "no document 'nothing.pdf'" in missing.output


@pytest.mark.parametrize("isolate", [True, False])
def test_a_file_that_cannot_be_chunked_is_skipped_with_its_reason_and_the_rest_ingested(
    tmp_path: Path, settings: Settings, minilm: Embedder, isolate: bool
) -> None:
    """An error inside chunking (here a plug-in reader's block of an unknown kind) skips that one file under
    on_error="skip", the error in its message, instead of ending the whole ingest."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.txt").write_text("Harbour Day is held on June 3. It marks the opening of the harbour.")
    (folder / "bad.md").write_text("# A note\n\nText a plug-in reader reads into a block of no known kind.")
    readers = {"markdown": "ingest.bad_blocks:UnknownKind"}
    custom = settings.model_copy(
        update={"ingest": settings.ingest.model_copy(update={"readers": readers, "isolate": isolate})}
    )
    col = open_collection("docs", custom, embedder=minilm)
    report = IngestPipeline(col).ingest_files(sorted(folder.iterdir()), on_error="skip")
    status = {f.file: (f.status, f.reason) for f in report.files}
    assert status == {
        "bad.md": (FileStatus.SKIPPED, SkipReason.UNCHUNKABLE),
        "good.txt": (FileStatus.INGESTED, None),
    }
    (bad,) = [f for f in report.files if f.file == "bad.md"]
    assert "could not be cut into chunks" in (bad.message or "") and "sidebar" in (bad.message or "")
    assert col.count() == 1
