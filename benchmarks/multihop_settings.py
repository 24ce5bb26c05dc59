"""The graph-augmented research engine on one multi-hop question file under research-setting variants, one
run: how the pack order, the stopping rule and the graph list were chosen (on the train sets), and how the
engine as shipped (graph list off) compares on held-out sets.

    .venv/bin/python benchmarks/multihop_settings.py --data ../shared/datasets/hipporag_musique/musique_train.json \
        --data-dir /work/bench/chain '{}' '{"stopping": {"novelty_top_k": 0}}' '{"graph": {"enabled": false}}'

Each variant is a JSON object of ``research`` sections and fields laid over the settings profile ``--profile``
(default ``graph_list``, the shipped defaults with the graph's list on); ``{}`` is that profile itself. Every
variant runs through an Engine (the one assembly users run). The pool is the one ``deepcite eval multihop``
builds (``--data-dir``); recall@5/@10, all-supporting recall@10, hops and seconds as it scores them.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from deepcite.config import Settings  # noqa: E402
from deepcite.engine import Engine  # noqa: E402
from deepcite.evaluation.multihop import RunScores, holds_answer, holds_bridge, ingest_pool, load_questions  # noqa: E402
from deepcite.evaluation.profiles import load_profile, profile_settings  # noqa: E402
from deepcite.service import QuestionRequest  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a multi-hop question file")
    parser.add_argument("--data-dir", required=True, help="where eval multihop caches its pooled collection")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--profile", default="graph_list", help="the settings profile the variants change")
    parser.add_argument("--out", default=None, help="write the figures per variant as JSON here")
    parser.add_argument(
        "--trace",
        default=None,
        help="write one JSON line per question and variant here (bridges, gold titles)",
    )
    parser.add_argument("variants", nargs="+", help="JSON objects of research settings, e.g. '{}'")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    questions = load_questions(args.data, "auto", limit=args.limit)
    engine = Engine(settings)
    name = ingest_pool(engine, args.data, questions.format)
    base = profile_settings(settings, load_profile(args.profile))
    results = {}
    trace = open(args.trace, "w", encoding="utf-8") if args.trace else None  # noqa: SIM115
    for spec in args.variants:
        variant = engine.sharing(profile_settings(base, {"research": json.loads(spec)}))
        run = RunScores()
        for q in questions.questions:
            started = time.perf_counter()
            result = variant.research_sync(QuestionRequest(query=q.question, collection=name))
            ranked = [c.chunk.doc_id for c in result.pack.final_evidence]
            bridges = [b.name for b in result.pack.bridges]
            held = holds_bridge(bridges, q.gold_titles, q.question)
            run.add(
                ranked,
                q.gold,
                result.hops,
                time.perf_counter() - started,
                hop_count=q.hop_count,
                beam_held=held,
                beam_read=bool(bridges),
                answer_held=holds_answer(bridges, q.hop_answers) if q.hop_answers else None,
            )
            if trace is not None:
                titles = [c.chunk.title for c in result.pack.final_evidence[:10]]
                record = {"variant": spec, "id": q.qid, "question": q.question, "gold": sorted(q.gold_titles)}
                record |= {"held": held, "bridges": [b.model_dump() for b in result.pack.bridges]}
                record |= {"top10": titles, "queries": [r.queries for r in result.pack.retrieval_report]}
                trace.write(json.dumps(record) + "\n")
        variant.close()
        results[spec] = run.summary()
        print(spec, results[spec], flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"data": os.path.basename(args.data), "variants": results}, fh, indent=2)


if __name__ == "__main__":
    main()
