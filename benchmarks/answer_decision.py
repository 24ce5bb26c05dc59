"""The answer stage on one set's research, once per writer: the same evidence for the writer of another tree.

    # research once (ingest and research each question; contexts cached in the data dir), then answer
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/answer_decision.py --files eval/blind4/files \
        --questions eval/blind4/questions.jsonl --data-dir .data/blind4 --out blind4.json
    # the same contexts through another tree's writer (here the session's start, checked out in /tmp/base)
    PYTHONPATH=/tmp/base/src .venv/bin/python benchmarks/answer_decision.py --files eval/blind4/files \
        --questions eval/blind4/questions.jsonl --data-dir .data/blind4 --out blind4-base.json

The answer stage runs as ``deepcite ask`` runs it offline (citation and support checks included); the figures
are ``deepcite eval documents``' answer checks (:mod:`deepcite.evaluation.answer_check`), with the share of
answerable questions whose answer phrase is in the research context (and in its top 5). A writer without an
answer decision (an older tree) counts as never abstaining.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from answers_tuning import research_contexts

from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.pipeline import AnswerResult, answer_budget, answer_context
from deepcite.answer.support import CitationSupport
from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.evaluation.answer_check import AnswerCheck, ContractCheck, states_answer
from deepcite.evaluation.answerer import offline_settings
from deepcite.evaluation.documents import load_questions
from deepcite.retrieval.embedders import build_embedder


def contexts(files: Path, questions: list[str], data_dir: Path, collection: str) -> list[ResponseContext]:
    """Each question's research context, researched once and cached in ``data_dir``."""
    cache = data_dir / "documents-contexts.json"
    if cache.is_file():
        return research_contexts(None, collection, questions, cache)
    engine = Engine(offline_settings(Settings(data_dir=data_dir)))
    try:
        skipped = engine.ingest(collection, files, on_error="skip").skipped_files
        if skipped:  # a set's figures without one of its files are not its figures: stop before researching
            raise SystemExit(
                "not ingested: "
                + "; ".join(f"{f.file} ({f.message or f.reason})" for f in skipped)
                + ". A file that timed out reads on an idle machine or with a larger ingest.timeout_s; a rerun retries only these."
            )
        return research_contexts(engine, collection, questions, cache)
    finally:
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--collection", default="answer-decision")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    checks = load_questions(args.questions)
    found = contexts(args.files, [q.question for q in checks], args.data_dir, args.collection)
    settings = Settings()
    embedder = build_embedder(settings)
    writer = ExtractiveGenerator(embedder, settings.answer)
    support = CitationSupport(embedder, settings.answer)
    stated, contract = AnswerCheck(), ContractCheck()
    rows: list[dict[str, Any]] = []
    in_context = top5 = 0
    seconds: list[float] = []
    for q, ctx in zip(checks, found, strict=True):

        async def run(ctx: ResponseContext = ctx) -> AnswerResult:
            with answer_budget(settings.answer):
                return await answer_context(ctx, writer, settings.answer, support)

        started = time.perf_counter()
        answered = asyncio.run(run())
        seconds.append(time.perf_counter() - started)
        row = {"id": q.id, **contract.add(answered.summary, getattr(answered, "decision", None), q)}
        if q.answer is not None:
            table = q.in_table
            in_summary, together = stated.add(
                q.kind, answered.summary, answered.answer, q.answer, table=table
            )
            row |= {"summary": in_summary, "summary_or_long": together}
            in_context += any(states_answer(c.text, q.answer, table=table) for c in ctx.selected_chunks)
            top5 += any(states_answer(c.text, q.answer, table=table) for c in ctx.selected_chunks[:5])
        rows.append(row | {"summary_text": answered.summary})
    answerable = max(1, sum(q.answer is not None for q in checks))
    result = {
        "questions": len(checks),
        "answer_in_context": round(in_context / answerable, 3),
        "answer_in_context_top5": round(top5 / answerable, 3),
        "states_answer": stated.rates(),
        "summary_contract": contract.rates(
            settings.answer.length.summary_max_sentences, settings.answer.decision.summary_max_words
        ),
        "answer_seconds_median": round(statistics.median(seconds), 3),
        "per_question": rows,
    }
    args.out.write_text(json.dumps(result, indent=1), "utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "per_question"}))


if __name__ == "__main__":
    main()
