"""The entity graph's walk alone (search mode ``graph``, the question as the query, top 10) over the offline pool and
the pool whose graph holds an LLM's triples (``<pool>-llm``, built by ``deepcite eval multihop --systems
llm_triples``), under ``graph.relation_weight`` variants; and, per question, the gold passages the triples bring
into the top 10 or push out of it, with the entity and triple that led the walk there.

    .venv/bin/python benchmarks/llm_graph_walk.py --data ../shared/datasets/hipporag_musique/musique_train.json \
        --data-dir .data/bench --weights 0,1.0,2.0 --out benchmarks/results/llm_graph/<date>_<commit>_walk.json

Both pools must exist (nothing is ingested here). Evaluation only: settings are chosen on train sets with it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from deepcite.config import Settings  # noqa: E402
from deepcite.engine import Engine  # noqa: E402
from deepcite.evaluation.multihop import RunScores, load_questions, pool_collection_name  # noqa: E402
from deepcite.evaluation.profiles import profile_settings  # noqa: E402
from deepcite.models import SearchHit, SearchMode  # noqa: E402
from deepcite.service import SearchRequest  # noqa: E402

DEPTH = 10


def walk(engine: Engine, pool: str, question: str) -> list[SearchHit]:
    return engine.search(SearchRequest(query=question, collection=pool, mode=SearchMode.GRAPH, k=DEPTH)).hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a multi-hop question file")
    parser.add_argument("--data-dir", required=True, help="where eval multihop keeps both pools")
    parser.add_argument("--weights", default="1.0", help="graph.relation_weight values for the triples' pool")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    loaded = load_questions(args.data)
    base = Settings(data_dir=args.data_dir)
    engine = Engine(base)
    pool = pool_collection_name(args.data, loaded.format)
    variants = [("offline", pool, 1.0)] + [
        (f"triples, relation_weight {w}", f"{pool}-llm", float(w)) for w in args.weights.split(",")
    ]
    results: dict[str, Any] = {}
    tops: dict[str, list[list[SearchHit]]] = {}
    for label, name, weight in variants:
        variant = engine.sharing(profile_settings(base, {"graph": {"relation_weight": weight}}))
        run, tops[label] = RunScores(), []
        for q in loaded.questions:
            started = time.perf_counter()
            hits = walk(variant, name, q.question)
            tops[label].append(hits)
            run.add([h.doc_id for h in hits], q.gold, 1, time.perf_counter() - started, hop_count=q.hop_count)
        results[label] = run.summary()
        print(label, {k: results[label][k] for k in ("recall@5", "recall@10", "all_recall@10")}, flush=True)
    shipped = "triples, relation_weight 1.0"
    changes = []
    for i, q in enumerate(loaded.questions if shipped in tops else []):
        before = [h.doc_id for h in tops["offline"][i]]
        after = tops[shipped][i]
        gained = [
            {
                "title": h.title,
                "rank": r,
                "entity": h.graph.entity if h.graph else None,
                "relation": h.graph.relation if h.graph else None,
            }
            for r, h in enumerate(after, start=1)
            if h.doc_id in q.gold and h.doc_id not in before
        ]
        lost = [
            {"title": h.title, "rank": r}
            for r, h in enumerate(tops["offline"][i], start=1)
            if h.doc_id in q.gold and h.doc_id not in {x.doc_id for x in after}
        ]
        if gained or lost:
            changes.append({"id": q.qid, "question": q.question, "gained": gained, "lost": lost})
    results["changes"] = changes
    print(
        f"gold passages gained {sum(len(c['gained']) for c in changes)}, lost {sum(len(c['lost']) for c in changes)}"
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    engine.close()


if __name__ == "__main__":
    main()
