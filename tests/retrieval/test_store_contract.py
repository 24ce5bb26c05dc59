"""The SearchStore contract, run on both implementations: Qdrant Edge and qdrant-client (local mode)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from deepcite.errors import CollectionNotFoundError, InputError
from deepcite.models import Chunk, Filters, FusionMethod, SearchMode, VectorSource
from deepcite.retrieval.bm25 import SparseWeights, bm25_text, idf_lucene, tfc_robertson
from deepcite.retrieval.fusion import distribution_based_score_fusion, reciprocal_rank_fusion
from deepcite.retrieval.points import chunk_payload, point_id
from deepcite.retrieval.qdrant_engine_hooks import PointData
from deepcite.retrieval.store import SearchStore
from deepcite.text import tokenize

from .conftest import (
    BACKENDS,
    DIM,
    RECORDS,
    make_chunks,
    make_settings,
    open_backend,
    vector_for,
    vectors_for,
)

ALL_IDS = {c.chunk_id for c in make_chunks()}


def ids(hits) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


def test_implements_protocol(store) -> None:
    assert isinstance(store, SearchStore)


def test_create_list_has_drop(store) -> None:
    assert store.list_collections() == []
    store.create_collection("b-col", dense_dim=DIM)
    store.create_collection("a.col", dense_dim=None)
    assert store.list_collections() == ["a.col", "b-col"]
    assert store.has_collection("a.col") and not store.has_collection("zzz")
    store.create_collection("b-col", dense_dim=DIM)  # same dimension: a no-op
    with pytest.raises(InputError, match="dense dimension 8"):
        store.create_collection("b-col", dense_dim=DIM + 1)
    store.drop_collection("b-col")
    assert store.list_collections() == ["a.col"]
    with pytest.raises(CollectionNotFoundError, match="'b-col' does not exist.*a.col"):
        store.drop_collection("b-col")


@pytest.mark.parametrize("bad", ["", "has space", "../escape", "a/b", "-lead", "x" * 65, "trailing."])
def test_invalid_collection_names_are_refused(store, bad: str) -> None:
    with pytest.raises(InputError, match="invalid collection name"):
        store.create_collection(bad, dense_dim=DIM)


def test_unknown_collection_names_the_known_ones(loaded) -> None:
    for call in (
        lambda: loaded.count("nope"),
        lambda: loaded.upsert("nope", [], None),
        lambda: loaded.search("nope", text="statin", vector=None, mode=SearchMode.BM25, k=3),
        lambda: list(loaded.scroll("nope")),
    ):
        with pytest.raises(
            CollectionNotFoundError, match=r"'nope' does not exist \(known collections: papers\)"
        ):
            call()


def test_upsert_is_idempotent_and_replaces_by_chunk_id(loaded) -> None:
    chunks = make_chunks()
    assert loaded.count("papers") == len(chunks)
    loaded.upsert("papers", chunks, vectors_for(chunks))
    assert loaded.count("papers") == len(chunks)
    changed = chunks[0].model_copy(update={"text": "Completely new text about zebrafish regeneration."})
    loaded.upsert("papers", [changed], vectors_for([changed]))
    assert loaded.count("papers") == len(chunks)
    hits = loaded.search("papers", text="zebrafish", vector=None, mode=SearchMode.BM25, k=5)
    assert ids(hits) == [changed.chunk_id]
    assert hits[0].chunk == changed  # every field round-trips through the payload


def test_upsert_checks_vectors(loaded) -> None:
    chunks = make_chunks()[:2]
    with pytest.raises(InputError, match="2 dense vectors of dimension 8"):
        loaded.upsert("papers", chunks, vectors_for(chunks)[:1])
    with pytest.raises(InputError, match="got none"):
        loaded.upsert("papers", chunks, None)
    assert loaded.count("papers") == len(ALL_IDS)


def test_delete_document(loaded) -> None:
    assert loaded.delete_document("papers", "d01") == 2
    assert loaded.count("papers") == len(ALL_IDS) - 2
    assert loaded.count("papers", Filters(doc_ids=["d01"])) == 0
    assert loaded.delete_document("papers", "d01") == 0


def test_existing_ids(loaded) -> None:
    assert loaded.existing_ids("papers", ["d01#0", "d02#0", "d99#0"]) == {"d01#0", "d02#0"}
    assert loaded.existing_ids("papers", []) == set()


def test_dense_vectors_read_back(loaded) -> None:
    chunks = {c.chunk_id: c for c in make_chunks()}
    got = loaded.dense_vectors("papers", ["d01#0", "d02#0", "d99#0"])
    assert set(got) == {"d01#0", "d02#0"}
    expected = vectors_for([chunks["d01#0"], chunks["d02#0"]])
    assert np.allclose(np.asarray([got["d01#0"], got["d02#0"]]), expected, atol=1e-5)
    assert loaded.dense_vectors("papers", []) == {}


def test_scroll_returns_every_chunk_once(loaded) -> None:
    chunks = list(loaded.scroll("papers"))
    assert sorted(c.chunk_id for c in chunks) == sorted(ALL_IDS)
    assert {c.chunk_id for c in loaded.scroll("papers", Filters(sources=["nejm"]))} == {
        "d10#0",
        "d12#0",
        "d13#0",
    }


def _expected(predicate) -> set[str]:
    return {c.chunk_id for c in make_chunks() if predicate(c)}


FILTER_CASES = [
    (Filters(equals={"source": "cochrane"}), lambda c: c.source == "cochrane"),
    (Filters(equals={"source": ["nejm", "notes"]}), lambda c: c.source in ("nejm", "notes")),
    (Filters(equals={"journal": "NEJM"}), lambda c: c.metadata.get("journal") == "NEJM"),
    (
        Filters(equals={"metadata.journal": ["BMJ", "JCO"]}),
        lambda c: c.metadata.get("journal") in ("BMJ", "JCO"),
    ),
    (Filters(equals={"year": 2015}), lambda c: c.year == 2015),
    (Filters(equals={"position": 1}), lambda c: c.position == 1),
    (Filters(year_from=2016, year_to=2019), lambda c: c.year is not None and 2016 <= c.year <= 2019),
    (Filters(year_from=2020), lambda c: c.year is not None and c.year >= 2020),
    (Filters(year_to=2012), lambda c: c.year is not None and c.year <= 2012),
    (Filters(sources=["pubmed"]), lambda c: c.source == "pubmed"),
    (Filters(doc_ids=["d01", "d03"]), lambda c: c.doc_id in ("d01", "d03")),
    (Filters(acl_groups=[]), lambda c: not c.acl),
    (Filters(acl_groups=["onco"]), lambda c: not c.acl or "onco" in c.acl),
    (Filters(acl_groups=["neuro", "cardio"]), lambda c: not c.acl or {"neuro", "cardio"} & set(c.acl)),
    (
        Filters(sources=["pubmed"], year_from=2016, acl_groups=["onco"]),
        lambda c: c.source == "pubmed" and c.year >= 2016 and (not c.acl or "onco" in c.acl),
    ),
    (Filters(sources=[]), lambda c: False),
    (Filters(), lambda c: True),
]


@pytest.mark.parametrize(("filters", "predicate"), FILTER_CASES)
def test_filters_in_count_scroll_and_every_search_mode(loaded, filters: Filters, predicate) -> None:
    expected = _expected(predicate)
    assert loaded.count("papers", filters) == len(expected)
    assert {c.chunk_id for c in loaded.scroll("papers", filters)} == expected
    # "heart muscle statin ..." matches many chunks by BM25; dense/hybrid rank every chunk
    text = "statin muscle heart disease cancer sleep diet cold exercise antibiotics vitamin smoking coffee"
    for mode in SearchMode:
        for fusion in FusionMethod:
            hits = loaded.search(
                "papers", text=text, vector=vector_for("q"), mode=mode, k=50, filters=filters, fusion=fusion
            )
            assert set(ids(hits)) <= expected
            if mode is not SearchMode.BM25:
                assert set(ids(hits)) == expected


def test_bad_filters_are_refused(loaded) -> None:
    with pytest.raises(InputError, match="year range is empty"):
        loaded.count("papers", Filters(year_from=2020, year_to=2010))
    with pytest.raises(InputError, match="empty list of values"):
        loaded.count("papers", Filters(equals={"source": []}))
    with pytest.raises(
        ValueError, match="a value of type dict cannot be matched"
    ):  # refused by Filters itself
        loaded.count("papers", Filters(equals={"source": {"a": 1}}))


def test_acl_isolation(loaded) -> None:
    """A search given a user's groups never returns a chunk shared only with other groups."""
    for groups in ([], ["onco"], ["neuro"], ["cardio"], ["nobody"]):
        for mode in SearchMode:
            hits = loaded.search(
                "papers",
                text="statins heart memory sleep cancer microbiome",
                vector=vector_for("d05#0"),
                mode=mode,
                k=100,
                filters=Filters(acl_groups=groups),
            )
            for hit in hits:
                assert not hit.chunk.acl or set(hit.chunk.acl) & set(groups), (groups, hit.chunk.chunk_id)
    hits = loaded.search(
        "papers",
        text="sleep memory",
        vector=None,
        mode=SearchMode.BM25,
        k=5,
        filters=Filters(acl_groups=["onco"]),
    )
    assert "d05#0" not in ids(hits)
    hits = loaded.search(
        "papers",
        text="sleep memory",
        vector=None,
        mode=SearchMode.BM25,
        k=5,
        filters=Filters(acl_groups=["neuro"]),
    )
    assert ids(hits)[0] == "d05#0"


def test_bm25_search_ranks_by_term_match(loaded) -> None:
    hits = loaded.search("papers", text="statin myopathy", vector=None, mode=SearchMode.BM25, k=3)
    assert ids(hits)[0] == "d01#1"  # the only chunk with "myopathy" and two "statin"s
    assert [h.rank for h in hits] == [1, 2, 3]
    assert all(h.mode is SearchMode.BM25 for h in hits)
    assert hits[0].score > hits[1].score >= hits[2].score > 0
    assert loaded.search("papers", text="the of and", vector=None, mode=SearchMode.BM25, k=3) == []
    assert loaded.search("papers", text="xylophone", vector=None, mode=SearchMode.BM25, k=3) == []


def test_dense_search_finds_the_chunk_of_its_own_vector(loaded) -> None:
    for chunk_id in ("d03#0", "d12#0"):
        hits = loaded.search("papers", text="", vector=vector_for(chunk_id), mode=SearchMode.DENSE, k=3)
        assert ids(hits)[0] == chunk_id
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("fusion", list(FusionMethod))
def test_hybrid_is_the_fusion_of_bm25_and_dense(loaded, fusion: FusionMethod) -> None:
    """Hybrid inside Qdrant's engine equals client-side fusion of the BM25 and dense lists (RRF: 0-based
    ranks)."""
    text, vector = "statin myopathy heart", vector_for("d15#0")
    bm25 = loaded.search("papers", text=text, vector=None, mode=SearchMode.BM25, k=100)
    dense = loaded.search("papers", text=text, vector=vector, mode=SearchMode.DENSE, k=100)
    if fusion is FusionMethod.RRF:
        expected = reciprocal_rank_fusion([ids(bm25), ids(dense)], k=loaded.settings.search.rrf_k - 1)
    else:
        expected = distribution_based_score_fusion(
            [[(h.chunk.chunk_id, h.score) for h in r] for r in (bm25, dense)]
        )
    hits = loaded.search("papers", text=text, vector=vector, mode=SearchMode.HYBRID, k=100, fusion=fusion)
    assert {h.chunk.chunk_id: h.score for h in hits} == pytest.approx(dict(expected), rel=1e-4)
    assert all(h.mode is SearchMode.HYBRID for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    top = ids(loaded.search("papers", text=text, vector=vector, mode=SearchMode.HYBRID, k=3, fusion=fusion))
    assert top == ids(hits)[:3]


def test_rrf_uses_the_configured_k(make_store) -> None:
    """Rank 1 in both lists scores 2/k with Qdrant's 0-based RRF ranks: k must reach Qdrant."""
    for rrf_k in (2, 60):
        store = make_store(rrf_k=rrf_k)
        chunks = make_chunks()
        store.create_collection("c", dense_dim=DIM)
        store.upsert("c", chunks, vectors_for(chunks))
        hits = store.search(
            "c",
            text="zinc lozenges",
            vector=vector_for("d15#0"),
            mode=SearchMode.HYBRID,
            k=1,
            fusion=FusionMethod.RRF,
        )
        assert ids(hits) == ["d15#0"]
        assert hits[0].score == pytest.approx(2.0 / rrf_k, rel=1e-5)


@pytest.mark.parametrize("mode", [SearchMode.BM25, SearchMode.DENSE, SearchMode.HYBRID])
def test_equal_scores_are_cut_and_ordered_by_chunk_id(store, mode: SearchMode) -> None:
    # Qdrant's own order of equal scores follows storage and, for a fused search, changes between processes
    twins = [
        Chunk(
            chunk_id=f"twin{i:02d}", doc_id=f"twin{i:02d}", text="Zinc lozenges shorten colds.", title="Zinc"
        )
        for i in range(12)
    ]
    chunks = [*make_chunks(), *reversed(twins)]
    store.create_collection("c", dense_dim=DIM)
    vectors = np.stack([vector_for("twin" if c in twins else c.chunk_id) for c in chunks])
    store.upsert("c", chunks, vectors)
    vector = None if mode is SearchMode.BM25 else vector_for("twin")
    every = store.search("c", text="zinc lozenges", vector=vector, mode=mode, k=len(chunks))
    expected = ids(sorted(every, key=lambda h: (-h.score, h.chunk.chunk_id)))
    assert expected[:12] == [t.chunk_id for t in twins]  # the twelve twins tie on the best score
    for k in range(1, len(every) + 1):
        hits = store.search("c", text="zinc lozenges", vector=vector, mode=mode, k=k)
        assert ids(hits) == expected[:k]
        assert [h.rank for h in hits] == list(range(1, k + 1))


def test_hybrid_with_only_stop_words_falls_back_to_dense(loaded) -> None:
    hits = loaded.search("papers", text="the and of", vector=vector_for("d09#0"), mode=SearchMode.HYBRID, k=2)
    assert ids(hits)[0] == "d09#0"


def test_search_argument_errors(loaded) -> None:
    with pytest.raises(InputError, match="needs the query's dense vector"):
        loaded.search("papers", text="statin", vector=None, mode=SearchMode.DENSE, k=3)
    with pytest.raises(InputError, match="dimension 3"):
        loaded.search("papers", text="statin", vector=[0.1, 0.2, 0.3], mode=SearchMode.HYBRID, k=3)
    with pytest.raises(InputError, match="k must be at least 1"):
        loaded.search("papers", text="statin", vector=None, mode=SearchMode.BM25, k=0)


def test_bm25_only_collection(store) -> None:
    chunks = make_chunks()
    store.create_collection("lex", dense_dim=None)
    store.upsert("lex", chunks, None)
    assert store.count("lex") == len(chunks)
    hits = store.search("lex", text="varenicline smoking", vector=None, mode=SearchMode.BM25, k=2)
    assert ids(hits)[0] == "d09#0"
    with pytest.raises(InputError, match="BM25-only"):
        store.search("lex", text="smoking", vector=vector_for("x"), mode=SearchMode.HYBRID, k=2)
    with pytest.raises(InputError, match="BM25-only"):
        store.upsert("lex", chunks[:1], vectors_for(chunks[:1]))


# -- BM25 scores: a hand-computed reference, bm25s, the other backend, and a growing corpus ----------------


def reference_bm25(chunks, query: str, k1: float, b: float) -> dict[str, float]:
    """BM25 computed here from the formulas: Lucene IDF times Robertson tf saturation, one per query term."""
    docs = {c.chunk_id: Counter(tokenize(bm25_text(c.title, c.text, include_title=True))) for c in chunks}
    avgdl = sum(sum(tf.values()) for tf in docs.values()) / len(docs)
    df = Counter(t for tf in docs.values() for t in tf)
    scores = {}
    for cid, tf in docs.items():
        dl = sum(tf.values())
        s = sum(
            idf_lucene(df[t], len(docs)) * tfc_robertson(tf[t], dl, avgdl, k1, b)
            for t in set(tokenize(query))
            if t in tf
        )
        if s > 0:
            scores[cid] = s
    return scores


QUERIES = [
    "statin muscle pain",
    "heart attack risk",
    "cancer",
    "diet and cardiovascular events",
    "sleep memory",
]


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (0.9, 0.4)])
def test_bm25_scores_match_the_reference(make_store, k1: float, b: float) -> None:
    store = make_store(bm25_k1=k1, bm25_b=b)
    chunks = make_chunks()
    store.create_collection("c", dense_dim=None)
    store.upsert("c", chunks, None)
    for query in QUERIES:
        expected = reference_bm25(chunks, query, k1, b)
        hits = store.search("c", text=query, vector=None, mode=SearchMode.BM25, k=100)
        assert {h.chunk.chunk_id: h.score for h in hits} == pytest.approx(expected, rel=1e-5)


def test_bm25_scores_match_bm25s(store) -> None:
    """bm25s (method="lucene") omits the constant factor (k1 + 1): scores agree up to it."""
    bm25s = pytest.importorskip("bm25s")
    k1, b = store.settings.search.bm25_k1, store.settings.search.bm25_b
    chunks = make_chunks()
    store.create_collection("c", dense_dim=None)
    store.upsert("c", chunks, None)
    corpus = [tokenize(bm25_text(c.title, c.text, include_title=True)) for c in chunks]
    retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
    retriever.index(corpus, show_progress=False)
    for query in QUERIES:
        reference = retriever.get_scores(sorted(set(tokenize(query))))
        expected = {c.chunk_id: float(s) * (k1 + 1) for c, s in zip(chunks, reference, strict=True) if s > 0}
        hits = store.search("c", text=query, vector=None, mode=SearchMode.BM25, k=100)
        assert {h.chunk.chunk_id: h.score for h in hits} == pytest.approx(expected, rel=1e-5)


def test_both_backends_give_identical_bm25_rankings_and_scores(tmp_path: Path) -> None:
    chunks = make_chunks()
    results = {}
    for backend in BACKENDS:
        store = open_backend(backend, tmp_path / backend, make_settings(tmp_path))
        store.create_collection("c", dense_dim=DIM)
        store.upsert("c", chunks, vectors_for(chunks))
        results[backend] = [
            [
                (h.chunk.chunk_id, h.score)
                for h in store.search("c", text=q, vector=None, mode=SearchMode.BM25, k=20)
            ]
            for q in QUERIES
        ]
        store.close()
    for edge, qdrant in zip(results["edge"], results["qdrant"], strict=True):
        assert [cid for cid, _ in edge] == [cid for cid, _ in qdrant]
        assert [s for _, s in edge] == pytest.approx([s for _, s in qdrant], rel=1e-5)


GROWTH = [
    (
        "g01",
        "Long review",
        " ".join(["Statin trials reported muscle pain outcomes across many cohorts."] * 8),
        2023,
        "pubmed",
        [],
        {},
    ),
    (
        "g02",
        "Another long review",
        " ".join(["Heart attack risk fell with aspirin and statin therapy."] * 8),
        2023,
        "pubmed",
        [],
        {},
    ),
]


@pytest.mark.parametrize("tolerance", [0.0, 0.05])
def test_scores_stay_right_as_the_corpus_grows(make_store, tolerance: float) -> None:
    """Grow a corpus in steps (with long documents that move avgdl, and a delete): its BM25 scores equal
    those of a fresh index of the final corpus, within the drift the tolerance allows."""
    grown = make_store(bm25_avgdl_tolerance=tolerance)
    chunks = make_chunks()
    extra = make_chunks(GROWTH)
    grown.create_collection("c", dense_dim=None)
    grown.upsert("c", chunks[:6], None)
    grown.upsert("c", chunks[6:], None)
    grown.upsert("c", extra, None)
    grown.upsert("c", chunks[:3], None)  # re-upserting changes nothing
    assert grown.delete_document("c", "d02") == 1
    final = [c for c in chunks + extra if c.doc_id != "d02"]
    fresh = make_store(bm25_avgdl_tolerance=tolerance)
    fresh.create_collection("c", dense_dim=None)
    fresh.upsert("c", final, None)
    # tf saturation moves by at most the relative avgdl drift, so scores by at most that much
    rel = max(tolerance, 1e-5)
    for query in QUERIES + ["statin therapy muscle"]:
        g = {
            h.chunk.chunk_id: h.score
            for h in grown.search("c", text=query, vector=None, mode=SearchMode.BM25, k=50)
        }
        f = {
            h.chunk.chunk_id: h.score
            for h in fresh.search("c", text=query, vector=None, mode=SearchMode.BM25, k=50)
        }
        assert g.keys() == f.keys()
        for cid in f:
            assert math.isclose(g[cid], f[cid], rel_tol=rel), (query, cid, g[cid], f[cid])
    if tolerance == 0.0:
        exact = reference_bm25(
            final, "statin therapy muscle", grown.settings.search.bm25_k1, grown.settings.search.bm25_b
        )
        hits = grown.search("c", text="statin therapy muscle", vector=None, mode=SearchMode.BM25, k=50)
        assert {h.chunk.chunk_id: h.score for h in hits} == pytest.approx(exact, rel=1e-5)


def test_changing_k1_b_reweights_on_next_write(tmp_path: Path, backend: str) -> None:
    chunks = make_chunks()
    path = tmp_path / "store"
    store = open_backend(backend, path, make_settings(tmp_path, bm25_k1=1.2, bm25_b=0.75))
    store.create_collection("c", dense_dim=None)
    store.upsert("c", chunks[:-1], None)
    store.close()
    store = open_backend(backend, path, make_settings(tmp_path, bm25_k1=0.9, bm25_b=0.4))
    store.upsert("c", chunks[-1:], None)
    hits = store.search("c", text="statin muscle pain", vector=None, mode=SearchMode.BM25, k=50)
    assert {h.chunk.chunk_id: h.score for h in hits} == pytest.approx(
        reference_bm25(chunks, "statin muscle pain", 0.9, 0.4), rel=1e-5
    )
    store.close()


def test_terms_read_by_an_older_tokenizer_are_read_again_on_next_write(
    tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A collection stored before the tokenizer spelled Greek letters and folded accents (format 1 here) has no
    term "lambda" for "λ", nor "requet" for "requêtes"; its next write reads every stored text again."""
    from deepcite.retrieval import bm25
    from deepcite.text import STOP_WORDS, raw_tokens

    def ascii_only(text: str) -> list[str]:  # the tokenizer before format 2
        return [t for t in raw_tokens(text) if t not in STOP_WORDS]

    records = [
        ("g1", "Hybrid ranking", "We used λ = 1.1 to weigh the dense score.", 2020, "paper", [], {}),
        ("g2", "Résumés de requêtes", "Une requête résume une autre requête.", 2010, "paper", [], {}),
        ("g3", "Statins", "Statins lower LDL cholesterol.", 2015, "paper", [], {}),
    ]
    chunks = make_chunks(records)
    path = tmp_path / "store"
    with monkeypatch.context() as old:
        old.setattr(bm25, "tokenize", ascii_only)
        old.setattr(bm25, "TOKENS_FORMAT", 1)
        store = open_backend(backend, path, make_settings(tmp_path))
        store.create_collection("c", dense_dim=None)
        store.upsert("c", chunks[:2], None)
        store.close()
    store = open_backend(backend, path, make_settings(tmp_path))

    def found(query: str) -> list[str]:
        return [h.chunk.doc_id for h in store.search("c", text=query, vector=None, mode=SearchMode.BM25, k=5)]

    assert found("lambda") == [] and found("requetes") == []  # stored as format 1 read them
    store.upsert("c", chunks[2:], None)
    assert found("lambda") == ["g1"] and found("requetes") == ["g2"] and found("résumés") == ["g2"]
    store.close()


# -- persistence across processes ---------------------------------------------------------------------------

_CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
from retrieval.conftest import make_chunks, make_settings, open_backend, vectors_for
from deepcite.models import Filters, SearchMode
from pathlib import Path
store = open_backend({backend!r}, Path({path!r}), make_settings(Path({tmp!r})))
if {write!r}:
    chunks = make_chunks()
    store.create_collection("persist", dense_dim=8)
    store.upsert("persist", chunks, vectors_for(chunks))
    store.delete_document("persist", "d02")
out = {{
    "collections": store.list_collections(),
    "count": store.count("persist"),
    "public": store.count("persist", Filters(acl_groups=[])),
    "bm25": [[h.chunk.chunk_id, h.score] for h in store.search(
        "persist", text="statin heart attack", vector=None, mode=SearchMode.BM25, k=5)],
}}
store.close()
print(json.dumps(out))
"""


def _run_child(backend: str, path: Path, tmp: Path, write: bool) -> dict:
    code = _CHILD.format(
        tests=str(Path(__file__).parents[1]), backend=backend, path=str(path), tmp=str(tmp), write=write
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_persistence_across_processes(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "index"
    written = _run_child(backend, path, tmp_path, write=True)
    read = _run_child(backend, path, tmp_path, write=False)
    assert read == written
    assert read["collections"] == ["persist"]
    assert read["count"] == len(RECORDS) - 1
    assert read["bm25"] and all(cid.split("#")[0] != "d02" for cid, _ in read["bm25"])


def test_sentence_offsets_and_pages_round_trip_and_older_payloads_load_without_them(loaded) -> None:
    chunk = make_chunks()[0]
    text = "Statins lower LDL. Myalgia was rare."
    spanned = chunk.model_copy(
        update={"text": text, "sentence_spans": [(0, 18), (19, 36)], "page": 4, "sentence_pages": [4, 5]}
    )
    loaded.upsert("papers", [spanned], vectors_for([spanned]))
    (stored,) = [c for c in loaded.scroll("papers") if c.chunk_id == chunk.chunk_id]
    assert stored.sentence_spans == [(0, 18), (19, 36)]
    assert stored.sentences() == ["Statins lower LDL.", "Myalgia was rare."]
    assert stored.sentence_pages == [4, 5]
    assert stored.page_at(19) == 5
    # a collection written before offsets and pages were stored: the payload has no such keys
    payload = chunk_payload(spanned, 6)
    del payload["sentence_spans"], payload["sentence_pages"]
    dense = [float(x) for x in vectors_for([spanned])[0]]
    older = PointData(point_id(chunk.chunk_id), dense, SparseWeights(indices=[], values=[]), payload)
    loaded.qdrant_upsert("papers", [older])
    (stored,) = [c for c in loaded.scroll("papers") if c.chunk_id == chunk.chunk_id]
    assert stored.sentence_spans is None
    assert stored.sentences() == ["Statins lower LDL.", "Myalgia was rare."]  # split on use
    assert stored.sentence_pages is None
    assert stored.page_at(19) == 4  # the chunk's first page


def test_the_vector_source_is_recorded_and_listed(loaded) -> None:
    assert loaded.vector_source("papers") == VectorSource(model=None, precision="fp32")  # not recorded: fp32
    unrecorded = loaded.vector_source("papers")
    bf16 = VectorSource(model="all-MiniLM-L6-v2", precision="bf16")
    assert loaded.claim_vector_source("papers", bf16) == unrecorded  # refused: fp32 vectors are stored
    source = VectorSource(model="all-MiniLM-L6-v2", precision="fp32")
    assert loaded.claim_vector_source("papers", source) is None  # the unknown model is filled in
    assert loaded.vector_source("papers") == source
    assert loaded.describe("papers").vectors == source
    assert loaded.claim_vector_source("papers", bf16) == source
    chunks = make_chunks()[:1]
    loaded.upsert("papers", chunks, vectors_for(chunks))  # a write keeps the record
    assert loaded.vector_source("papers") == source
    loaded.create_collection("empty", dense_dim=8)
    assert loaded.vector_source("empty") is None


def test_first_ingests_that_start_together_record_one_vector_source(store) -> None:
    # the check and the record are one step: of threads claiming fp32 or bf16 for a new collection at once,
    # those of one precision pass and every other is told that precision is recorded
    store.create_collection("fresh", dense_dim=DIM)
    sources = [VectorSource(model="m", precision=p) for p in ("fp32", "bf16") * 4]
    barrier = threading.Barrier(len(sources))

    def claim(source: VectorSource) -> VectorSource | None:
        barrier.wait()
        return store.claim_vector_source("fresh", source)

    with ThreadPoolExecutor(len(sources)) as pool:
        answers = list(pool.map(claim, sources))
    winner = store.vector_source("fresh")
    assert winner in sources
    assert [a is None for a in answers] == [s == winner for s in sources]
    assert all(a == winner for a in answers if a is not None)
