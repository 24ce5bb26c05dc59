"""How far an extractive summary can go on PubMedQA, and what the findings share costs it: summaries chosen
knowing the authors' conclusion (oracles), scored as ``deepcite eval answers`` scores the quick summary.

    .venv/bin/python benchmarks/pubmedqa_oracle.py --pubmedqa ../shared/datasets/pubmedqa_pqal --limit 120
    # writes benchmarks/results/pubmedqa_oracle/<date>_<commit>.json

For each question of both splits (the first ``--limit`` of each, in ``load_pubmedqa``'s order), every summary of
one to three sentences of the question's own abstract is scored by ROUGE-L F1 against its conclusion
(``LONG_ANSWER``; the scorer of ``eval answers``). A sentence is a finding when its section is results or
conclusions (``role_of_section``, as the eval's findings share counts it). Reported, beside lead-2 and the
issue-33 target (lead-2 + 0.03):

- the best summary of each shape, per question then averaged: any one sentence; one or two findings only;
  three sentences of which at least two are findings;
- the best mean over questions when the summaries together keep a findings share of at least ``--share``
  (each question free to take any shape; a Lagrangian sweep over the per-question options);
- where the best single sentence sits: a finding or not, the abstract's first sentence or not;
- beside the oracles, two choices made without the conclusion: the sentence most like the question (ROUGE-L
  against the question), and that sentence with the finding most like the question (findings share 0.5).

No deepcite answer is involved: the figures bound what choosing sentences can reach.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from collections.abc import Callable
from pathlib import Path

from results_path import result_path

from deepcite.answer.findings import SentenceRole, role_of_section
from deepcite.evaluation.answer_figures import rouge_l
from deepcite.evaluation.pubmedqa import load_pubmedqa
from deepcite.text import split_sentences

TARGET_MARGIN = 0.03  # issue 33: the summary's ROUGE-L F1 at least this above lead-2
MAX_SENTENCES = 3
MAX_TRIPLE_POOL = 18  # abstracts with more sentences skip the three-sentence shapes (a handful)
LAMBDAS = [x / 100 for x in range(0, 200, 2)]
Shape = tuple[int, int]  # (sentences, findings among them)


def _sentences(contexts: list[str], labels: list[str]) -> list[tuple[str, bool]]:
    """The abstract's sentences in order, each with whether its section reports findings."""
    return [
        (s, role_of_section(label) is SentenceRole.FINDING)
        for text, label in zip(contexts, labels, strict=True)
        for s in split_sentences(text)
        if s.strip()
    ]


def _options(sentences: list[tuple[str, bool]], reference: str) -> dict[Shape, float]:
    """The best ROUGE-L F1 of each summary shape, (sentences, findings among them) → score."""
    best: dict[Shape, float] = {}
    n = len(sentences)
    for size in range(1, MAX_SENTENCES + 1):
        if size == MAX_SENTENCES and n > MAX_TRIPLE_POOL:
            continue
        for chosen in itertools.combinations(range(n), size):
            shape = (size, sum(sentences[i][1] for i in chosen))
            score = rouge_l(" ".join(sentences[i][0] for i in chosen), reference).fmeasure
            best[shape] = max(best.get(shape, -1.0), score)
    return best


def _best(options: dict[Shape, float], keep: Callable[[Shape], bool]) -> float:
    return max((v for shape, v in options.items() if keep(shape)), default=0.0)


def _constrained(options: list[dict[Shape, float]], share: float) -> dict[str, float]:
    """The best mean ROUGE-L over questions whose chosen shapes keep a findings share of at least ``share``."""
    top: dict[str, float] = {"rougeL_f1": 0.0, "findings_share": 0.0}
    for lam in LAMBDAS:
        picks = [max(o.items(), key=lambda kv: kv[1] + lam * (kv[0][1] - share * kv[0][0])) for o in options]
        kept = sum(p[0][1] for p in picks) / sum(p[0][0] for p in picks)
        mean = statistics.mean(p[1] for p in picks)
        if kept >= share and mean > top["rougeL_f1"]:
            top = {"rougeL_f1": round(mean, 4), "findings_share": round(kept, 3), "lambda": lam}
    return top


def run_split(folder: Path, split: str, limit: int, share: float) -> dict[str, object]:
    """The oracle figures of one split (module docstring)."""
    raw = json.loads((folder / "ori_pqal.json").read_text(encoding="utf-8"))
    lead, options, placed = [], [], {"finding": 0, "first_sentence": 0}
    chosen: dict[str, list[float]] = {"most_like_question": [], "most_like_question_and_finding": []}
    for item in load_pubmedqa(folder, split, limit):
        sentences = _sentences(item.contexts, raw[item.pmid]["LABELS"])
        lead.append(rouge_l(" ".join(s for s, _ in sentences[:2]), item.long_answer).fmeasure)
        options.append(_options(sentences, item.long_answer))
        singles = [rouge_l(s, item.long_answer).fmeasure for s, _ in sentences]
        top = max(range(len(singles)), key=singles.__getitem__)
        placed["finding"] += sentences[top][1]
        placed["first_sentence"] += top == 0
        like = [rouge_l(s, item.question).fmeasure for s, _ in sentences]  # how like the question each is
        closest = max(range(len(like)), key=like.__getitem__)
        findings = [i for i, (_, finding) in enumerate(sentences) if finding and i != closest]
        closest_finding = max(findings, key=like.__getitem__) if findings else None
        chosen["most_like_question"].append(singles[closest])
        chosen["most_like_question_and_finding"].append(
            singles[closest]
            if closest_finding is None
            else rouge_l(
                " ".join(sentences[i][0] for i in sorted((closest, closest_finding))), item.long_answer
            ).fmeasure
        )

    def mean(keep: Callable[[Shape], bool]) -> float:
        return round(statistics.mean(_best(o, keep) for o in options), 4)

    lead_2 = round(statistics.mean(lead), 4)
    return {
        "questions": len(options),
        "lead_2": lead_2,
        "target": round(lead_2 + TARGET_MARGIN, 4),
        "oracle_any_one_sentence": mean(lambda s: s[0] == 1),
        "oracle_one_finding": mean(lambda s: s == (1, 1)),
        "oracle_two_findings": mean(lambda s: s == (2, 2)),
        "oracle_three_two_findings": mean(lambda s: s[0] == 3 and s[1] >= 2),
        "oracle_two_one_finding": mean(lambda s: s == (2, 1)),
        f"oracle_findings_share_{share}": _constrained(options, share),
        **{f"chosen_{name}": round(statistics.mean(scores), 4) for name, scores in chosen.items()},
        "best_single_sentence_is_finding": placed["finding"],
        "best_single_sentence_is_first": placed["first_sentence"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pubmedqa", type=Path, required=True, help="the PubMedQA PQA-L folder")
    parser.add_argument("--limit", type=int, default=120, help="questions of each split")
    parser.add_argument("--share", type=float, default=0.69, help="the findings share the summaries keep")
    args = parser.parse_args()
    out = {split: run_split(args.pubmedqa, split, args.limit, args.share) for split in ("train", "test")}
    path = result_path("pubmedqa_oracle")
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
