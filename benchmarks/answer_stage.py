"""Latency and grounding of the offline answer stage on SciFact evidence packs (extractive, real MiniLM).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/answer_stage.py --beir ../shared/datasets/beir_scifact --queries 50

For each SciFact test query, an evidence pack is built from the top ``--k`` abstracts of a bm25s index
(deepcite's tokenizer), the query as its one sub-question; then :func:`deepcite.answer.pipeline.answer`
runs with the :class:`ExtractiveGenerator` on all-MiniLM-L6-v2 (one generator for the whole run, as in
a server). Reported: p50/p95 of the whole answer stage, of the summary and of the long answer; the share
of queries whose summary cites a gold abstract when one is in the context; the share answered "Unknown";
citation-check totals. Results go to ``benchmarks/results/answer_stage/<date>_<commit>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
from pathlib import Path

import bm25s
import numpy as np
from results_path import result_path

from deepcite.answer.extractive import ExtractiveGenerator
from deepcite.answer.pipeline import answer
from deepcite.answer.prompts import UNKNOWN
from deepcite.config import Settings
from deepcite.models import Candidate, Chunk, EvidencePack
from deepcite.retrieval.embedders import build_embedder
from deepcite.text import tokenize


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _qrels(path: Path) -> dict[str, set[str]]:
    gold: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc, score = line.strip().split("\t")
        if int(score) > 0:
            gold.setdefault(qid, set()).add(doc)
    return gold


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


async def run(beir: Path, queries: int, k: int) -> dict:
    corpus = _read_jsonl(beir / "corpus.jsonl")
    gold = _qrels(beir / "qrels" / "test.tsv")
    test_queries = [q for q in _read_jsonl(beir / "queries.jsonl") if q["_id"] in gold][:queries]
    retriever = bm25s.BM25()
    retriever.index([tokenize(f"{d['title']} {d['text']}") for d in corpus], show_progress=False)

    settings = Settings()
    embedder = build_embedder(settings)
    embedder.encode(["warm-up"], kind="query")
    generator = ExtractiveGenerator(embedder, settings.answer)
    totals: list[float] = []
    summaries: list[float] = []
    answers: list[float] = []
    gold_in_context = gold_cited = unknown = 0
    checks = {"sentences": 0, "cited": 0, "repaired": 0, "invalid_ids": 0}
    for query in test_queries:
        docs, scores = retriever.retrieve([tokenize(query["text"])], k=k, show_progress=False)
        candidates = []
        for index, score in zip(docs[0], scores[0], strict=True):
            doc = corpus[int(index)]
            chunk = Chunk(chunk_id=f"{doc['_id']}:0", doc_id=doc["_id"], title=doc["title"], text=doc["text"])
            candidates.append(Candidate(chunk=chunk, score=float(score)))
        pack = EvidencePack(
            question=query["text"], final_evidence=candidates, subquery_evidence={query["text"]: candidates}
        )
        start = time.perf_counter()
        result = await answer(pack, [], generator, settings.answer)
        totals.append((time.perf_counter() - start) * 1000.0)
        summaries.append(result.summary_latency_ms)
        answers.append(result.answer_latency_ms)
        summary_ids = {int(x) for x in re.findall(r"\[(\d+)\]", result.summary)}
        summary_docs = {c.doc_id for c in result.citations if c.id in summary_ids}
        if gold[query["_id"]] & {c.doc_id for c in result.citations}:
            gold_in_context += 1
            gold_cited += bool(gold[query["_id"]] & summary_docs)
        unknown += result.summary == UNKNOWN
        for key in checks:
            checks[key] += getattr(result.citation_check, key)
    n = len(test_queries)
    return {
        "queries": n,
        "k": k,
        "answer_stage_ms": {"p50": statistics.median(totals), "p95": _pct(totals, 95)},
        "summary_ms": {"p50": statistics.median(summaries), "p95": _pct(summaries, 95)},
        "long_answer_ms": {"p50": statistics.median(answers), "p95": _pct(answers, 95)},
        "gold_in_context": gold_in_context,
        "summary_cites_gold_when_in_context": gold_cited / gold_in_context if gold_in_context else 0.0,
        "summary_unknown_share": unknown / n if n else 0.0,
        "citation_check_totals": checks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--beir", type=Path, required=True, help="folder with corpus.jsonl, queries.jsonl, qrels/"
    )
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=12, help="abstracts per evidence pack")
    args = parser.parse_args()
    report = asyncio.run(run(args.beir, args.queries, args.k))
    result_path("answer_stage").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
