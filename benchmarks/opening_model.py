"""Fit the quick summary's opening model (``answer.opening``) on the dev sets' cached research contexts.

    cat eval/real_docs_reader_words.jsonl eval/real_docs_unanswerable.jsonl > /tmp/rw.jsonl
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/opening_model.py \
        --set 88:eval/real_docs_questions.jsonl:.data/tune88 --set rw:/tmp/rw.jsonl:.data/tunerw \
        --set b1:eval/blind/questions.jsonl:.data/new-blind --set b2:eval/blind2/questions.jsonl:.data/new-blind2 \
        --set b3:eval/blind3/questions.jsonl:.data/new-blind3 --set b4:eval/blind4/questions.jsonl:.data/new-blind4 \
        --set b5:eval/blind5/questions.jsonl:.data/blind5

Each ``--set name:questions:data-dir`` names a set whose research contexts ``benchmarks/answer_decision.py``
cached (``<data-dir>/documents-contexts.json``). For every answerable question, every sentence that may open
the summary (:func:`deepcite.answer.opening.opening_candidates`) gets its features
(:func:`~deepcite.answer.opening.opening_features`) and a label: it states the answer phrase. A logistic
regression (balanced classes, standardised features) is fitted on all sets; its weights, in the features' own
units, are what ``answer.opening`` holds. Left-one-set-out, the share of questions whose top-scored candidate
states the answer is printed beside the writer's own first sentence (the opening model off). Never fit on a
set you report as held out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from answers_tuning import research_contexts
from results_path import result_path
from sklearn.linear_model import LogisticRegression

from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.opening import FEATURES, opening_candidates, opening_features
from deepcite.answer.question_kind import question_kind
from deepcite.config import Settings
from deepcite.evaluation.answer_check import states_answer
from deepcite.evaluation.documents import load_questions
from deepcite.retrieval.embedders import build_embedder


def question_rows(name: str, questions: Path, data_dir: Path, writer: ExtractiveGenerator) -> list[dict]:
    """Per answerable question with candidates: its set, features, labels and the writer's own first pick."""
    settings = writer._settings  # noqa: SLF001 - a fitting script reads the writer it fits for
    off = settings.tuned(opening={"enabled": False})
    checks = load_questions(questions)
    contexts = research_contexts(None, name, [], data_dir / "documents-contexts.json")
    rows = []
    for q, ctx in zip(checks, contexts, strict=True):
        if q.answer is None or not ctx.selected_chunks:
            continue
        kind = question_kind(ctx.query)
        scores, pieces = writer._summary_choice(ctx, kind)  # noqa: SLF001
        candidates = opening_candidates(scores, writer._select.eligible(scores, 0), ctx.query, kind, settings)  # noqa: SLF001
        if not candidates:
            continue
        plain = ExtractiveGenerator(writer._scorer._embedder, off)  # noqa: SLF001
        plain._scorer = writer._scorer  # noqa: SLF001 - one embedding cache
        base_scores, base_pieces = plain._summary_choice(ctx, kind)  # noqa: SLF001
        first = [i for p in base_pieces for i in p][:1]
        rows.append(
            {
                "set": name,
                "features": opening_features(scores, candidates, ctx.query, settings.kinds.cue_min),
                "labels": np.array(
                    [states_answer(scores.sentences[i].text, q.answer, table=q.in_table) for i in candidates]
                ),
                "base": bool(first)
                and states_answer(base_scores.sentences[first[0]].text, q.answer, table=q.in_table),
            }
        )
    return rows


def fit(rows: list[dict], c: float) -> np.ndarray:
    """Weights in the features' own units (standardised fit, scaled back)."""
    x = np.vstack([r["features"] for r in rows])
    y = np.concatenate([r["labels"] for r in rows])
    mean, sd = x.mean(0), x.std(0) + 1e-9
    model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit((x - mean) / sd, y)
    return model.coef_[0] / sd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", required=True, help="name:questions.jsonl:data-dir")
    parser.add_argument("-C", type=float, default=0.3, help="inverse regularisation strength")
    args = parser.parse_args()
    settings = Settings()
    writer = ExtractiveGenerator(build_embedder(settings), settings.answer)
    rows: list[dict] = []
    for spec in args.set:
        name, questions, data_dir = spec.split(":")
        rows += question_rows(name, Path(questions), Path(data_dir), writer)
    held_out = {}
    for name in sorted({r["set"] for r in rows}):
        weights = fit([r for r in rows if r["set"] != name], args.C)
        test = [r for r in rows if r["set"] == name]
        chosen = sum(bool(r["labels"][int(np.argmax(r["features"] @ weights))]) for r in test)
        held_out[name] = {
            "questions": len(test),
            "opening_model": round(chosen / len(test), 3),
            "writer_order": round(sum(r["base"] for r in test) / len(test), 3),
        }
    weights = fit(rows, args.C)
    out = {
        "C": args.C,
        "left_one_set_out": held_out,
        "weights": dict(zip(FEATURES, (round(float(w), 3) for w in weights), strict=True)),
    }
    path = result_path("opening_model", "fit")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    print("wrote", path)


if __name__ == "__main__":
    main()
