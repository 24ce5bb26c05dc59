"""Tune the extractive writer's settings on PubMedQA PQA-L *train* questions (never the test split).

    nice -n 10 .venv/bin/python benchmarks/answers_tuning.py --data-dir .data/eval --limit 100

Research runs once per question (its response contexts are cached in the data dir as JSON); each
candidate setting then re-runs only the answer stage over those contexts, so a grid is cheap. Writes
``benchmarks/results/answers_tuning/<date>_<commit>_pubmedqa-train.json``: the figures of every candidate, best ROUGE-L F1 first
(the committed file gathers every grid tried, each sorted by novel-term F1).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from pathlib import Path

from results_path import result_path

from deepcite.answer.context import ResponseContext
from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.pipeline import AnswerResult, generate_summary
from deepcite.config import AnswerSettings, Settings
from deepcite.engine import Engine
from deepcite.evaluation.answers import (
    SystemScores,
    load_pubmedqa,
    pubmedqa_collection,
    score_summary,
)
from deepcite.service import QuestionRequest

PQAL = Path("/work/shared/datasets/pubmedqa_pqal")
# the grid the defaults were chosen from; the results file also keeps the earlier grids (finding_weight
# 0.3-0.7, study_support_share 0.8/0.9, sentence_relevance_weight 0/0.5/1, elided statistics, a word cap)
GRID = {  # (answer sub-section, setting) -> values
    ("extractive", "finding_weight"): [0.2, 0.3],
    ("extractive", "sentence_relevance_weight"): [0.5, 0.7],
    ("extractive", "continue_ratio"): [0.75, 0.85],
    ("length", "extractive_summary_sentences"): [2, 3],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=100)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    engine = Engine(settings)
    items = load_pubmedqa(PQAL, "train", args.limit)
    cache = args.data_dir / f"pubmedqa-train-contexts-{args.limit}.json"
    if cache.is_file():
        contexts = [ResponseContext.model_validate(c) for c in json.loads(cache.read_text("utf-8"))]
    else:
        collection = pubmedqa_collection(PQAL, engine)
        contexts = []
        for n, item in enumerate(items, start=1):
            result = engine.research_sync(QuestionRequest(query=item.question, collection=collection))
            contexts.append(ResponseContext.from_pack(result.pack, settings.answer))
            print(f"researched {n}/{len(items)}", flush=True)
        cache.write_text(json.dumps([c.model_dump(mode="json") for c in contexts]), "utf-8")
    embedder = engine.resources.embedder
    rows = []
    shared = ExtractiveGenerator(
        embedder, settings.answer
    )  # its sentence-vector cache serves every candidate
    keys = list(GRID)
    for combo in itertools.product(*GRID.values()):
        sections: dict[str, dict[str, float]] = {}
        for (section, name), value in zip(keys, combo, strict=True):
            sections.setdefault(section, {})[name] = value
        answer_settings = AnswerSettings().tuned(**sections)
        generator = ExtractiveGenerator(embedder, answer_settings)
        generator._cache = shared._cache  # noqa: SLF001 - one cache across candidates (a tuning script)
        scores = SystemScores()
        started = time.perf_counter()
        for item, ctx in zip(items, contexts, strict=True):
            part = asyncio.run(generate_summary(ctx, generator, answer_settings))
            answered = AnswerResult(
                request_id=ctx.request_id,
                query=ctx.query,
                summary=part.text,
                answer="",
                citation_check=part.check,
            )
            score_summary(scores, item, answered, ctx, 0.0)
        row = {**{name: value for (_, name), value in zip(keys, combo, strict=True)}, **scores.summary()}
        row["seconds"] = round(time.perf_counter() - started, 1)
        print(row, flush=True)
        rows.append(row)
    rows.sort(key=lambda r: -float(r["rougeL_f1"]))
    result_path("answers_tuning", "pubmedqa-train").write_text(
        json.dumps({"split": "train", "questions": len(items), "runs": rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
