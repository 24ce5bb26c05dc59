"""A collection whose BM25 terms an older tokenizer read (retrieval/bm25.py ``Bm25Stats.tokens``): `deepcite
collections check` says so, and the next ingest reads every stored passage's terms again."""

from __future__ import annotations

from pathlib import Path

from deepcite.config import Settings
from deepcite.engine import Engine
from deepcite.models import Document, SearchMode
from deepcite.retrieval.embedders import Embedder
from deepcite.service import SearchRequest
from deepcite.text import TOKENS_FORMAT

HYBRID = Document(
    id="hybrid", title="Hybrid ranking", text="We used λ = 1.1 to weigh the dense score against BM25."
)
STATINS = Document(id="statins", title="Statins", text="Statins lower LDL cholesterol in most adults.")


def test_older_terms_are_reported_and_read_again_by_the_next_ingest(tmp_path: Path, minilm: Embedder) -> None:
    with Engine(Settings(data_dir=tmp_path / "data"), embedder=minilm) as engine:
        engine.ingest("notes", [HYBRID])
        store = engine.resources.store
        assert store.terms_current("notes") and not engine.corpus.check("notes").warnings
        meta = store.read_meta("notes")
        meta.bm25.tokens = TOKENS_FORMAT - 1  # as an older deepcite left it
        store.write_meta("notes", meta)
        warnings = engine.corpus.check("notes").warnings
        assert any("BM25 terms" in w and "deepcite ingest" in w for w in warnings)
        engine.ingest("notes", [HYBRID, STATINS])  # the unchanged document's terms are read again too
        assert store.terms_current("notes") and not engine.corpus.check("notes").warnings
        found = engine.search(SearchRequest(query="lambda", collection="notes", mode=SearchMode.BM25, k=3))
        assert [p.doc_id for p in found.hits] == ["hybrid"]


def test_an_ingest_of_the_same_files_alone_reads_older_terms_again(tmp_path: Path, minilm: Embedder) -> None:
    """What `deepcite collections check` promises: the next ingest, its files again, with nothing new to write."""
    with Engine(Settings(data_dir=tmp_path / "data"), embedder=minilm) as engine:
        engine.ingest("notes", [HYBRID, STATINS])
        store = engine.resources.store
        meta = store.read_meta("notes")
        meta.bm25.tokens = TOKENS_FORMAT - 1  # as an older deepcite left it
        store.write_meta("notes", meta)
        report = engine.ingest("notes", [HYBRID, STATINS])
        assert (report.written, report.unchanged) == (0, 2)  # nothing new: every document unchanged
        assert store.terms_current("notes") and not engine.corpus.check("notes").warnings
