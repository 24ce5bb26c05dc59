"""Throughput and memory of ingesting a folder of real documents, with the embedder's own rate as baseline.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/ingest_documents.py --files ../shared/datasets/real_docs/files

Stages, one run:
1. extraction alone: every file read in-process by its reader (pages/s over PDFs and slides; chars/s);
2. the whole ingest of the folder into a fresh collection (chunks/s; reading, embedding, indexing apart);
3. the baseline: the embedder encoding the same chunk texts directly (chunks/s), so ingest/embedding
   says how close ingest comes to the model's own rate;
4. the share of ingest time spent extracting text-layer PDFs (target: at most 25%);
5. peak RSS of a child process ingesting only the 37-page PDF, then only the 820k-character DOCX
   (target: under 1 GB each).
Results go to ``benchmarks/results/ingest_documents/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_path import latest_result, result_path

from deepcite.config import IngestSettings, Settings
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.ingest.readers import read_file
from deepcite.retrieval.collection import open_collection, passage_text

MEMORY_FILES = ("2206.10883v3.pdf", "handbook-872p.docx")
_CHILD = """
import sys
from pathlib import Path
from deepcite.config import Settings
from deepcite.retrieval.collection import open_collection
from deepcite.ingest.pipeline import IngestPipeline
settings = Settings(data_dir=Path(sys.argv[2]))
IngestPipeline(open_collection("mem", settings)).ingest(Path(sys.argv[1]), on_error="fail")
"""


def extraction(files: list[Path]) -> dict[str, object]:
    per_file = {}
    for path in files:
        started = time.perf_counter()
        result = read_file(path, doc_id=path.name, name=path.name, settings=IngestSettings())
        seconds = time.perf_counter() - started
        per_file[path.name] = {
            "kind": result.kind,
            "pages": result.pages,
            "ocr_pages": result.ocr_pages,
            "chars": sum(len(d.document.text) for d in result.documents),
            "seconds": round(seconds, 3),
            "skip": result.skip.message if result.skip else None,
        }
    paged = [f for f in per_file.values() if f["pages"]]
    text_pdfs = [f for f in per_file.values() if f["kind"] == "pdf" and not f["ocr_pages"]]
    total = sum(f["seconds"] for f in per_file.values())
    return {
        "files": per_file,
        "seconds": round(total, 2),
        "pages_per_s": round(sum(f["pages"] for f in paged) / sum(f["seconds"] for f in paged), 1),
        "chars_per_s": round(sum(f["chars"] for f in per_file.values()) / total),
        "text_pdf_seconds": round(sum(f["seconds"] for f in text_pdfs), 2),
    }


def peak_rss_mb(path: Path) -> float:
    """Peak resident memory of a fresh process that ingests only ``path``, by GNU time (``%M``, KiB).

    Not ``wait4``'s ``ru_maxrss``: a child started with vfork inherits this process's high-water mark
    at exec, so it would report the benchmark's own memory."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M", sys.executable, "-c", _CHILD, str(path), tmp],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode:
        raise SystemExit(f"ingesting {path.name} failed: {done.stderr[-500:]}")
    return round(int(done.stderr.strip().splitlines()[-1]) / 1024, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=Path, required=True)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--memory-only", action="store_true", help="Only the peak-RSS stage; keep the rest.")
    args = parser.parse_args()
    if args.memory_only:
        path = result_path("ingest_documents")
        earlier = path if path.is_file() else latest_result("ingest_documents")
        if earlier is None:
            raise SystemExit("--memory-only adds to an earlier result; run the other stages first")
        out = json.loads(earlier.read_text())
        out["peak_rss_mb"] = {name: peak_rss_mb(args.files / name) for name in MEMORY_FILES}
        path.write_text(json.dumps(out, indent=2) + "\n")
        print(json.dumps(out["peak_rss_mb"]))
        return
    files = sorted(p for p in args.files.iterdir() if p.is_file())
    out: dict[str, object] = {"extraction": extraction(files)}
    tmp = Path(tempfile.mkdtemp(prefix="deepcite-bench-"))
    try:
        settings = Settings(data_dir=tmp)
        col = open_collection("bench", settings)
        report = IngestPipeline(col).ingest(args.files, on_error="skip")
        out["ingest"] = {
            "files": len(report.files),
            "skipped": [f.file for f in report.skipped_files],
            "chunks": report.chunks,
            "seconds": round(report.seconds, 2),
            "read_seconds": round(report.read_seconds, 2),
            "embed_seconds": round(report.embed_seconds, 2),
            "index_seconds": round(report.index_seconds, 2),
            "chunks_per_s": round(report.chunks / report.seconds, 2),
        }
        texts = []
        for path in files:
            result = read_file(path, doc_id=path.name, name=path.name, settings=IngestSettings())
            for read in result.documents:
                texts += [
                    passage_text(c) for c in chunk_document(read.document, settings.chunker, read.blocks)
                ]
        started = time.perf_counter()
        col.embedder.encode(texts, kind="passage")
        embed_rate = len(texts) / (time.perf_counter() - started)
        out["baseline_embedding"] = {"chunks": len(texts), "chunks_per_s": round(embed_rate, 2)}
        out["ingest_over_embedding"] = round(out["ingest"]["chunks_per_s"] / embed_rate, 3)  # type: ignore[index]
        out["text_pdf_extraction_share_of_ingest"] = round(
            out["extraction"]["text_pdf_seconds"] / report.seconds,
            3,  # type: ignore[index]
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not args.skip_memory:
        out["peak_rss_mb"] = {name: peak_rss_mb(args.files / name) for name in MEMORY_FILES}
    result_path("ingest_documents").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "extraction"}, indent=2))
    print(json.dumps({k: v for k, v in out["extraction"].items() if k != "files"}))  # type: ignore[union-attr]


if __name__ == "__main__":
    main()
