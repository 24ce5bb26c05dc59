"""Throw-away measurement: which BM25 should deepcite use? nDCG@10 on BEIR SciFact (test queries).

Variants:
- ``sparse k1/b``: project-computed sparse vectors (deepcite.retrieval.bm25) in Qdrant Edge (EdgeStore),
  IDF by the engine's IDF modifier;
- ``text-index k1/b``: Edge's own text index (``TextIndexParams(scoring=True)``) queried with ``TextQuery``
  and ``Bm25Params`` (Edge's word tokenizer, English stop words, Snowball stemmer);
- ``bm25s k1/b``: the bm25s library (method "lucene") on deepcite's tokens, as a reference.

Run: ``.venv/bin/python benchmarks/bm25_variants.py [--beir ../shared/datasets/beir_scifact] [--split test]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import ir_measures
from ir_measures import nDCG
from qdrant_edge import (
    Bm25Params,
    EdgeConfig,
    EdgeShard,
    EdgeSparseVectorParams,
    Language,
    Point,
    QueryRequest,
    SnowballLanguage,
    SnowballParams,
    TextIndexParams,
    TextQuery,
    TokenizerType,
    UpdateOperation,
)

from deepcite.config import SearchSettings, Settings
from deepcite.models import Chunk, SearchMode
from deepcite.retrieval.bm25 import bm25_text
from deepcite.retrieval.edge_store import EdgeStore
from deepcite.text import tokenize

PARAMS = [(0.9, 0.4), (1.2, 0.75)]


def load_beir(root: Path, split: str) -> tuple[list[dict], dict[str, str], list[ir_measures.Qrel]]:
    corpus = [json.loads(line) for line in (root / "corpus.jsonl").open(encoding="utf-8")]
    queries = {q["_id"]: q["text"] for q in map(json.loads, (root / "queries.jsonl").open(encoding="utf-8"))}
    qrels = []
    for i, line in enumerate((root / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()):
        parts = line.strip().split("\t")
        if i == 0 or len(parts) != 3:
            continue  # header row
        qrels.append(ir_measures.Qrel(parts[0], parts[1], int(parts[2])))
    wanted = {q.query_id for q in qrels}
    return corpus, {qid: text for qid, text in queries.items() if qid in wanted}, qrels


def ndcg(run: dict[str, dict[str, float]], qrels: list[ir_measures.Qrel]) -> float:
    return ir_measures.calc_aggregate([nDCG @ 10], qrels, run)[nDCG @ 10]


def sparse_run(corpus, queries, k1: float, b: float, tmp: Path) -> tuple[dict, float, float]:
    settings = Settings(data_dir=tmp, search=SearchSettings(bm25_k1=k1, bm25_b=b))
    store = EdgeStore(tmp / f"sparse-{k1}-{b}", settings)
    store.create_collection("scifact", dense_dim=None)
    chunks = [
        Chunk(chunk_id=d["_id"], doc_id=d["_id"], title=d.get("title", ""), text=d["text"]) for d in corpus
    ]
    t0 = time.perf_counter()
    for i in range(0, len(chunks), 512):
        store.upsert("scifact", chunks[i : i + 512], None)
    store.optimize("scifact")
    index_s = time.perf_counter() - t0
    run: dict[str, dict[str, float]] = {}
    t0 = time.perf_counter()
    for qid, text in queries.items():
        hits = store.search("scifact", text=text, vector=None, mode=SearchMode.BM25, k=100)
        run[qid] = {h.chunk.doc_id: h.score for h in hits}
    query_s = time.perf_counter() - t0
    store.close()
    return run, index_s, query_s


def text_index_runs(corpus, queries, tmp: Path) -> dict[tuple[float, float], tuple[dict, float]]:
    shard = EdgeShard.create(
        str(tmp / "text-index"), EdgeConfig(sparse_vectors={"unused": EdgeSparseVectorParams()})
    )
    params = TextIndexParams(
        tokenizer=TokenizerType.Word,
        lowercase=True,
        stopwords=Language.English,
        stemmer=SnowballParams(SnowballLanguage.English),
        scoring=True,
    )
    shard.update(UpdateOperation.create_field_index("body", params))
    points = [
        Point(
            i, {}, {"doc_id": d["_id"], "body": bm25_text(d.get("title", ""), d["text"], include_title=True)}
        )
        for i, d in enumerate(corpus)
    ]
    for i in range(0, len(points), 512):
        shard.update(UpdateOperation.upsert_points(points[i : i + 512]))
    shard.optimize()
    runs = {}
    for k1, b in PARAMS:
        run = {}
        t0 = time.perf_counter()
        for qid, text in queries.items():
            hits = shard.query(
                QueryRequest(
                    limit=100, query=TextQuery("body", text, Bm25Params(k=k1, b=b)), with_payload=True
                )
            )
            run[qid] = {h.payload["doc_id"]: h.score for h in hits}
        runs[(k1, b)] = (run, time.perf_counter() - t0)
    shard.close()
    return runs


def bm25s_run(corpus, queries, k1: float, b: float) -> dict:
    import bm25s

    retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
    retriever.index(
        [tokenize(bm25_text(d.get("title", ""), d["text"], include_title=True)) for d in corpus],
        show_progress=False,
    )
    ids = [d["_id"] for d in corpus]
    run = {}
    for qid, text in queries.items():
        scores = retriever.get_scores(sorted(set(tokenize(text))))
        top = scores.argsort()[::-1][:100]
        run[qid] = {ids[i]: float(scores[i]) for i in top if scores[i] > 0}
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--beir", type=Path, default=Path(__file__).parents[2] / "shared/datasets/beir_scifact"
    )
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    corpus, queries, qrels = load_beir(args.beir, args.split)
    print(f"{len(corpus)} documents, {len(queries)} {args.split} queries")
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for k1, b in PARAMS:
            run, index_s, query_s = sparse_run(corpus, queries, k1, b, tmp)
            rows.append((f"sparse vectors (Edge) k1={k1} b={b}", ndcg(run, qrels), index_s, query_s))
        for (k1, b), (run, query_s) in text_index_runs(corpus, queries, tmp).items():
            rows.append(
                (f"Edge text index (TextQuery) k1={k1} b={b}", ndcg(run, qrels), float("nan"), query_s)
            )
    for k1, b in PARAMS:
        rows.append(
            (
                f"bm25s lucene, deepcite tokens k1={k1} b={b}",
                ndcg(bm25s_run(corpus, queries, k1, b), qrels),
                float("nan"),
                float("nan"),
            )
        )
    print(f"{'variant':48} {'nDCG@10':>8} {'index s':>8} {'ms/query':>9}")
    for name, score, index_s, query_s in rows:
        print(f"{name:48} {score:8.4f} {index_s:8.1f} {1000 * query_s / len(queries):9.2f}")


if __name__ == "__main__":
    main()
