"""Retrieval-only recall of the entity graph on the multi-hop *train* sets (settings are chosen here, never on
dev or the HotpotQA-500): single-shot hybrid, graph mode, and hybrid fused with the graph, one run.

    nice -n 10 .venv/bin/python benchmarks/graph_recall.py --data-dir /work/bench/graph/recall \
        --grid damping=0.3,0.5 --grid passage_seed_weight=0.05,0.1

Each question file's paragraphs are pooled into one collection (``deepcite.evaluation.multihop.ingest_pool``);
recall@5/@10 and all-supporting recall@10 as ``deepcite eval multihop`` scores them. Each question's hybrid
list (k=10) is computed once and seeds every walk, as it does in ``Collection.search``. ``--grid key=v1,v2``
sweeps ``graph.*`` settings (every combination); ``--set key=value`` fixes one. A change of an extraction
setting (``max_entities_per_passage``, ``keyphrase_*``, ``synonyms*``) rebuilds the graph first. Results go to
``benchmarks/results/graph_recall/<date>_<commit>.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from pathlib import Path

from results_path import result_path
from setting_values import setting_value

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from deepcite.config import GraphSettings, Settings  # noqa: E402
from deepcite.engine import Engine  # noqa: E402
from deepcite.evaluation.multihop import RunScores, ingest_pool, load_questions  # noqa: E402
from deepcite.models import SearchMode  # noqa: E402

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
TRAIN_SETS = {
    "musique_train": (DATASETS / "hipporag_musique" / "musique_train.json", "musique"),
    "hotpotqa_train": (DATASETS / "hipporag_hotpotqa" / "hotpotqa_train.json", "hotpot"),
}
EXTRACTION = {
    "max_entities_per_passage",
    "keyphrase_max_words",
    "keyphrase_min_count",
    "synonyms",
    "synonym_threshold",
}
DEPTH = 10


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--sets", default=",".join(TRAIN_SETS))
    parser.add_argument("--set", action="append", default=[], help="graph setting key=value")
    parser.add_argument("--grid", action="append", default=[], help="graph setting key=v1,v2,...")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the graphs (extraction changed)")
    parser.add_argument(
        "--out", type=Path, help="default: benchmarks/results/graph_recall/<date>_<commit>.json"
    )
    args = parser.parse_args()
    args.out = args.out or result_path("graph_recall")
    fixed = {k: setting_value(v) for k, v in (item.split("=", 1) for item in args.set)}
    axes = [
        (k, [setting_value(x) for x in v.split(",")]) for k, v in (item.split("=", 1) for item in args.grid)
    ]
    combos = [
        dict(zip([k for k, _ in axes], values, strict=True))
        for values in itertools.product(*[v for _, v in axes])
    ]
    base = Settings(data_dir=args.data_dir, graph=GraphSettings(**fixed))
    results: dict[str, object] = {"fixed": fixed, "grid": dict(axes), "sets": {}}
    engine = Engine(base)
    for name in args.sets.split(","):
        path, fmt = TRAIN_SETS[name]
        questions = load_questions(path, fmt).questions
        collection = engine.corpus.collection(ingest_pool(engine, path, fmt))
        if args.rebuild or EXTRACTION & fixed.keys() or not collection.graph.exists():
            started = time.perf_counter()
            engine.corpus.pipeline(collection.name).rebuild_graph()
            print(
                f"{name}: graph rebuilt in {time.perf_counter() - started:.1f}s: {collection.graph.stats()}"
            )
        hybrid_scores, firsts = RunScores(), []
        for q in questions:
            started = time.perf_counter()
            hits = collection.search(q.question, mode=SearchMode.HYBRID, k=DEPTH)
            hybrid_scores.add([h.chunk.doc_id for h in hits], q.gold, 1, time.perf_counter() - started)
            firsts.append(hits)
        rows = [{"run": "hybrid", **hybrid_scores.summary()}]
        for combo in combos:
            collection.settings = base.model_copy(update={"graph": base.graph.model_copy(update=combo)})
            graph_scores, fused_scores = RunScores(), RunScores()
            for q, hybrid in zip(questions, firsts, strict=True):
                started = time.perf_counter()
                walk = collection.graph_walk(q.question, first_hop=hybrid)
                graph = collection.graph_hits(walk, DEPTH, None)
                graph_scores.add([h.chunk.doc_id for h in graph], q.gold, 1, time.perf_counter() - started)
                fused = collection.fuse_with_graph(hybrid, graph, DEPTH)
                fused_scores.add([h.chunk.doc_id for h in fused], q.gold, 1, time.perf_counter() - started)
            rows.append({"run": "graph", **combo, **graph_scores.summary()})
            rows.append({"run": "hybrid+graph", **combo, **fused_scores.summary()})
        results["sets"][name] = rows
        for row in rows:
            label = " ".join(f"{k}={row[k]}" for k, _ in axes if k in row)
            print(
                f"{name:15s} {row['run']:13s} R@5 {row['recall@5']:.3f} R@10 {row['recall@10']:.3f} "
                f"all@10 {row['all_recall@10']:.3f} {row['seconds_per_question'] * 1000:5.0f} ms  {label}",
                flush=True,
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
