"""An experiment, not shipped (docs/benchmarks/llm-graph.md): HippoRAG 2's fact retrieval as extra seeds of the
walk. The question is matched (MiniLM cosine) against the triples of the pool's graph ("subject relation
object"); the top k facts' two entities join the walk's seeds with weight w beside the question's entities (1.0)
and the first-hop passages (2.0), as ``GraphWalker.walk`` seeds them. The walk alone, top 10; weight 0 is the
shipped walk. Reads the walker's matrix directly.

    python benchmarks/llm_fact_seeds.py <data dir holding the MuSiQue train pool built with triples>
"""

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.evaluation.multihop import RunScores, load_questions, pool_collection_name
from deepcite.models import SearchMode
from deepcite.retrieval.graph.ppr import _top, personalized_pagerank

data = str(
    Path(__file__).resolve().parents[2] / "shared" / "datasets" / "hipporag_musique" / "musique_train.json"
)
qs = load_questions(data).questions
engine = Engine(Settings(data_dir=sys.argv[1]))
pool = pool_collection_name(data, "musique") + "-llm"
col = engine.corpus.collection(pool)
col.graph_walk("warm up")
walker = col._graph_walker
m = walker.matrix()
cfg = walker.settings
facts = sorted({(a, b, t) for a, ends in m.relations.items() for b, t in ends if a < b}, key=lambda x: x[2])
t0 = time.time()
F = np.asarray(col.embed([t for _, _, t in facts]), dtype=np.float32)
print("facts", len(facts), "embedded in", round(time.time() - t0), "s", flush=True)
n_p = m.n_passages
n = n_p + len(m.rows.entity_keys)
prep = []
for q in qs:
    first = col.search(q.question, mode=SearchMode(cfg.first_hop_mode), k=cfg.first_hop_k)
    qv = np.asarray(col.embed_query(q.question), dtype=np.float32)
    prep.append((walker.seed_entities(q.question, m), [h.chunk.chunk_id for h in first], F @ qv))
for k_facts, w in [(5, 0.0)] + [(k, w) for k in (3, 5) for w in (0.5, 1.0, 2.0)]:
    run = RunScores()
    for q, (ents, first, sims) in zip(qs, prep, strict=True):
        seeds = np.zeros(n, dtype=np.float32)
        if ents:
            spec = 1.0 / np.maximum(m.entity_df[ents], 1.0)
            seeds[[n_p + e for e in ents]] = cfg.entity_seed_weight * spec / spec.sum()
        ps = {m.chunk_index[c]: 1.0 / r for r, c in enumerate(first, 1) if c in m.chunk_index}
        tot = sum(ps.values())
        for i, v in ps.items():
            seeds[i] += cfg.passage_seed_weight * v / tot
        if w > 0:
            top = np.argsort(-sims)[:k_facts]
            fs = np.zeros(n, dtype=np.float32)
            for j in top:
                a, b, _ = facts[j]
                fs[n_p + a] += max(sims[j], 0)
                fs[n_p + b] += max(sims[j], 0)
            if fs.sum() > 0:
                seeds += w * fs / fs.sum()
        seeds /= seeds.sum()
        sc = personalized_pagerank(
            m.spread, m.dangling, seeds, damping=cfg.damping, max_iter=cfg.max_iter, tol=cfg.tol
        )
        ranked = [m.rows.doc_ids[i] for i in _top(sc[:n_p], 50)]
        run.add(list(dict.fromkeys(ranked))[:10], q.gold, 1, 0.0, hop_count=q.hop_count)
    s = run.summary()
    print(
        "facts",
        k_facts,
        "weight",
        w,
        s["recall@5"],
        s["recall@10"],
        s["all_recall@10"],
        {h: (r["recall@5"], r["all_recall@10"]) for h, r in s["by_hops"].items()},
        flush=True,
    )
