"""The Collection facade over a real Edge index and the real MiniLM: ingest, idempotence, bad input, search."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deepcite.config import Settings
from deepcite.errors import CollectionNotFoundError, IngestError, InputError
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Document, Filters, SearchMode
from deepcite.retrieval.collection import open_collection, passage_text

pytestmark = pytest.mark.slow

DOCS = [
    Document(
        id="af", title="Atrial fibrillation", text="Anticoagulants lower stroke risk in atrial fibrillation."
    ),
    Document(
        id="st", title="Statins", text="Statins lower LDL cholesterol and can cause muscle pain.", year=2019
    ),
    Document(
        id="vd",
        title="Vitamin D",
        text="Vitamin D improves bone density in deficient adults.",
        acl=["team-a"],
    ),
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_ingest_is_idempotent_and_searchable(settings: Settings, minilm) -> None:
    col = open_collection("notes", settings, embedder=minilm)
    first = IngestPipeline(col).ingest(DOCS)
    assert (first.documents, first.written, first.unchanged) == (3, 3, 0)
    second = IngestPipeline(col).ingest(DOCS)
    assert (second.written, second.unchanged) == (0, 3)
    assert col.count() == 3
    for mode in SearchMode:
        hits = col.search("muscle pain from cholesterol drugs", mode=mode, k=2)
        assert hits[0].chunk.doc_id == "st", mode


def test_changed_document_is_replaced_whole(settings: Settings, minilm) -> None:
    col = open_collection("notes", settings, embedder=minilm)
    IngestPipeline(col).ingest(DOCS)
    changed = DOCS[1].model_copy(
        update={"text": "Statins reduce cardiovascular events in secondary prevention."}
    )
    report = IngestPipeline(col).ingest([changed])
    assert report.written == 1
    assert col.count() == 3
    texts = [c.text for c in col.store.scroll("notes", Filters(doc_ids=["st"]))]
    assert texts == [changed.text]


def test_bad_line_fails_before_anything_is_written(tmp_path: Path, settings: Settings, minilm) -> None:
    good = {"id": "ok", "title": "t", "text": "Some text about the heart."}
    path = write_jsonl(tmp_path / "in.jsonl", [good])
    with path.open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    col = open_collection("strict", settings, embedder=minilm)
    with pytest.raises(IngestError) as err:
        IngestPipeline(col).ingest(path)
    assert f"{path}:2" in str(err.value)
    assert not col.store.has_collection("strict") or col.count() == 0

    report = IngestPipeline(col).ingest(path, on_error="skip")
    assert report.written == 1
    assert [(p.line, "JSON" in p.reason or "json" in p.reason) for p in report.skipped] == [(2, True)]


def test_unknown_collection_names_the_known_ones(settings: Settings, minilm) -> None:
    IngestPipeline(open_collection("alpha", settings, embedder=minilm)).ingest(DOCS[:1])
    with pytest.raises(CollectionNotFoundError, match="alpha"):
        open_collection("beta", settings, create=False, embedder=minilm)


def test_search_rejects_empty_query_and_bad_k(settings: Settings, minilm) -> None:
    col = open_collection("notes", settings, embedder=minilm)
    IngestPipeline(col).ingest(DOCS)
    with pytest.raises(InputError):
        col.search("   ")
    with pytest.raises(InputError):
        col.search("statins", k=0)
    with pytest.raises(InputError, match="bm25, dense, hybrid"):
        col.search("statins", mode="sparse")


def test_acl_groups_never_leak(settings: Settings, minilm) -> None:
    col = open_collection("notes", settings, embedder=minilm)
    IngestPipeline(col).ingest(DOCS)
    outsider = col.search("vitamin D bone density", k=10, filters=Filters(acl_groups=["team-b"]))
    assert "vd" not in {h.chunk.doc_id for h in outsider}
    member = col.search("vitamin D bone density", k=10, filters=Filters(acl_groups=["team-a"]))
    assert member[0].chunk.doc_id == "vd"


def test_index_persists_across_processes(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = {"DEEPCITE_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    corpus = write_jsonl(tmp_path / "c.jsonl", [d.model_dump(exclude_none=True) for d in DOCS])
    cli = [sys.executable, "-m", "deepcite.cli"]
    subprocess.run(
        [*cli, "ingest", str(corpus), "--collection", "p"], check=True, env=env, capture_output=True
    )
    out = subprocess.run(
        [*cli, "search", "stroke prevention", "--collection", "p", "--mode", "bm25", "--json"],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    found = json.loads(out.stdout)
    assert found["mode"] == "bm25" and found["hits"][0]["doc_id"] == "af"


def test_eval_retrieval_reports_every_mode(tmp_path: Path) -> None:
    beir = Path(__file__).resolve().parent.parent / "fixtures" / "beir_mini"
    env = {"DEEPCITE_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    out = tmp_path / "eval.json"
    subprocess.run(
        [sys.executable, "-m", "deepcite.cli", "eval", "retrieval", "--beir", str(beir), "--out", str(out)],
        check=True,
        env=env,
        capture_output=True,
    )
    results = json.loads(out.read_text())
    assert set(results) == {"bm25", "dense", "hybrid"}
    for row in results.values():
        assert row["queries"] == 4  # q5 has no judgements
        assert 0.5 < row["ndcg@10"] <= 1.0
        assert set(row) >= {"ndcg@10", "recall@100", "mrr@10", "queries", "seconds"}


def test_vectors_are_read_back_not_re_embedded(settings: Settings, minilm) -> None:
    col = open_collection("notes", settings, embedder=minilm)
    IngestPipeline(col).ingest(DOCS)
    chunks = list(col.store.scroll("notes"))
    stored = col.vectors(chunks)
    fresh = col.embed([passage_text(c) for c in chunks])
    assert stored.shape == (3, minilm.dim)
    assert abs(stored - fresh).max() < 1e-5
    outside = chunks[0].model_copy(update={"chunk_id": "not-stored"})
    assert col.vectors([outside]).shape == (1, minilm.dim)
