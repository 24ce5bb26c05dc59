"""PDF table finders compared on the real_docs PDFs: tables found, rows that hold a check question's answer, time.

    # the candidates other than deepcite in a scratch venv (pip install pdfplumber camelot-py pymupdf)
    /tmp/tbl-venv/bin/python benchmarks/pdf_tables.py --files ../shared/datasets/real_docs/files \
        --questions eval/real_docs_questions.jsonl --candidates pdfplumber,pdfplumber-text,camelot-lattice,camelot-stream,pymupdf
    PYTHONPATH=src .venv/bin/python benchmarks/pdf_tables.py --files ../shared/datasets/real_docs/files \
        --questions eval/real_docs_questions.jsonl --candidates deepcite

For each candidate and each text-layer PDF: the pages where it finds a table, against the pages whose text
has a table caption ("Table 3:" at a line start, a proxy for "this page has a table"); the tables it finds on
pages without a caption (a proxy for false tables: prose or figures read as a grid); the check set's
``table`` questions (a row label and its value) whose phrases all sit in **one row** it extracted on the
question's page; and the seconds it took. Results are merged into ``benchmarks/results/pdf_tables/<date>_<commit>.json``
(the file of the same day and commit).
The check set is read with plain ``json`` so that the scratch venv needs no deepcite.
"""

from __future__ import annotations

import argparse
import json
import re
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from results_path import result_path

Rows = dict[int, list[list[str]]]  # 1-based page -> tables found there, each a list of row texts
_CAPTION = re.compile(r"(?m)^\s*Table \d+\s*[:.]")


def _row(cells: list[object]) -> str:
    return " | ".join(" ".join(str(c).split()) for c in cells if c)


def pdfplumber_tables(path: Path, text_strategy: bool) -> Rows:
    import pdfplumber

    settings = {"vertical_strategy": "text", "horizontal_strategy": "lines"} if text_strategy else {}
    out: Rows = {}
    with pdfplumber.open(path) as pdf:
        for number, page in enumerate(pdf.pages, start=1):
            tables = [[_row(r) for r in t] for t in page.extract_tables(settings) if len(t) >= 2]
            if tables:
                out[number] = tables
    return out


def camelot_tables(path: Path, flavor: str) -> Rows:
    import camelot

    out: Rows = {}
    for table in camelot.read_pdf(str(path), pages="all", flavor=flavor):
        out.setdefault(int(table.page), []).append([_row(r) for r in table.df.values.tolist()])
    return out


def pymupdf_tables(path: Path) -> Rows:
    import pymupdf

    out: Rows = {}
    with pymupdf.open(path) as doc:
        for number, page in enumerate(doc, start=1):
            tables = [[_row(r) for r in t.extract()] for t in page.find_tables().tables if t.row_count >= 2]
            if tables:
                out[number] = tables
    return out


def deepcite_tables(path: Path) -> Rows:
    from deepcite.config import IngestSettings
    from deepcite.ingest.readers import read_file

    result = read_file(path, doc_id=path.name, name=path.name, settings=IngestSettings(ocr=False))
    out: Rows = {}
    for read in result.documents:
        for block in read.blocks:
            if block.table and block.page is not None:
                out.setdefault(block.page, []).append(block.text.splitlines())
    return out


CANDIDATES: dict[str, Callable[[Path], Rows]] = {
    "pdfplumber": lambda p: pdfplumber_tables(p, text_strategy=False),
    "pdfplumber-text": lambda p: pdfplumber_tables(p, text_strategy=True),
    "camelot-lattice": lambda p: camelot_tables(p, "lattice"),
    "camelot-stream": lambda p: camelot_tables(p, "stream"),
    "pymupdf": pymupdf_tables,
    "deepcite": deepcite_tables,
}


def normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def caption_pages(path: Path) -> set[int]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        return {i + 1 for i in range(len(pdf)) if _CAPTION.search(pdf[i].get_textpage().get_text_range())}
    finally:
        pdf.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--candidates", required=True, help=f"comma-separated, of {', '.join(CANDIDATES)}")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    table_questions = [q for q in questions if q.get("kind") == "table" and q["file"].endswith(".pdf")]
    pdfs = sorted(p for p in args.files.glob("*.pdf") if "ocr" not in p.name)  # the scan has no text tables
    captions = {p.name: caption_pages(p) for p in pdfs}
    out = result_path("pdf_tables")
    results = json.loads(out.read_text()) if out.exists() else {}
    for name in args.candidates.split(","):
        find = CANDIDATES[name]
        found: dict[str, Rows] = {}
        start = time.perf_counter()
        for path in pdfs:
            try:
                found[path.name] = find(path)
            except Exception as exc:  # a candidate that fails on a file scores nothing there
                print(f"{name}: {path.name}: {exc.__class__.__name__}: {exc}")
                found[path.name] = {}
        seconds = time.perf_counter() - start
        with_caption = sum(len(c) for c in captions.values())
        hit_pages = sum(len(captions[f] & set(rows)) for f, rows in found.items())
        false_tables = sum(
            len(t) for f, rows in found.items() for p, t in rows.items() if p not in captions[f]
        )
        rows_ok = 0
        for q in table_questions:
            phrases = [
                normalize(a) for a in (q["answer"] if isinstance(q["answer"], list) else [q["answer"]])
            ]
            rows = [normalize(r) for t in found.get(q["file"], {}).get(q["page"], []) for r in t]
            rows_ok += any(all(p in row for p in phrases) for row in rows)
        results[name] = {
            "caption_pages_with_a_table": f"{hit_pages}/{with_caption}",
            "tables_on_pages_without_caption": false_tables,
            "table_questions_in_one_row": f"{rows_ok}/{len(table_questions)}",
            "seconds": round(seconds, 1),
            "pages": sum(_pages(p) for p in pdfs),
        }
        print(name, results[name], flush=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


def _pages(path: Path) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        return len(pdf)
    finally:
        pdf.close()


if __name__ == "__main__":
    main()
