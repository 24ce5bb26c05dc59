"""Dump what deepcite's readers make of a folder's files, one text file each, to compare two versions of a reader.

    .venv/bin/python benchmarks/reader_text.py --out /tmp/after --ext pdf \
        eval/blind4/files eval/blind5/files ../shared/datasets/real_docs/files
    diff -r /tmp/before /tmp/after

Every file of the given folders whose extension is one of ``--ext`` is read with
:func:`deepcite.ingest.readers.read_file` (default settings) and written to ``<out>/<folder's parent>/<file>.txt``:
each block on its own lines, after a line naming its page, kind and section, so a diff shows which page
changed. Run it once on each version of the code (an older one by ``PYTHONPATH=<its src>``, e.g. from
``git archive <commit> src | tar -x -C /tmp/base``) and diff the two folders. Nothing is scored.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.ingest.readers import read_file


def reader_text(path: Path, settings: IngestSettings) -> str:
    """The reader's text of ``path``: its skip, else each document's blocks under a line saying where they are."""
    result = read_file(path, doc_id=path.name, name=path.name, settings=settings)
    if result.skip:
        return f"skipped: {result.skip.reason} ({result.skip.message})\n"
    lines: list[str] = []
    for read in result.documents:
        lines.append(f"=== {read.document.id}: {read.document.title}")
        for block in read.blocks or []:
            lines.append(f"--- page {block.page} {block.kind} | {block.section}")
            lines.append(block.text)
        if not read.blocks:
            lines.append(read.document.text)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders whose files are read")
    parser.add_argument("--out", type=Path, required=True, help="folder the texts are written to")
    parser.add_argument("--ext", nargs="+", default=["pdf", "html"], help="file extensions read (no dot)")
    args = parser.parse_args()
    settings = IngestSettings()
    suffixes = {f".{e.lower().lstrip('.')}" for e in args.ext}
    for folder in args.folders:
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() not in suffixes or not path.is_file():
                continue
            target = args.out / folder.resolve().parent.name / f"{path.name}.txt"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(reader_text(path, settings), encoding="utf-8")
            print(target)


if __name__ == "__main__":
    main()
