"""BM25 weighting, term ids and statistics; client-side fusion; the store factory."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from deepcite.config import Settings, StoreSettings
from deepcite.retrieval.bm25 import (
    Bm25Stats,
    bm25_text,
    document_terms,
    document_vector,
    idf_lucene,
    query_vector,
    term_id,
    tfc_robertson,
)
from deepcite.retrieval.edge_store import EdgeStore
from deepcite.retrieval.fusion import dbsf_normalize, distribution_based_score_fusion, reciprocal_rank_fusion
from deepcite.retrieval.qdrant_store import QdrantStore
from deepcite.retrieval.store import open_store
from deepcite.text import TOKENS_FORMAT


def test_term_ids_are_stable_32_bit_hashes() -> None:
    assert term_id("statin") == term_id("statin") != term_id("statins")
    # pinned: changing the hash would silently invalidate every stored index
    assert [term_id(t) for t in ("statin", "muscl", "pain")] == [1885972076, 997248324, 1341025681]
    assert all(0 <= term_id(t) < 2**32 for t in ("", "a", "x" * 1000, "café"))


def test_tfc_robertson_by_hand() -> None:
    # tf=2, dl=avgdl: 2*2.2/(2+1.2) = 1.375
    assert tfc_robertson(2, 10, 10, 1.2, 0.75) == pytest.approx(1.375)
    # b=0: length does not matter
    assert tfc_robertson(1, 100, 10, 1.2, 0.0) == tfc_robertson(1, 1, 10, 1.2, 0.0)
    # longer documents weigh a term less; weights saturate below k1+1
    assert tfc_robertson(1, 20, 10, 1.2, 0.75) < tfc_robertson(1, 10, 10, 1.2, 0.75)
    assert tfc_robertson(10_000, 10, 10, 1.2, 0.75) < 2.2


def test_idf_lucene_by_hand() -> None:
    assert idf_lucene(1, 4) == pytest.approx(math.log(1 + 3.5 / 1.5))
    assert idf_lucene(4, 4) > 0  # always positive, even for a term in every document


def test_document_and_query_vectors() -> None:
    text = bm25_text("Statins", "Statin therapy and muscle pain; the statins.", include_title=True)
    tf = document_terms(text)
    assert tf == {"statin": 3, "therapi": 1, "muscl": 1, "pain": 1}
    vec = document_vector(tf, avgdl=6.0, k1=1.2, b=0.75)
    assert vec.indices == sorted(vec.indices)
    weights = dict(zip(vec.indices, vec.values, strict=True))
    assert weights[term_id("statin")] == pytest.approx(tfc_robertson(3, 6, 6.0, 1.2, 0.75))
    q = query_vector("statin statins muscle of the")
    assert sorted(q.indices) == sorted({term_id("statin"), term_id("muscl")}) and q.values == [1.0, 1.0]
    assert bm25_text("T", "body", include_title=False) == "body"


def test_stats_drift_decides_reweighting() -> None:
    stats = Bm25Stats(k1=1.2, b=0.75, include_title=True, tokens=TOKENS_FORMAT)
    assert not stats.needs_reweight(1.2, 0.75, True, 0.05)  # empty
    stats.add([10, 10])
    assert stats.needs_reweight(1.2, 0.75, True, 0.05)  # never weighted
    stats.weight_avgdl = 10.0
    assert not stats.needs_reweight(1.2, 0.75, True, 0.05)
    stats.add([11])  # avgdl 10.33: 3.3% drift
    assert not stats.needs_reweight(1.2, 0.75, True, 0.05)
    stats.add([14])  # avgdl 11.25: 12.5% drift
    assert stats.needs_reweight(1.2, 0.75, True, 0.05)
    stats.remove([14, 11])
    assert stats.avgdl == 10.0 and not stats.needs_reweight(1.2, 0.75, True, 0.05)
    assert stats.needs_reweight(0.9, 0.4, True, 0.05)  # parameters changed
    assert replace(stats, tokens=TOKENS_FORMAT - 1).needs_reweight(1.2, 0.75, True, 0.05)  # another tokenizer
    assert not Bm25Stats.from_dict({"n_docs": 0}).needs_reweight(1.2, 0.75, True, 0.05)  # an old meta, empty
    assert Bm25Stats.from_dict(stats.to_dict()) == stats


def test_reciprocal_rank_fusion() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]], k=60)
    scores = dict(fused)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert [key for key, _ in fused][:2] == ["b", "a"]
    weighted = dict(reciprocal_rank_fusion([["a"], ["b"]], k=1, weights=[2.0, 1.0]))
    assert weighted == {"a": 1.0, "b": 0.5}
    assert dict(reciprocal_rank_fusion([["a", "a"]], k=0)) == {"a": 1.0}  # a repeat counts once
    with pytest.raises(ValueError, match="2 weights for 1"):
        reciprocal_rank_fusion([["a"]], k=60, weights=[1.0, 2.0])


def test_dbsf() -> None:
    assert (
        dbsf_normalize([]) == []
        and dbsf_normalize([3.0]) == [0.5]
        and dbsf_normalize([2.0, 2.0]) == [0.5, 0.5]
    )
    norm = dbsf_normalize([1.0, 2.0, 3.0])  # mean 2, sample std 1: [-1, 5] -> [0, 1]
    assert norm == pytest.approx([2 / 6, 3 / 6, 4 / 6])
    fused = dict(distribution_based_score_fusion([[("a", 1.0), ("b", 2.0), ("c", 3.0)], [("a", 9.0)]]))
    assert fused == pytest.approx({"a": 2 / 6 + 0.5, "b": 0.5, "c": 4 / 6})


def test_open_store_picks_the_backend(tmp_path: Path) -> None:
    edge = open_store(Settings(data_dir=tmp_path))
    assert isinstance(edge, EdgeStore) and edge.root == tmp_path / "edge"
    edge.close()
    local = open_store(Settings(data_dir=tmp_path, store=StoreSettings(backend="qdrant")))
    assert isinstance(local, QdrantStore)
    local.create_collection("c", dense_dim=None)
    assert (tmp_path / "qdrant").is_dir()
    local.close()
