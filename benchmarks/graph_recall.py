"""Retrieval-only recall of the entity graph on the multi-hop *train* sets (settings are chosen here, never on
dev or the HotpotQA-500): single-shot hybrid, graph mode, and hybrid fused with the graph, one run.

    nice -n 10 .venv/bin/python benchmarks/graph_recall.py --data-dir /work/bench/graph/recall \
        --set damping=0.5 --set passage_seed_weight=0.1

Each question file's paragraphs are pooled into one collection (``deepcite.research.multihop.build_pool``);
recall@5/@10 and all-supporting recall@10 as ``deepcite eval multihop`` scores them. ``--set key=value``
overrides ``graph.*`` settings; extraction settings (``max_entities_per_passage``, ``keyphrase_*``,
``synonyms*``) rebuild the graph. Results go to ``benchmarks/results/graph_recall.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from deepcite.config import GraphSettings, Settings  # noqa: E402
from deepcite.models import SearchMode  # noqa: E402
from deepcite.research.multihop import RunScores, build_pool, load_questions  # noqa: E402

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


def _value(text: str) -> object:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--sets", default=",".join(TRAIN_SETS))
    parser.add_argument("--set", action="append", default=[], help="graph setting key=value")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "graph_recall.json")
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.set)
    graph = GraphSettings(**{k: _value(v) for k, v in overrides.items()})
    settings = Settings(data_dir=args.data_dir, graph=graph)
    results: dict[str, object] = {"graph_settings": graph.model_dump(), "sets": {}}
    for name in args.sets.split(","):
        path, fmt = TRAIN_SETS[name]
        questions = load_questions(path, fmt).questions
        collection = build_pool(path, fmt, settings)
        if EXTRACTION & overrides.keys() or not collection.graph.exists():
            started = time.perf_counter()
            collection.rebuild_graph()
            print(
                f"{name}: graph rebuilt in {time.perf_counter() - started:.1f}s: {collection.graph.stats()}"
            )
        runs = {"hybrid": RunScores(), "graph": RunScores(), "hybrid+graph": RunScores()}
        fused = settings.model_copy(update={"graph": graph.model_copy(update={"in_hybrid": True})})
        for q in questions:
            started = time.perf_counter()
            hybrid = collection.search(q.question, mode=SearchMode.HYBRID, k=10)
            runs["hybrid"].add([h.chunk.doc_id for h in hybrid], q.gold, 1, time.perf_counter() - started)
            started = time.perf_counter()
            walk = collection.graph_walk(q.question, first_hop=hybrid)
            hits = collection._graph_hits(walk, 10, None)
            runs["graph"].add([h.chunk.doc_id for h in hits], q.gold, 1, time.perf_counter() - started)
            collection.settings = fused
            started = time.perf_counter()
            both = collection.search(q.question, mode=SearchMode.HYBRID, k=10)
            runs["hybrid+graph"].add([h.chunk.doc_id for h in both], q.gold, 1, time.perf_counter() - started)
            collection.settings = settings
        summary = {run: scores.summary() for run, scores in runs.items()}
        results["sets"][name] = summary
        for run, s in summary.items():
            print(
                f"{name:15s} {run:13s} R@5 {s['recall@5']:.3f} R@10 {s['recall@10']:.3f} all@10 {s['all_recall@10']:.3f} {s['seconds_per_question'] * 1000:.0f} ms"
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
