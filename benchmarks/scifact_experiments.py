"""Issue #2 follow-up: can cheap, CPU-only tricks lift hybrid nDCG@10 on BEIR SciFact past 0.741?

Every weight is chosen on the 809 train queries (``qrels/train.tsv``) and only then scored on the 300 test
queries; both figures are printed and written to ``benchmarks/results/scifact_experiments/<date>_<commit>.json``.

    .venv/bin/python benchmarks/scifact_experiments.py            # every experiment (~5 min on 2 busy cores)
    .venv/bin/python benchmarks/scifact_experiments.py prf depth  # some of them

Set-up (read-only on the shared collection): the points of the already embedded collection
``beir-beir-scifact`` (``DEEPCITE_DATA_DIR=.data/eval``) are scrolled once, with their MiniLM vectors, into a
scratch folder (``--scratch``, default ``/tmp/deepcite-scifact-exp``), and the query vectors are cached there.
The experiments then run on a client-side *mirror* of the engine's hybrid search, so a grid costs seconds:

- BM25: the product's tokenizer, ``tfc_robertson`` document weights with the avgdl the collection's stored
  weights were computed with, query weight 1 per term times the Lucene IDF (what ``Modifier.Idf`` applies);
- dense: exact cosine (the vectors are unit-length);
- hybrid: each side's top ``depth`` chunks (``SearchSettings.prefetch_limit``), DBSF-normalised (mean ± 3σ,
  sample σ) and summed per chunk, like Qdrant's ``Fusion.Dbsf``; a document's rank is its best chunk's.

The mirror reproduces the engine: ``baseline`` prints hybrid-dbsf 0.7341 on test, the figure of
``deepcite eval retrieval``; ``engine-depth`` re-measures the one promising knob (prefetch depth) on the
engine itself (``EdgeStore`` on the shared collection, read-only: searches only).

Experiments:
- ``baseline``: bm25, dense, hybrid-dbsf with the product's settings;
- ``prf``: pseudo-relevance feedback from the first-pass hybrid list: RM3 (Lavrenko & Croft 2001; Abdul-Jaleel
  et al. 2004) and a tf-idf Rocchio variant for the BM25 query, Rocchio (1971) for the dense query
  (``q' = normalise(q + beta * mean of the top documents' vectors)``), both sides, and a second fusion stage
  (original and expanded lists fused together); per family the train-best setting is scored on test;
- ``k1b``: BM25 k1/b (the store would re-weight a copy), train-best scored on test;
- ``title``: title tokens counted r times in the BM25 text;
- ``aggregation``: document-level DBSF (best chunk per document before fusing), filled-in scores for one-sided
  candidates, min-max normalisation;
- ``depth``: DBSF prefetch depth, both sides alike and each side apart;
- ``engine-depth``: the same depths on the engine.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import ir_measures
import numpy as np
import scipy.sparse as sp
from ir_measures import RR, R, nDCG
from results_path import result_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from deepcite.config import SearchSettings, Settings  # noqa: E402
from deepcite.evaluation.beir import BeirData, load_beir  # noqa: E402
from deepcite.models import FusionMethod, SearchMode  # noqa: E402
from deepcite.retrieval.collection import open_collection  # noqa: E402
from deepcite.retrieval.embedders import build_embedder  # noqa: E402
from deepcite.text import tokenize  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MEASURES = {"ndcg@10": nDCG @ 10, "recall@100": R @ 100, "mrr@10": RR @ 10}
Lists = list[tuple[np.ndarray, np.ndarray]]  # per query: (chunk rows best first, their scores)


# -- set-up: export once, read-only ------------------------------------------------------------------------
def export(data_dir: Path, collection: str, scratch: Path) -> None:
    """Scroll every point (payload and dense vector) of ``collection`` into ``scratch`` (no write to it)."""
    if (scratch / "dense.npy").exists():
        return
    from qdrant_edge import ScrollRequest

    col = open_collection(collection, Settings(data_dir=data_dir), create=False)
    shard = col.store._shard(col.name)  # read-only scroll; the store API does not return vectors
    meta = col.store._read_meta(col.name)
    rows, vectors, offset = [], [], None
    while True:
        records, offset = shard.scroll(
            ScrollRequest(offset=offset, limit=512, with_payload=True, with_vector=True)
        )
        for r in records:
            p = r.payload
            rows.append({"doc_id": p["doc_id"], "title": p.get("title") or "", "text": p["text"]})
            vectors.append(r.vector["dense"])
        if offset is None:
            break
    scratch.mkdir(parents=True, exist_ok=True)
    np.save(scratch / "dense.npy", np.asarray(vectors, dtype=np.float32))
    (scratch / "chunks.json").write_text(
        json.dumps({"weight_avgdl": meta.bm25.weight_avgdl, "chunks": rows}), encoding="utf-8"
    )
    col.store.close()


@dataclass
class Split:
    name: str
    data: BeirData
    qids: list[str]
    vectors: np.ndarray  # one unit-length query vector per qid


def load_split(beir: Path, scratch: Path, name: str) -> Split:
    data = load_beir(beir, name)
    qids = list(data.queries)
    cache = scratch / f"queries-{name}.npy"
    if not cache.exists():
        vecs = build_embedder(Settings()).encode([data.queries[q] for q in qids], kind="query")
        np.save(cache, np.asarray(vecs, dtype=np.float32))
    return Split(name, data, qids, np.load(cache))


# -- the mirror ---------------------------------------------------------------------------------------------
class Mirror:
    """The engine's BM25, dense and DBSF hybrid search, computed in numpy over the exported points."""

    def __init__(self, scratch: Path) -> None:
        exported = json.loads((scratch / "chunks.json").read_text(encoding="utf-8"))
        self.chunks = exported["chunks"]
        self.weight_avgdl = float(exported["weight_avgdl"])
        self.dense = np.load(scratch / "dense.npy")
        self.doc = np.array([c["doc_id"] for c in self.chunks])
        self.n = len(self.chunks)
        self.body = [Counter(tokenize(c["text"])) for c in self.chunks]
        self.title = [Counter(tokenize(c["title"])) for c in self.chunks]
        self.vocab: dict[str, int] = {}
        for tf in itertools.chain(self.body, self.title):
            for term in tf:
                self.vocab.setdefault(term, len(self.vocab))
        self.set_title_repeat(1)

    def set_title_repeat(self, r: int) -> None:
        """Index ``title`` tokens ``r`` times plus the text (r=1: the product's ``include_title``)."""
        rows, cols, vals = [], [], []
        for i, (body, title) in enumerate(zip(self.body, self.title, strict=True)):
            tf = body + Counter({t: c * r for t, c in title.items()})
            for term, count in tf.items():
                rows.append(i)
                cols.append(self.vocab[term])
                vals.append(count)
        self.tf = sp.csr_matrix((np.asarray(vals, float), (rows, cols)), shape=(self.n, len(self.vocab)))
        self.dl = np.asarray(self.tf.sum(1)).ravel()
        df = np.bincount(self.tf.indices, minlength=len(self.vocab))
        self.idf = np.log(1 + (self.n - df + 0.5) / (df + 0.5))  # Lucene's, as Modifier.Idf computes

    def bm25_weights(self, k1: float = 1.2, b: float = 0.75, avgdl: float | None = None) -> sp.csr_matrix:
        """Stored document weights ``tfc_robertson`` (avgdl: the stored weights', unless given)."""
        m = self.tf.tocoo(copy=True)
        avgdl = avgdl or self.weight_avgdl
        m.data = m.data * (k1 + 1) / (m.data + k1 * (1 - b + b * self.dl[m.row] / avgdl))
        return m.tocsr()

    def query_weights(self, text: str) -> dict[int, float]:
        return {self.vocab[t]: 1.0 for t in set(tokenize(text)) if t in self.vocab}

    def bm25_scores(self, weights: sp.csr_matrix, queries: Sequence[dict[int, float]]) -> np.ndarray:
        """Chunks x queries BM25 scores: sum over query terms of weight * idf * tfc."""
        r, c, v = [], [], []
        for j, q in enumerate(queries):
            for t, w in q.items():
                r.append(t)
                c.append(j)
                v.append(w * self.idf[t])
        qm = sp.csc_matrix((v, (r, c)), shape=(len(self.vocab), len(queries)))
        return np.asarray((weights @ qm).todense())

    @staticmethod
    def top(scores: np.ndarray, depth: int, positive: bool) -> Lists:
        """Per column, the best ``depth`` rows (BM25 keeps only matching chunks, like a sparse search)."""
        out = []
        for col in scores.T:
            idx = np.argpartition(-col, min(depth, len(col) - 1))[:depth]
            idx = idx[np.argsort(-col[idx], kind="stable")]
            if positive:
                idx = idx[col[idx] > 0]
            out.append((idx, col[idx]))
        return out


def dbsf(scores: np.ndarray) -> np.ndarray:
    """Qdrant's DBSF normalisation (mean ± 3 sample σ onto [0, 1]); see deepcite.retrieval.fusion."""
    if len(scores) < 2:
        return np.full(len(scores), 0.5)
    mean, std = scores.mean(), scores.std(ddof=1)
    return np.full(len(scores), 0.5) if std == 0 else (scores - (mean - 3 * std)) / (6 * std)


def fuse(lists: Sequence[tuple[np.ndarray, np.ndarray]], k: int = 100) -> np.ndarray:
    """Chunk-level DBSF sum of several lists; the best ``k`` chunk rows."""
    acc: dict[int, float] = {}
    for idx, scores in lists:
        for i, v in zip(idx.tolist(), dbsf(scores).tolist(), strict=True):
            acc[i] = acc.get(i, 0.0) + v
    return np.array(sorted(acc, key=acc.__getitem__, reverse=True)[:k], dtype=int)


def score_run(m: Mirror, split: Split, ranked: Sequence[np.ndarray]) -> dict[str, float]:
    """nDCG@10, R@100, RR@10 of chunk rankings, a document ranked at its best chunk."""
    run = {}
    for qid, idx in zip(split.qids, ranked, strict=True):
        docs: dict[str, float] = {}
        for rank, i in enumerate(idx):
            docs.setdefault(str(m.doc[i]), float(-rank))
        run[qid] = docs
    agg = ir_measures.calc_aggregate(list(MEASURES.values()), split.data.qrels, run)
    return {name: round(float(agg[measure]), 4) for name, measure in MEASURES.items()}


# -- experiments --------------------------------------------------------------------------------------------
@dataclass
class Context:
    m: Mirror
    splits: dict[str, Split]
    weights: sp.csr_matrix  # the product's BM25 weights (k1 1.2, b 0.75)
    data_dir: Path
    collection: str

    def sides(
        self, split: str, depth: int = 100, weights: sp.csr_matrix | None = None
    ) -> tuple[Lists, Lists]:
        s = self.splits[split]
        queries = [self.m.query_weights(s.data.queries[q]) for q in s.qids]
        bm25 = Mirror.top(
            self.m.bm25_scores(self.weights if weights is None else weights, queries), depth, True
        )
        dense = Mirror.top(self.m.dense @ s.vectors.T, depth, False)
        return bm25, dense

    def hybrid(self, split: str, depth: int = 100, weights: sp.csr_matrix | None = None) -> dict[str, float]:
        bm25, dense = self.sides(split, depth, weights)
        return score_run(self.m, self.splits[split], [fuse([b, d]) for b, d in zip(bm25, dense, strict=True)])


def select_on_train(
    name: str, grid: Sequence[tuple], measure: Callable[[str, tuple], dict[str, float]], log: list
) -> dict:
    """Score every setting on train, then the train-best on test; print and record both."""
    train = []
    for params in grid:
        row = measure("train", params)
        train.append((row["ndcg@10"], params, row))
        print(f"  {name} {params} train {row}", flush=True)
    best_ndcg, best, best_row = max(train, key=lambda t: t[0])
    test = measure("test", best)
    print(f"  {name} train-best {best}: train {best_row} test {test}", flush=True)
    result = {"experiment": name, "train_best": list(best), "train": best_row, "test": test}
    log.append({"experiment": name, "grid": [{"params": list(p), "train": r} for _, p, r in train]})
    return result


def exp_baseline(ctx: Context, log: list) -> list[dict]:
    out = []
    for split in ("train", "test"):
        bm25, dense = ctx.sides(split)
        s = ctx.splits[split]
        row = {
            "experiment": "baseline",
            "split": split,
            "bm25": score_run(ctx.m, s, [b[0] for b in bm25]),
            "dense": score_run(ctx.m, s, [d[0] for d in dense]),
            "hybrid-dbsf": score_run(ctx.m, s, [fuse([b, d]) for b, d in zip(bm25, dense, strict=True)]),
        }
        print(f"  baseline {split}: {row}", flush=True)
        out.append(row)
    return out


def feedback_rows(m: Mirror, first: np.ndarray, n_docs: int) -> np.ndarray:
    """The best chunk of each of the first ``n_docs`` distinct documents of a first-pass ranking."""
    seen: set[str] = set()
    rows = []
    for i in first:
        if m.doc[i] not in seen:
            seen.add(m.doc[i])
            rows.append(i)
            if len(rows) == n_docs:
                break
    return np.asarray(rows, dtype=int)


def expand_query(
    m: Mirror,
    weights: sp.csr_matrix,
    query: dict[int, float],
    fb: np.ndarray,
    n_terms: int,
    lam: float,
    kind: str,
) -> dict[int, float]:
    """``(1 - lam) * original (uniform over its terms) + lam * feedback model`` over the top ``n_terms``.

    ``rm3``: feedback model ``P(t|R)`` = mean over feedback documents of ``tf / dl``, terms ranked by it;
    ``tfidf``: mean stored BM25 weight, terms ranked by it times IDF (the engine multiplies in the IDF).
    """
    if kind == "rm3":
        p = np.asarray(m.tf[fb].multiply(1.0 / m.dl[fb][:, None]).mean(0)).ravel()
        rank = p
    else:
        p = np.asarray(weights[fb].mean(0)).ravel()
        rank = p * m.idf
    terms = np.argpartition(-rank, n_terms)[:n_terms]
    terms = terms[rank[terms] > 0]
    out = {t: (1 - lam) * w / len(query) for t, w in query.items()} if query else {}
    for t in terms.tolist():
        out[t] = out.get(t, 0.0) + lam * p[t] / p[terms].sum()
    return out


def exp_prf(ctx: Context, log: list) -> list[dict]:
    m = ctx.m
    cache: dict[str, tuple] = {}

    def measure(split: str, params: tuple) -> dict[str, float]:
        kind, n_docs, n_terms, lam, beta, stage2 = params
        if split not in cache:
            bm25, dense = ctx.sides(split)
            first = [fuse([b, d]) for b, d in zip(bm25, dense, strict=True)]
            cache[split] = (bm25, dense, first)
        bm25, dense, first = cache[split]
        s = ctx.splits[split]
        fbs = [feedback_rows(m, f, n_docs) for f in first]
        new_bm25, new_dense = bm25, dense
        if lam > 0:
            queries = [
                expand_query(m, ctx.weights, m.query_weights(s.data.queries[q]), fb, n_terms, lam, kind)
                for q, fb in zip(s.qids, fbs, strict=True)
            ]
            new_bm25 = Mirror.top(m.bm25_scores(ctx.weights, queries), 100, True)
        if beta > 0:
            q = np.stack([v + beta * m.dense[fb].mean(0) for v, fb in zip(s.vectors, fbs, strict=True)])
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            new_dense = Mirror.top(m.dense @ q.T, 100, False)
        ranked = []
        for j in range(len(s.qids)):
            lists = [new_bm25[j], new_dense[j]] + ([bm25[j], dense[j]] if stage2 else [])
            ranked.append(fuse(lists))
        return score_run(m, s, ranked)

    docs, terms = (3, 5, 10), (10, 20, 40)
    grids = {
        "prf-rocchio-dense": [
            ("rm3", n, 0, 0.0, beta, False) for n in docs for beta in (0.25, 0.5, 1.0, 2.0)
        ],
        "prf-rm3-bm25": [
            ("rm3", n, t, lam, 0.0, False) for n in docs for t in terms for lam in (0.05, 0.1, 0.2, 0.4, 0.6)
        ],
        "prf-tfidf-bm25": [
            ("tfidf", n, t, lam, 0.0, False)
            for n in docs
            for t in terms
            for lam in (0.05, 0.1, 0.2, 0.4, 0.6)
        ],
        "prf-both": [
            (kind, n, t, lam, beta, False)
            for kind in ("rm3", "tfidf")
            for n in (5, 10)
            for t in (20, 40)
            for lam in (0.05, 0.1, 0.2)
            for beta in (0.25, 0.5)
        ],
        "prf-second-stage": [
            (kind, n, t, lam, beta, True)
            for kind in ("rm3", "tfidf")
            for n in (5, 10)
            for t in (20, 40)
            for lam in (0.2, 0.4, 0.6)
            for beta in (0.5, 1.0, 2.0)
        ],
    }
    return [select_on_train(name, grid, measure, log) for name, grid in grids.items()]


def exp_k1b(ctx: Context, log: list) -> list[dict]:
    grid = [(k1, b) for k1 in (0.6, 0.75, 0.9, 1.2, 1.5) for b in (0.2, 0.3, 0.4, 0.6, 0.75)]
    weights = {p: ctx.m.bm25_weights(*p, avgdl=float(ctx.m.dl.mean())) for p in grid}  # a re-weight's avgdl
    out = []
    for depth in (100, 2000):
        out.append(
            select_on_train(
                f"k1b@depth{depth}", grid, lambda s, p, d=depth: ctx.hybrid(s, d, weights[p]), log
            )
        )
    return out


def exp_title(ctx: Context, log: list) -> list[dict]:
    def measure(split: str, params: tuple) -> dict[str, float]:
        ctx.m.set_title_repeat(params[0])
        weights = ctx.m.bm25_weights(avgdl=float(ctx.m.dl.mean()))
        return ctx.hybrid(split, 100, weights)

    try:
        return [select_on_train("title-repeat", [(0,), (1,), (2,), (3,)], measure, log)]
    finally:
        ctx.m.set_title_repeat(1)


def exp_aggregation(ctx: Context, log: list) -> list[dict]:
    m = ctx.m

    def measure(split: str, params: tuple) -> dict[str, float]:
        (variant,) = params
        s = ctx.splits[split]
        queries = [m.query_weights(s.data.queries[q]) for q in s.qids]
        full_b = m.bm25_scores(ctx.weights, queries)
        full_d = m.dense @ s.vectors.T
        bm25, dense = Mirror.top(full_b, 100, True), Mirror.top(full_d, 100, False)
        ranked = []
        for j, (b, d) in enumerate(zip(bm25, dense, strict=True)):
            if variant == "chunk-dbsf":
                ranked.append(fuse([b, d]))
            elif variant == "doc-dbsf":  # each side's best chunk per document, then DBSF
                lists = []
                for idx, sc in (b, d):
                    _, first = np.unique(m.doc[idx], return_index=True)
                    keep = np.sort(first)
                    lists.append((idx[keep], sc[keep]))
                ranked.append(fuse(lists))
            elif variant == "filled-dbsf":  # one-sided candidates get their other-side score
                cand = np.union1d(b[0], d[0])
                total = np.zeros(len(cand))
                for (_, sc), full in ((b, full_b[:, j]), (d, full_d[:, j])):
                    mean, std = sc.mean(), sc.std(ddof=1)
                    total += (full[cand] - (mean - 3 * std)) / (6 * std)
                ranked.append(cand[np.argsort(-total, kind="stable")][:100])
            else:  # min-max
                acc: dict[int, float] = {}
                for idx, sc in (b, d):
                    norm = (sc - sc.min()) / (sc.max() - sc.min() + 1e-12)
                    for i, v in zip(idx.tolist(), norm.tolist(), strict=True):
                        acc[i] = acc.get(i, 0.0) + v
                ranked.append(np.array(sorted(acc, key=acc.__getitem__, reverse=True)[:100]))
        return score_run(m, s, ranked)

    grid = [("chunk-dbsf",), ("doc-dbsf",), ("filled-dbsf",), ("min-max",)]
    out = []
    for params in grid:  # each variant on both splits (reported, not selected)
        row = {
            "experiment": f"aggregation-{params[0]}",
            "train": measure("train", params),
            "test": measure("test", params),
        }
        print(f"  {row}", flush=True)
        out.append(row)
    return out


DEPTHS = (100, 500, 1000, 1500, 2000, 3000)


def exp_depth(ctx: Context, log: list) -> list[dict]:
    m = ctx.m
    sides: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def measure(split: str, params: tuple) -> dict[str, float]:
        bm25_depth, dense_depth = params
        if split not in sides:
            s = ctx.splits[split]
            queries = [m.query_weights(s.data.queries[q]) for q in s.qids]
            sides[split] = (m.bm25_scores(ctx.weights, queries), m.dense @ s.vectors.T)
        full_b, full_d = sides[split]
        b, d = Mirror.top(full_b, bm25_depth, True), Mirror.top(full_d, dense_depth, False)
        return score_run(m, ctx.splits[split], [fuse([x, y]) for x, y in zip(b, d, strict=True)])

    same = [(d, d) for d in (*DEPTHS, m.n)]
    apart = list(itertools.product(DEPTHS, DEPTHS))
    return [
        select_on_train("depth-both-sides", same, measure, log),
        select_on_train("depth-each-side", apart, measure, log),
    ]


def exp_engine_depth(ctx: Context, log: list) -> list[dict]:
    """Hybrid DBSF on the engine (shared collection, searches only) at each prefetch depth."""

    def measure(split: str, params: tuple) -> dict[str, float]:
        (depth,) = params
        settings = Settings(data_dir=ctx.data_dir, search=SearchSettings(prefetch_limit=depth))
        col = open_collection(ctx.collection, settings, create=False)
        s = ctx.splits[split]
        run, started = {}, time.perf_counter()
        for qid, vector in zip(s.qids, s.vectors, strict=True):
            hits = col.store.search(
                col.name,
                text=s.data.queries[qid],
                vector=vector.tolist(),
                mode=SearchMode.HYBRID,
                k=100,
                fusion=FusionMethod.DBSF,
            )
            docs: dict[str, float] = {}
            for hit in hits:
                docs.setdefault(hit.chunk.doc_id, float(-hit.rank))
            run[qid] = docs
        ms = 1000 * (time.perf_counter() - started) / len(s.qids)
        col.store.close()
        agg = ir_measures.calc_aggregate(list(MEASURES.values()), s.data.qrels, run)
        row = {name: round(float(agg[measure]), 4) for name, measure in MEASURES.items()}
        row["ms_per_query"] = round(ms, 2)
        return row

    return [select_on_train("engine-depth", [(d,) for d in (*DEPTHS, ctx.m.n)], measure, log)]


EXPERIMENTS: dict[str, Callable[[Context, list], list[dict]]] = {
    "baseline": exp_baseline,
    "prf": exp_prf,
    "k1b": exp_k1b,
    "title": exp_title,
    "aggregation": exp_aggregation,
    "depth": exp_depth,
    "engine-depth": exp_engine_depth,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("experiments", nargs="*", help=f"any of {', '.join(EXPERIMENTS)} (default: all)")
    parser.add_argument("--beir", type=Path, default=ROOT.parent / "shared/datasets/beir_scifact")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".data/eval")
    parser.add_argument("--collection", default="beir-beir-scifact")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/deepcite-scifact-exp"))
    parser.add_argument(
        "--out", type=Path, help="default: benchmarks/results/scifact_experiments/<date>_<commit>.json"
    )
    args = parser.parse_args()
    unknown = [e for e in args.experiments if e not in EXPERIMENTS]
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; choose from {', '.join(EXPERIMENTS)}")
    export(args.data_dir, args.collection, args.scratch)
    mirror = Mirror(args.scratch)
    splits = {name: load_split(args.beir, args.scratch, name) for name in ("train", "test")}
    ctx = Context(mirror, splits, mirror.bm25_weights(), args.data_dir, args.collection)
    results: dict[str, list[dict]] = {}
    grids: list = []
    for name in args.experiments or list(EXPERIMENTS):
        print(f"== {name}", flush=True)
        started = time.perf_counter()
        results[name] = EXPERIMENTS[name](ctx, grids)
        print(f"   ({time.perf_counter() - started:.0f}s)", flush=True)
    args.out = args.out or result_path("scifact_experiments")
    previous = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    previous.setdefault("results", {}).update(results)
    previous.setdefault("grids", {}).update({g["experiment"]: g["grid"] for g in grids})
    args.out.write_text(json.dumps(previous, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
