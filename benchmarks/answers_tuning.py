"""Tune the offline writer's settings on questions whose research is run once and cached.

    # PubMedQA PQA-L *train* questions (never the test split): ROUGE-L of the quick summary, lead-2 beside it
    nice -n 10 .venv/bin/python benchmarks/answers_tuning.py pubmedqa --data-dir .data/eval --limit 100 \
        --grid extractive.finding_weight=0.2,0.3 --grid length.extractive_summary_sentences=2,3
    # the documents check set (eval/real_docs_questions.jsonl): does the summary state the answer phrase
    nice -n 10 .venv/bin/python benchmarks/answers_tuning.py documents --data-dir /tmp/wd \
        --files ../shared/datasets/real_docs/files --questions eval/real_docs_questions.jsonl --misses

Research runs once per question (its response contexts are cached in the data dir as JSON); each candidate
setting (the product of every ``--grid section.setting=v1,v2``, over ``--set section.setting=v``) then re-runs
only the answer stage, as ``deepcite ask`` runs it (citation check and support check included), over those
contexts, so a grid is cheap. With ``--misses`` (documents) every question the summary misses is printed with
where its answer phrase is: not in the evidence context, in the context but in no quotable sentence, or in
the quotable sentence the writer ranked n-th for the question.

Writes ``benchmarks/results/answers_tuning/<date>_<commit>_<set>.json``: the figures of every candidate (best
first) and, for documents, every question's outcome under the first candidate.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from results_path import result_path
from setting_values import setting_value

from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.opening import opening_candidates
from deepcite.answer.pipeline import AnswerResult, answer_budget, answer_context, generate_summary
from deepcite.answer.question_fit import with_cue
from deepcite.answer.question_kind import question_kind
from deepcite.answer.sentence_scores import SentenceScores, findings_first
from deepcite.config import AnswerSettings, Settings
from deepcite.engine import Engine
from deepcite.evaluation.answer_check import AnswerCheck, ContractCheck, states_answer
from deepcite.evaluation.answer_scores import SystemScores, score_summary
from deepcite.evaluation.answerer import offline_settings
from deepcite.evaluation.documents import CheckQuestion, load_questions
from deepcite.evaluation.pubmedqa import load_pubmedqa, pubmedqa_collection
from deepcite.evaluation.pubmedqa_run import first_last
from deepcite.service import QuestionRequest

PQAL = Path("/work/shared/datasets/pubmedqa_pqal")


def candidates(sets: list[str], grids: list[str]) -> list[tuple[dict[str, Any], AnswerSettings]]:
    """Every combination of the ``--grid`` values over the ``--set`` ones, as (label, answer settings)."""
    fixed = [s.split("=", 1) for s in sets]
    axes = [(g.split("=", 1)[0], [setting_value(v) for v in g.split("=", 1)[1].split(",")]) for g in grids]
    out = []
    for combo in itertools.product(*(values for _, values in axes)) if axes else [()]:
        chosen = {k: setting_value(v) for k, v in fixed} | {
            k: v for (k, _), v in zip(axes, combo, strict=True)
        }
        sections: dict[str, dict[str, Any]] = {}
        for key, value in chosen.items():
            section, name = key.split(".", 1)
            sections.setdefault(section, {})[name] = value
        out.append((chosen, AnswerSettings().tuned(**sections)))
    return out


def research_contexts(
    engine: Engine | None, collection: str, questions: list[str], cache: Path
) -> list[ResponseContext]:
    """Each question's research context, from ``cache`` when it is there (research runs once); ``engine``
    researches them when it is not (None: the cache must be there)."""
    if cache.is_file():
        return [ResponseContext.model_validate(c) for c in json.loads(cache.read_text("utf-8"))]
    if engine is None:
        raise FileNotFoundError(f"no cached research contexts at {cache}")
    contexts = []
    for n, question in enumerate(questions, start=1):
        result = engine.research_sync(QuestionRequest(query=question, collection=collection))
        contexts.append(ResponseContext.from_pack(result.pack, engine.settings.answer))
        print(f"researched {n}/{len(questions)}", flush=True)
    cache.write_text(json.dumps([c.model_dump(mode="json") for c in contexts]), "utf-8")
    return contexts


def summary_candidates(
    writer: ExtractiveGenerator, ctx: ResponseContext, settings: AnswerSettings
) -> tuple[SentenceScores, list[int]]:
    """The sentence scores the writer's summary chooses from for ``ctx``, and the sentences that may open it."""
    kind = question_kind(ctx.query)
    scores, _ = writer._summary_choice(ctx, kind)  # noqa: SLF001 - a benchmark reads the writer's scores
    eligible = writer._select.eligible(scores, 0)  # noqa: SLF001
    return scores, opening_candidates(scores, eligible, ctx.query, kind, settings)


def _answer(
    ctx: ResponseContext, generator: ExtractiveGenerator, settings: AnswerSettings, engine: Engine
) -> AnswerResult:
    """The answer stage over ``ctx`` as ``deepcite ask`` runs it offline, with ``generator`` as the writer."""

    async def run() -> AnswerResult:
        with answer_budget(settings):
            return await answer_context(ctx, generator, settings, engine.resources.support)

    return asyncio.run(run())


# -- PubMedQA ------------------------------------------------------------------------------------------------
def pubmedqa(args: argparse.Namespace, engine: Engine) -> dict[str, Any]:
    items = load_pubmedqa(PQAL, "train", args.limit)
    collection = pubmedqa_collection(PQAL, engine)
    contexts = research_contexts(
        engine,
        collection,
        [i.question for i in items],
        args.data_dir / f"pubmedqa-train-contexts-{args.limit}.json",
    )
    lead = SystemScores()
    for item in items:
        lead.add_text(first_last(item.contexts, 2, 0), item.long_answer, item.question)
    print("own_abstract_lead_2", lead.summary(), flush=True)
    rows = []
    shared = ExtractiveGenerator(engine.resources.embedder, engine.settings.answer)
    for label, answer_settings in candidates(args.set, args.grid):
        generator = ExtractiveGenerator(engine.resources.embedder, answer_settings)
        generator._scorer._cache = shared._scorer._cache  # noqa: SLF001 - one cache across candidates (a tuning script)
        scores = SystemScores()
        started = time.perf_counter()
        for item, ctx in zip(items, contexts, strict=True):
            part = asyncio.run(generate_summary(ctx, generator, answer_settings, engine.resources.support))
            answered = AnswerResult(
                request_id=ctx.request_id,
                query=ctx.query,
                summary=part.text,
                answer="",
                citation_check=part.check,
            )
            score_summary(scores, item, answered, ctx, 0.0)
        row = {**label, **scores.summary(), "seconds": round(time.perf_counter() - started, 1)}
        print(row, flush=True)
        rows.append(row)
    rows.sort(key=lambda r: -float(r["rougeL_f1"]))
    return {"split": "train", "questions": len(items), "own_abstract_lead_2": lead.summary(), "runs": rows}


# -- documents -----------------------------------------------------------------------------------------------
def where_is(
    q: CheckQuestion, ctx: ResponseContext, generator: ExtractiveGenerator, settings: AnswerSettings
) -> str:
    """Where the answer phrase of a question the summary missed is: not in the context; in the context but in
    no quotable sentence; or the rank of the first quotable sentence that holds it (the writer's value for
    the question, answer-type cue included)."""
    phrases = [q.answer] if isinstance(q.answer, str) else q.answer
    if not any(states_answer(c.text, phrases) for c in ctx.selected_chunks):
        return "not in context"
    target = [ctx.query]
    main = ctx.aspects[0].aspect_type if ctx.aspects else None
    kind = question_kind(ctx.query)
    keep = generator._keeps_statistics(kind)  # noqa: SLF001
    scores = generator._score(target, ctx.selected_chunks, [findings_first(ctx.query, main)], keep)  # noqa: SLF001
    scores = with_cue(settings.kinds, scores, ctx.query, kind)
    holding = [i for i, x in enumerate(scores.sentences) if states_answer(x.text, phrases)]
    if not holding:
        # answer_form spacing: a phrase across two sentences, or in a heading/caption the writer leaves out
        return "in context, in no quotable sentence"
    order = sorted(range(len(scores.sentences)), key=lambda i: -scores.value[i, 0])
    rank = min(order.index(i) for i in holding) + 1
    best = min(holding, key=order.index)
    below = scores.support[best, 0] < settings.extractive.support_threshold
    fault = scores.sentences[best].lead_fault
    return (
        f"sentence ranked {rank}/{len(order)}"
        + (" (below support threshold)" if below else "")
        + (f" ({fault})" if fault else "")
    )


def documents(args: argparse.Namespace, engine: Engine) -> dict[str, Any]:
    checks = load_questions(args.questions)
    cache = args.data_dir / f"documents-contexts{args.variant}.json"
    if not cache.is_file():  # research runs once: the collection is ingested for it
        engine.ingest(args.collection, args.files, on_error="skip")
    contexts = research_contexts(engine, args.collection, [q.question for q in checks], cache)
    rows, outcomes = [], []
    shared = ExtractiveGenerator(engine.resources.embedder, engine.settings.answer)
    for n, (label, answer_settings) in enumerate(candidates(args.set, args.grid)):
        generator = ExtractiveGenerator(engine.resources.embedder, answer_settings)
        generator._scorer._cache = shared._scorer._cache  # noqa: SLF001 - one cache across candidates (a tuning script)
        tally, by_kind, contract = AnswerCheck(), AnswerCheck(), ContractCheck()
        started = time.perf_counter()
        for q, ctx in zip(checks, contexts, strict=True):
            answered = _answer(ctx, generator, answer_settings, engine)
            kind = question_kind(q.question).value
            shape = contract.add(answered.summary, answered.decision, q)
            if q.answer is None:
                if n == 0 and args.misses and not shape["abstained"]:
                    print(
                        f"--- {q.id} unanswerable, not abstained: {q.question}\n  summary: {answered.summary[:400]}"
                    )
                continue
            if n == 0 and args.misses and shape["abstained"]:
                print(f"--- {q.id} false abstention ({answered.decision.reason}): {q.question}")
            stated, together = tally.add(q.kind, answered.summary, answered.answer, q.answer)
            by_kind.add(kind, answered.summary, answered.answer, q.answer)
            if n == 0:
                outcome = {"id": q.id, "kind": kind, "summary": stated, "together": together}
                if not stated:
                    outcome["where"] = where_is(q, ctx, generator, answer_settings)
                    if args.misses:
                        print(
                            f"--- {q.id} [{kind}] {q.question}\n  gold: {q.answer}\n  where: {outcome['where']}"
                            f"  together: {together}\n  summary: {answered.summary[:600]}",
                            flush=True,
                        )
                outcomes.append(outcome)
        rates, kinds = tally.rates(), by_kind.rates()
        row = {
            **label,
            "summary": rates["summary"]["all"],
            "summary_or_long": rates["summary_or_long"]["all"],
            "summary_per_question_kind": kinds["summary"],
            "summary_or_long_per_question_kind": kinds["summary_or_long"],
            "questions_per_question_kind": kinds["questions"],
            "contract": contract.rates(
                answer_settings.length.summary_max_sentences, answer_settings.decision.summary_max_words
            ),
            "seconds": round(time.perf_counter() - started, 1),
        }
        print({k: v for k, v in row.items() if "per_question" not in k}, flush=True)
        rows.append(row)
    misses = Counter(o["where"].split(" (")[0].split(" ranked")[0] for o in outcomes if "where" in o)
    print("misses by where:", dict(misses))
    print("misses by kind:", dict(Counter(o["kind"] for o in outcomes if not o["summary"])))
    rows.sort(key=lambda r: (-r["summary"], -r["summary_or_long"]))
    return {"questions": len(checks), "runs": rows, "questions_first_candidate": outcomes}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("set_name", choices=["pubmedqa", "documents"])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--files", type=Path)
    parser.add_argument("--questions", type=Path)
    parser.add_argument("--collection", default="real-docs-eval")
    parser.add_argument("--set", action="append", default=[], help="section.setting=value, fixed")
    parser.add_argument("--grid", action="append", default=[], help="section.setting=v1,v2,…")
    parser.add_argument(
        "--research", action="append", default=[], help="section.setting=value of research (its own cache)"
    )
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    settings = offline_settings(Settings(data_dir=args.data_dir))
    if args.research:
        sections: dict[str, dict[str, Any]] = {}
        for item in args.research:
            key, value = item.split("=", 1)
            section, name = key.split(".", 1)
            sections.setdefault(section, {})[name] = setting_value(value)
        settings = settings.model_copy(update={"research": settings.research.tuned(**sections)})
    args.variant = "-".join(sorted(args.research)).replace("/", "_")
    engine = Engine(settings)
    try:
        run = pubmedqa if args.set_name == "pubmedqa" else documents
        out = run(args, engine)
    finally:
        engine.close()
    if not args.no_write:
        variant = "pubmedqa-train" if args.set_name == "pubmedqa" else "documents"
        path = result_path("answers_tuning", variant)
        path.write_text(json.dumps(out, indent=2) + "\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
