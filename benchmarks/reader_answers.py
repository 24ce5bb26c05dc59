"""Whether each question's answer phrases are in a reader's text, in two dumps of ``benchmarks/reader_text.py``.

    .venv/bin/python benchmarks/reader_answers.py --before /tmp/before --after /tmp/after \
        blind14=eval/blind14/questions.jsonl real_docs=eval/real_docs_questions.jsonl

Each argument names a set as its dump folder is named (the files' folder's parent: ``blind14``, ``real_docs``)
and its questions. A question counts where its file was dumped and it has an answer; its phrases are looked for
as the document check looks for them (:func:`deepcite.evaluation.answer_check.states_answer`, a table row's cells
apart by their headers for a question whose answer is in a table). Printed: per file, the questions, how many
each dump states, and the ids lost and gained. Nothing is run but the string check.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from deepcite.evaluation.answer_check import states_answer


def dump_text(path: Path) -> str:
    """A dump's text without its lines that say where a block is."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith(("--- page ", "=== ")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+", help="NAME=questions.jsonl, NAME the set's dump folder")
    parser.add_argument("--before", type=Path, required=True, help="a dump of benchmarks/reader_text.py")
    parser.add_argument("--after", type=Path, required=True, help="another dump, of the same files")
    args = parser.parse_args()
    totals = [0, 0, 0]
    print(f"{'set/file':56s} {'questions':>9s} {'before':>6s} {'after':>6s}  lost / gained")
    for spec in args.sets:
        name, _, questions = spec.partition("=")
        by_file: dict[str, list[dict]] = {}
        for line in Path(questions).read_text(encoding="utf-8").splitlines():
            if line.strip() and (question := json.loads(line)).get("answer"):
                by_file.setdefault(question["file"], []).append(question)
        for file, asked in sorted(by_file.items()):
            before, after = (folder / name / f"{file}.txt" for folder in (args.before, args.after))
            if not (before.is_file() and after.is_file()):
                continue
            texts = dump_text(before), dump_text(after)
            stated = [
                [states_answer(text, q["answer"], table=q.get("where") == "table") for text in texts]
                for q in asked
            ]
            lost = [q["id"] for q, (b, a) in zip(asked, stated, strict=True) if b and not a]
            gained = [q["id"] for q, (b, a) in zip(asked, stated, strict=True) if a and not b]
            counts = [len(asked), sum(b for b, _ in stated), sum(a for _, a in stated)]
            totals = [t + c for t, c in zip(totals, counts, strict=True)]
            print(f"{name + '/' + file:56s} {counts[0]:9d} {counts[1]:6d} {counts[2]:6d}  {lost} / {gained}")
    print(f"{'all':56s} {totals[0]:9d} {totals[1]:6d} {totals[2]:6d}")


if __name__ == "__main__":
    main()
