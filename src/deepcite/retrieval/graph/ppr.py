"""Personalized PageRank over a collection's entity graph: passages ranked by where a walk from the
question's entities (and the first hop's best passages) comes to rest.

The idea is HippoRAG's (Gutiérrez et al., "HippoRAG: Neurobiologically Inspired Long-Term Memory for Large
Language Models", NeurIPS 2024): a question that names entity A reaches the passage about B through a
passage that mentions both, although no word of the question is in the passage about B. Here the graph is
built without an LLM (:mod:`deepcite.retrieval.graph.extract`), and the walk is plain power iteration on a
``scipy.sparse`` matrix cached until the graph's version changes.

Usage::

    walker = GraphWalker(EntityGraph.for_collection(settings, "papers"))
    walk = walker.walk("Who is the spouse of the performer of Green?", seed_passages={"c-12": 1.0})
    walk.passages[:5]   # [(chunk index, score, GraphLink), …]
    walk.entities[:5]   # [GraphEntity(name, score, seed), …]
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel

from deepcite.config import GraphSettings
from deepcite.models import GraphLink
from deepcite.retrieval.graph.extract import question_keys, sub_keys
from deepcite.retrieval.graph.rows import GraphRows
from deepcite.retrieval.graph.store import EntityGraph


class GraphEntity(BaseModel):
    """An entity node with its PPR score; ``seed`` when the question named it."""

    name: str
    score: float
    seed: bool = False
    passages: int = 0  # how many passages mention it


@dataclass(frozen=True)
class RankedPassage:
    """A passage of the walk: its chunk and document id, PPR score and how the walk reached it."""

    chunk_id: str
    doc_id: str
    score: float
    link: GraphLink


@dataclass(frozen=True)
class GraphWalk:
    """One walk's result: passages and entities by PPR score, and the question's entities it started from."""

    passages: list[RankedPassage]
    entities: list[GraphEntity]
    seeds: list[str]


def personalized_pagerank(
    spread: sp.csr_matrix,
    dangling: np.ndarray,
    seeds: np.ndarray,
    *,
    damping: float,
    max_iter: int,
    tol: float,
) -> np.ndarray:
    """PPR by power iteration: ``p ← (1 − d)·s + d·Tᵀp``, with a dangling node's mass returned to ``s``.

    ``spread`` is ``Tᵀ`` for a row-stochastic ``T``; ``dangling`` marks the nodes without edges (zero rows of
    ``T``); ``seeds`` sums to 1. Stops when the L1 change falls under ``tol`` or after ``max_iter`` steps
    (Page, Brin et al. 1999; Haveliwala 2002).
    """
    p = seeds.copy()
    for _ in range(max_iter):
        nxt = damping * (spread @ p)
        nxt += (1.0 - damping + damping * p[dangling].sum()) * seeds
        if np.abs(nxt - p).sum() < tol:
            return nxt
        p = nxt
    return p


@dataclass
class WalkMatrix:
    """The graph as one sparse matrix: passages are nodes ``0..P-1``, entities ``P..P+E-1``."""

    version: int
    weights: tuple[float, ...]  # the edge weights it was built with (a change rebuilds it)
    rows: GraphRows
    key_index: dict[str, int]  # entity key -> entity index (0-based among entities)
    chunk_index: dict[str, int]
    entity_df: np.ndarray  # passages that mention each entity
    is_title: np.ndarray  # entity index -> some passage has it as its title
    title_pairs: set[tuple[int, int]]  # (passage, entity) where the entity is the passage's own title
    transition: sp.csr_matrix
    spread: sp.csr_matrix  # the transition matrix transposed, what each step multiplies by
    dangling: np.ndarray  # nodes without edges
    # LLM triples: entity index -> (the other end's entity index, "subject relation object"), both ways
    relations: dict[int, list[tuple[int, str]]] = field(default_factory=dict)

    @property
    def n_passages(self) -> int:
        return len(self.rows.chunk_ids)

    @classmethod
    def build(cls, rows: GraphRows, cfg: GraphSettings) -> WalkMatrix:
        """Edges: passage–entity (title or mention), entity–entity co-occurrence, synonyms, partial names
        and LLM triples' relations; row-normalised."""
        n_p, n_e = len(rows.chunk_ids), len(rows.entity_keys)
        p_of = {int(pid): i for i, pid in enumerate(rows.passage_ids)}
        e_of = {int(eid): i for i, eid in enumerate(rows.entity_ids)}
        mp = np.fromiter(
            (p_of[int(x)] for x in rows.mention_passage), dtype=np.int64, count=len(rows.mention_passage)
        )
        me = np.fromiter(
            (e_of[int(x)] for x in rows.mention_entity), dtype=np.int64, count=len(rows.mention_entity)
        )
        weights = np.where(rows.mention_is_title, cfg.title_weight, cfg.mention_weight)
        mention = sp.csr_matrix((weights, (mp, me)), shape=(n_p, n_e))
        entity_df = np.bincount(me, minlength=n_e).astype(np.float64)
        entity_block = sp.csr_matrix((n_e, n_e))
        if cfg.cooccurrence_weight > 0 and n_p:
            binary = sp.csr_matrix((np.ones(len(mp)), (mp, me)), shape=(n_p, n_e))
            per_passage = np.asarray(binary.sum(axis=1)).ravel()
            # each passage spreads the same weight over its pairs, so a long list of names is no hub
            scale = sp.diags(1.0 / np.maximum(per_passage - 1.0, 1.0))
            co = (binary.T @ scale @ binary).tocsr()
            co.setdiag(0)
            co.eliminate_zeros()
            entity_block = entity_block + cfg.cooccurrence_weight * co
        if cfg.synonym_weight > 0 and len(rows.synonym_a):
            keep = [
                (e_of[int(a)], e_of[int(b)], s)
                for a, b, s in zip(rows.synonym_a, rows.synonym_b, rows.synonym_similarity, strict=True)
                if int(a) in e_of and int(b) in e_of
            ]
            if keep:
                a, b, s = (np.asarray(x) for x in zip(*keep, strict=True))
                syn = sp.csr_matrix((cfg.synonym_weight * s, (a, b)), shape=(n_e, n_e))
                entity_block = entity_block + syn + syn.T
        if cfg.partial_weight > 0:
            entity_block = entity_block + cfg.partial_weight * _partial_names(rows.entity_keys)
        titled = np.zeros(n_e, dtype=bool)
        titled[me[rows.mention_is_title]] = True
        if cfg.prefix_weight > 0 and cfg.aliases:
            prefix = _prefix_names(rows.entity_keys, titled, cfg.alias_prefix_min_words)
            entity_block = entity_block + cfg.prefix_weight * prefix
        relations = _relations(rows, e_of)
        if cfg.relation_weight > 0 and relations:
            pairs = [(a, b) for a, ends in relations.items() for b, _ in ends]
            a, b = (np.asarray(x) for x in zip(*pairs, strict=True))
            entity_block = entity_block + sp.csr_matrix(
                (np.full(len(a), cfg.relation_weight), (a, b)), shape=(n_e, n_e)
            )
        adjacency = (
            sp.bmat([[None, mention], [mention.T, entity_block]], format="csr")
            if n_p + n_e
            else sp.csr_matrix((0, 0))
        )
        if adjacency.shape != (n_p + n_e, n_p + n_e):  # bmat drops an empty block's size
            adjacency = sp.csr_matrix((n_p + n_e, n_p + n_e))
        degree = np.asarray(adjacency.sum(axis=1)).ravel()
        inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
        transition = (sp.diags(inverse) @ adjacency).tocsr().astype(np.float32)
        is_title = titled
        return cls(
            version=rows.version,
            weights=edge_weights(cfg),
            rows=rows,
            key_index={k: i for i, k in enumerate(rows.entity_keys)},
            chunk_index={c: i for i, c in enumerate(rows.chunk_ids)},
            entity_df=entity_df,
            is_title=is_title,
            title_pairs=set(
                zip(mp[rows.mention_is_title].tolist(), me[rows.mention_is_title].tolist(), strict=True)
            ),
            transition=transition,
            spread=transition.T.tocsr(),
            dangling=degree == 0,
            relations=relations,
        )


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the ``k`` best positive scores, best first (ties by index)."""
    best = np.argpartition(-scores, k)[:k] if k < len(scores) else np.arange(len(scores))
    best = best[scores[best] > 0]
    return best[np.lexsort((best, -scores[best]))]


def edge_weights(cfg: GraphSettings) -> tuple[float, ...]:
    """The settings a walk matrix is built from."""
    return (
        cfg.title_weight,
        cfg.mention_weight,
        cfg.cooccurrence_weight,
        cfg.synonym_weight,
        cfg.partial_weight,
        cfg.relation_weight,
        cfg.prefix_weight if cfg.aliases else 0.0,
        float(cfg.alias_prefix_min_words),
    )


def _relations(rows: GraphRows, e_of: dict[int, int]) -> dict[int, list[tuple[int, str]]]:
    """The triples as entity index -> [(other end, "subject relation object")], each triple both ways."""
    out: dict[int, list[tuple[int, str]]] = {}
    names = rows.entity_names
    for s_id, o_id, relation in zip(
        rows.relation_subject, rows.relation_object, rows.relation_text, strict=True
    ):
        a, b = e_of.get(int(s_id)), e_of.get(int(o_id))
        if a is None or b is None or a == b:
            continue
        text = f"{names[a]} {relation} {names[b]}"
        out.setdefault(a, []).append((b, text))
        out.setdefault(b, []).append((a, text))
    return out


def _partial_names(keys: list[str]) -> sp.csr_matrix:
    """Symmetric 0/1 edges from a multi-word name to the names it ends with ("Marla Quint" – "Quint")."""
    index = {k: i for i, k in enumerate(keys)}
    pairs = [
        (i, index[sub]) for i, key in enumerate(keys) if " " in key for sub in sub_keys(key) if sub in index
    ]
    n = len(keys)
    if not pairs:
        return sp.csr_matrix((n, n))
    a, b = (np.asarray(x) for x in zip(*pairs, strict=True))
    half = sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    return (half + half.T).tocsr()


def _prefix_names(keys: list[str], titled: np.ndarray, min_words: int) -> sp.csr_matrix:
    """Symmetric 0/1 edges from a name to the longest page name (a title or alias) of at least ``min_words``
    words it opens with ("West Chicago High School" – "West Chicago", an alias of "West Chicago, Illinois")."""
    index = {k: i for i, k in enumerate(keys)}
    pairs = []
    for i, key in enumerate(keys):
        words = key.split()
        for n in range(len(words) - 1, min_words - 1, -1):
            j = index.get(" ".join(words[:n]))
            if j is not None and titled[j]:
                pairs.append((i, j))
                break
    n = len(keys)
    if not pairs:
        return sp.csr_matrix((n, n))
    a, b = (np.asarray(x) for x in zip(*pairs, strict=True))
    half = sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    return (half + half.T).tocsr()


class GraphWalker:
    """Walks one collection's graph; the matrix is built on first use and again when the graph or the edge
    weights changed. ``settings`` may be replaced between walks (the collection hands in its own)."""

    def __init__(self, graph: EntityGraph) -> None:
        self.graph = graph
        self.settings = graph.settings
        self._matrix: WalkMatrix | None = None
        self._lock = threading.Lock()

    def matrix(self) -> WalkMatrix:
        """The current walk matrix (rebuilt when the graph's version or the edge weights moved on)."""
        key = (self.graph.version(), edge_weights(self.settings))
        with self._lock:
            if self._matrix is None or (self._matrix.version, self._matrix.weights) != key:
                self._matrix = WalkMatrix.build(self.graph.rows(), self.settings)
            return self._matrix

    def seed_entities(self, question: str, matrix: WalkMatrix) -> list[int]:
        """Entity indexes the question names: its names and word runs whose key is an entity of the graph."""
        keys = question_keys(question, max_words=self.settings.question_max_words)
        return list(dict.fromkeys(matrix.key_index[k] for k in keys if k in matrix.key_index))

    def walk(
        self,
        question: str,
        *,
        seed_passages: Mapping[str, float] | None = None,
        top_entities: int | None = None,
    ) -> GraphWalk:
        """PPR from the question's entities (weighted by specificity, 1 / passages mentioning them) and
        ``seed_passages`` (chunk id → weight); passages and entities by score, best first."""
        cfg = self.settings
        m = self.matrix()
        n_p = m.n_passages
        n = n_p + len(m.rows.entity_keys)
        entities = self.seed_entities(question, m)
        seeds = np.zeros(n, dtype=np.float32)
        if entities:
            spec = 1.0 / np.maximum(m.entity_df[entities], 1.0) if cfg.specificity else np.ones(len(entities))
            seeds[[n_p + e for e in entities]] = cfg.entity_seed_weight * spec / spec.sum()
        passages = {
            m.chunk_index[c]: w for c, w in (seed_passages or {}).items() if c in m.chunk_index and w > 0
        }
        if passages:
            total = sum(passages.values())
            for i, w in passages.items():
                seeds[i] += cfg.passage_seed_weight * w / total
        if not n or seeds.sum() <= 0:
            return GraphWalk([], [], [])
        seeds /= seeds.sum()
        scores = personalized_pagerank(
            m.spread, m.dangling, seeds, damping=cfg.damping, max_iter=cfg.max_iter, tol=cfg.tol
        )
        out = [
            RankedPassage(
                m.rows.chunk_ids[i], m.rows.doc_ids[i], float(scores[i]), self._link(m, int(i), scores, seeds)
            )
            for i in _top(scores[:n_p], cfg.max_candidates)
        ]
        seed_set = set(entities)
        order = _top(scores[n_p:], top_entities or cfg.top_entities)
        ranked_entities = [
            GraphEntity(
                name=m.rows.entity_names[e],
                score=float(scores[n_p + e]),
                seed=int(e) in seed_set,
                passages=int(m.entity_df[e]),
            )
            for e in order
            if scores[n_p + e] > 0
        ]
        return GraphWalk(out, ranked_entities, [m.rows.entity_names[e] for e in entities])

    def _link(self, m: WalkMatrix, i: int, scores: np.ndarray, seeds: np.ndarray) -> GraphLink:
        """The entity whose mass flowed most into passage ``i`` and the kind of edge it came by (``first_hop``
        for a seed passage); when the walk reached that entity (not a seed) by LLM triples, the triple whose
        other end sent it the most mass."""
        n_p = m.n_passages
        start, end = m.spread.indptr[i], m.spread.indptr[i + 1]  # row i of Tᵀ: the nodes pointing at i
        sources = m.spread.indices[start:end]
        flow = scores[sources] * m.spread.data[start:end]
        if seeds[i] > 0 or not len(flow):  # a seed of the walk: the first hop brought it in
            return GraphLink(entity=None, edge="first_hop", score=float(scores[i]))
        e = int(sources[int(np.argmax(flow))]) - n_p
        if (i, e) in m.title_pairs:
            edge = "title"
        elif m.is_title[e]:
            edge = "title_link"
        else:
            edge = "mention"
        relation = None
        if m.relations and seeds[n_p + e] == 0:
            flows = [(float(scores[n_p + b]), text) for b, text in m.relations.get(e, [])]
            best = max(flows, default=(0.0, None))
            relation = best[1] if best[0] > 0 else None
        return GraphLink(entity=m.rows.entity_names[e], edge=edge, score=float(scores[i]), relation=relation)
