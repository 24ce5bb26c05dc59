"""Document reader candidates compared on the real_docs check set: phrase on the right page, pages/s, size, licence.

    .venv/bin/python benchmarks/document_readers.py --files ../shared/datasets/real_docs/files \
        --questions eval/real_docs_questions.jsonl

For every question the candidate's text of the question's page (PDF pages, PPTX slides; the whole text for
formats without pages) must hold the answer phrase after NFKC, case folding and whitespace normalisation.
Candidates per format:

- PDF: deepcite's reader (PDFium segments + layout pass), raw PDFium page text (pypdfium2
  ``get_text_range``), pypdf ``extract_text``, pdfplumber ``extract_text`` (pdfminer.six).
- DOCX: deepcite's reader (python-docx, tables included) and the raw ``w:t`` runs of ``word/document.xml``.
- HTML: deepcite's reader (trafilatura on the page with hidden blocks removed) and lxml ``text_content``
  of the whole page (finds every phrase, navigation and hidden XBRL included: see ``chars``).
- EPUB, PPTX, Markdown, text: deepcite's reader only (one candidate each, reported for completeness).

Results go to ``benchmarks/results/document_readers/<date>_<commit>.json``. The check set's phrases were written
while reading deepcite's own output, so a phrase that deepcite's pipeline mangles would not have been
chosen: compare candidates with that bias in mind (the raw candidates are scored on the same phrases).
"""

from __future__ import annotations

import argparse
import json
import time
import zipfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from lxml import etree
from lxml import html as lxml_html
from results_path import result_path

from deepcite.config import IngestSettings
from deepcite.evaluation.documents import CheckQuestion, holds, load_questions
from deepcite.ingest.readers import detect_kind, read_file

PageTexts = dict[int | None, str]  # page -> text; the key None holds the whole text


def deepcite_reader(path: Path) -> PageTexts:
    result = read_file(path, doc_id=path.name, name=path.name, settings=IngestSettings())
    pages: PageTexts = {None: ""}
    for read in result.documents:
        pages[None] += "\n" + read.document.text
        for block in read.blocks:
            if block.page is not None:
                pages[block.page] = pages.get(block.page, "") + "\n" + block.text
    return pages


def pdfium_raw(path: Path) -> PageTexts:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    pages = {i + 1: pdf[i].get_textpage().get_text_range() for i in range(len(pdf))}
    pdf.close()
    return {None: "\n".join(pages.values()), **pages}


def pypdf_reader(path: Path) -> PageTexts:
    import pypdf

    pages = {i + 1: page.extract_text() or "" for i, page in enumerate(pypdf.PdfReader(path).pages)}
    return {None: "\n".join(pages.values()), **pages}


def pdfplumber_reader(path: Path) -> PageTexts:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        pages = {i + 1: page.extract_text() or "" for i, page in enumerate(pdf.pages)}
    return {None: "\n".join(pages.values()), **pages}


def docx_raw_xml(path: Path) -> PageTexts:
    with zipfile.ZipFile(path) as archive:
        tree = etree.fromstring(archive.read("word/document.xml"))
    ns = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    paragraphs = ["".join(t.text or "" for t in p.iter(f"{ns}t")) for p in tree.iter(f"{ns}p")]
    return {None: "\n".join(paragraphs)}


def html_whole_page(path: Path) -> PageTexts:
    return {None: lxml_html.document_fromstring(path.read_bytes()).text_content()}


CANDIDATES: dict[str, dict[str, Callable[[Path], PageTexts]]] = {
    "pdf": {
        "deepcite (pypdfium2 + layout)": deepcite_reader,
        "pypdfium2 raw": pdfium_raw,
        "pypdf": pypdf_reader,
        "pdfplumber": pdfplumber_reader,
    },
    "docx": {"deepcite (python-docx)": deepcite_reader, "raw w:t XML": docx_raw_xml},
    "html": {"deepcite (trafilatura)": deepcite_reader, "lxml whole page": html_whole_page},
    "epub": {"deepcite (zip + lxml, spine order)": deepcite_reader},
    "pptx": {"deepcite (python-pptx)": deepcite_reader},
    "markdown": {"deepcite": deepcite_reader},
    "text": {"deepcite": deepcite_reader},
}
PACKAGES = {
    "deepcite (pypdfium2 + layout)": ["pypdfium2"],
    "pypdfium2 raw": ["pypdfium2"],
    "pypdf": ["pypdf"],
    "pdfplumber": ["pdfplumber", "pdfminer.six", "pypdfium2"],
    "deepcite (python-docx)": ["python-docx", "lxml"],
    "deepcite (trafilatura)": [
        "trafilatura",
        "lxml",
        "lxml-html-clean",
        "justext",
        "htmldate",
        "courlan",
        "charset-normalizer",
        "dateparser",
        "babel",
        "tld",
    ],
    "deepcite (python-pptx)": ["python-pptx", "pillow", "XlsxWriter", "lxml"],
}


def found(pages: PageTexts, question: CheckQuestion) -> bool:
    text = pages.get(question.page, "") if question.page is not None and len(pages) > 1 else pages[None]
    return holds(text, question)


def install_mb(packages: list[str]) -> float:
    total = 0
    for name in packages:
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            continue
        total += sum(f.size or 0 for f in files)
    return round(total / 1e6, 1)


def licence(packages: list[str]) -> str:
    out = []
    for name in packages[:1]:
        try:
            meta = metadata.metadata(name)
        except metadata.PackageNotFoundError:
            continue
        expression = meta.get("License-Expression") or ""
        classifiers = [
            c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")
        ]
        raw = (meta.get("License") or "").splitlines()[0][:40] if meta.get("License") else ""
        out.append(expression or (classifiers[0] if classifiers else raw) or "?")
    return ", ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    args = parser.parse_args()
    questions = load_questions(args.questions)
    files = sorted({q.file for q in questions} | {p.name for p in args.files.iterdir()})
    kinds = {name: detect_kind(args.files / name) for name in files}
    rows = []
    for kind, candidates in CANDIDATES.items():
        kind_files = [f for f in files if kinds[f] == kind]
        kind_questions = [q for q in questions if kinds.get(q.file) == kind]
        for label, reader in candidates.items():
            hits, pages, seconds = 0, 0, 0.0
            for name in kind_files:
                started = time.perf_counter()
                texts = reader(args.files / name)
                seconds += time.perf_counter() - started
                pages += max(1, len([k for k in texts if k is not None]))
                hits += sum(found(texts, q) for q in kind_questions if q.file == name)
            packages = PACKAGES.get(label, [])
            rows.append(
                {
                    "format": kind,
                    "candidate": label,
                    "questions": len(kind_questions),
                    "phrase_on_page": round(hits / len(kind_questions), 3) if kind_questions else None,
                    "pages_or_files": pages,
                    "pages_per_s": round(pages / seconds, 1) if seconds else None,
                    "seconds": round(seconds, 2),
                    "install_mb": install_mb(packages) if packages else None,
                    "licence": licence(packages) if packages else None,
                }
            )
            print(json.dumps(rows[-1], ensure_ascii=False))
    result_path("document_readers").write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
