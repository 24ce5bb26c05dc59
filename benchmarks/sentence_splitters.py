"""Which sentence splitter survives real abstracts: boundaries on hand-labelled PubMedQA passages.

    .venv/bin/python benchmarks/sentence_splitters.py   # writes benchmarks/results/sentence_splitters/<date>_<commit>.json

Candidates: the regular expression deepcite used before (kept here only as the baseline), pysbd alone,
and deepcite's ``deepcite.text.split_sentences`` (pysbd after a glued-label pre-pass, with a list item joined to the
text before it unless that ended a sentence). Score: boundary
precision/recall/F1 (a boundary is the character offset where a sentence ends) and the share of passages
split exactly as labelled, plus, over every PQA-L context, the time per passage and the sentences that end
without closing punctuation (``open_ends``: a sentence cut mid-way, or a section label standing alone).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pysbd
from results_path import result_path

from deepcite.text import SENTENCE_END, split_sentences

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "tests" / "fixtures" / "answer" / "sentences.json"
PQAL = Path("/work/shared/datasets/pubmedqa_pqal/ori_pqal.json")

_OLD_ABBREV = (
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\bet al)(?<!\bFig)(?<!\bvs)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bNo)(?<!\bSt)"
)
_OLD_END = re.compile(_OLD_ABBREV + r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def old_regex(text: str) -> list[str]:
    text = re.sub(r"\s+", " ", text).strip()
    return [s.strip() for s in _OLD_END.split(text) if s.strip()]


_SEG = pysbd.Segmenter(language="en", clean=False)


def pysbd_alone(text: str) -> list[str]:
    return [s.strip() for s in _SEG.segment(re.sub(r"\s+", " ", text).strip()) if s.strip()]


def _ends(sentences: list[str]) -> set[int]:
    """Boundaries as offsets into the text with all blanks removed (splitters differ on spacing)."""
    out, pos = set(), 0
    for s in sentences:
        pos += len(re.sub(r"\s+", "", s))
        out.add(pos)
    return out


def score(split: Callable[[str], list[str]], cases: list[dict]) -> dict[str, float]:
    tp = fp = fn = exact = 0
    for case in cases:
        got, want = _ends(split(case["text"])), _ends(case["sentences"])
        tp, fp, fn = tp + len(got & want), fp + len(got - want), fn + len(want - got)
        exact += got == want
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return {
        "boundary_precision": round(precision, 3),
        "boundary_recall": round(recall, 3),
        "boundary_f1": round(2 * precision * recall / max(precision + recall, 1e-9), 3),
        "exact_passages": round(exact / len(cases), 3),
    }


def main() -> None:
    cases = json.loads(LABELLED.read_text(encoding="utf-8"))
    texts = [c for v in json.loads(PQAL.read_text(encoding="utf-8")).values() for c in v["CONTEXTS"]]
    results: dict[str, dict[str, float]] = {}
    for name, split in (
        ("old_regex", old_regex),
        ("pysbd", pysbd_alone),
        ("deepcite_split_sentences", split_sentences),
    ):
        row = score(split, cases)
        start = time.perf_counter()
        for text in texts:
            split(text + " ")  # a fresh string: no cache hit
        row["ms_per_passage"] = round((time.perf_counter() - start) * 1000 / len(texts), 3)
        row["open_ends"] = sum(not SENTENCE_END.search(s) for text in texts for s in split(text))
        results[name] = row
        print(name, row)
    result_path("sentence_splitters").write_text(
        json.dumps({"labelled_passages": len(cases), "timed_passages": len(texts), **results}, indent=2)
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
