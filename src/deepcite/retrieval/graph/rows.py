"""The entity graph read whole as arrays (:meth:`deepcite.retrieval.graph.store.EntityGraph.rows`): the input
of a walk matrix (:mod:`deepcite.retrieval.graph.ppr`), of the anchor text and of the alias table."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class GraphRows:
    """The whole graph as arrays, the input of a walk matrix: passage rows, entity rows, edges by row ids."""

    version: int
    passage_ids: np.ndarray  # int64, the passages' row ids
    chunk_ids: list[str]
    doc_ids: list[str]
    entity_ids: np.ndarray  # int64, the entities' row ids
    entity_keys: list[str]
    entity_names: list[str]
    mention_passage: np.ndarray  # int64 row ids, one per mention
    mention_entity: np.ndarray
    mention_is_title: np.ndarray  # bool
    synonym_a: np.ndarray
    synonym_b: np.ndarray
    synonym_similarity: np.ndarray
    # LLM triples (graph.llm_triples): subject and object entity row ids and the relation, one per triple
    relation_subject: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    relation_object: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    relation_text: list[str] = field(default_factory=list)
