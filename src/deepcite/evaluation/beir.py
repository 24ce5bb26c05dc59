"""Retrieval evaluation on a BEIR-format directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).

Metrics come from ``ir_measures`` (nDCG@10, R@100, RR@10), never from hand-written formulas.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ir_measures
from ir_measures import RR, R, nDCG

from deepcite.errors import InputError
from deepcite.models import FusionMethod, SearchMode
from deepcite.retrieval.collection import Collection

MEASURES = {"ndcg@10": nDCG @ 10, "recall@100": R @ 100, "mrr@10": RR @ 10}
RUN_DEPTH = 100


@dataclass
class BeirData:
    """Queries and relevance judgements of one split."""

    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_beir(directory: Path, split: str = "test") -> BeirData:
    """Read the queries that have judgements in ``qrels/<split>.tsv`` (header row, tab-separated)."""
    qrels_path = directory / "qrels" / f"{split}.tsv"
    queries_path = directory / "queries.jsonl"
    for needed in (directory / "corpus.jsonl", queries_path, qrels_path):
        if not needed.is_file():
            raise InputError(
                f"{needed} is missing; a BEIR directory holds corpus.jsonl, queries.jsonl, qrels/{split}.tsv"
            )
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t")
        for row in reader:
            if len(row) < 3 or not row[2].strip().lstrip("-").isdigit():
                continue  # header row or blank line
            qrels.setdefault(row[0].strip(), {})[row[1].strip()] = int(row[2])
    queries: dict[str, str] = {}
    with queries_path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                if str(record["_id"]) in qrels:
                    queries[str(record["_id"])] = record["text"]
    return BeirData(queries=queries, qrels=qrels)


def run_label(mode: SearchMode, fusion: FusionMethod | None, several_fusions: bool) -> str:
    """``bm25``, ``dense``, ``hybrid``; ``hybrid-rrf``/``hybrid-dbsf`` when several fusions are compared."""
    return (
        f"hybrid-{fusion.value}" if mode is SearchMode.HYBRID and fusion and several_fusions else mode.value
    )


def evaluate_modes(
    col: Collection,
    data: BeirData,
    runs: list[tuple[SearchMode, FusionMethod | None]],
    on_run: Callable[[str], None] | None = None,
) -> dict[str, dict[str, float]]:
    """Run every query in every (mode, fusion) through the collection's own search (what ``deepcite search``
    runs: the graph's walk and the pages' anchor text live in the collection, not the store) and score the runs;
    query vectors are encoded once."""
    qids = list(data.queries)
    texts = [data.queries[q] for q in qids]
    need_vectors = any(mode is not SearchMode.BM25 for mode, _ in runs)
    t0 = time.perf_counter()
    vectors = col.embedder.encode(texts, kind="query") if need_vectors else None
    embed_seconds = time.perf_counter() - t0
    results: dict[str, dict[str, float]] = {}
    several_fusions = sum(1 for mode, _ in runs if mode is SearchMode.HYBRID) > 1
    for mode, fusion in runs:
        label = run_label(mode, fusion, several_fusions)
        if on_run:
            on_run(label)
        run: dict[str, dict[str, float]] = {}
        started = time.perf_counter()
        for i, qid in enumerate(qids):
            vector = vectors[i].tolist() if vectors is not None and mode is not SearchMode.BM25 else None
            hits = col.search(texts[i], mode=mode, k=RUN_DEPTH, fusion=fusion, vector=vector)
            scores: dict[str, float] = {}
            for hit in hits:  # a document's score is its best chunk's
                scores.setdefault(hit.chunk.doc_id, float(-hit.rank))
            run[qid] = scores
        seconds = time.perf_counter() - started
        agg = ir_measures.calc_aggregate(list(MEASURES.values()), data.qrels, run)
        row = {name: round(float(agg[measure]), 4) for name, measure in MEASURES.items()}
        row["queries"] = len(qids)
        row["seconds"] = round(seconds, 3)
        row["ms_per_query"] = round(1000 * seconds / max(1, len(qids)), 3)
        if mode is not SearchMode.BM25:
            row["query_embedding_seconds"] = round(embed_seconds, 3)
        results[label] = row
    return results
