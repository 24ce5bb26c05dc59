"""Triples at ingest (graph.llm_triples) from the real llama.cpp server (SmolLM2): the batch request is
accepted, the reply comes back through the server's schema mode and is counted passage by passage, what the
model found goes into the entity graph and the cache, and an unchanged passage is not asked again. The model's
reply must be used: at least one passage's triples come from it (replies thrown away fail here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcite.config import GraphSettings, Settings
from deepcite.ingest.pipeline import IngestPipeline
from deepcite.models import Document
from deepcite.retrieval.collection import open_collection
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.graph.triples import MISSING
from llm_real.conftest import LlamaServer

pytestmark = pytest.mark.real_llm

DOCS = [
    Document(
        id="green", title="Green (song)", text="Green is a 1998 song by Marla Quint, on the album Meadow."
    ),
    Document(
        id="quint", title="Marla Quint", text="Marla Quint is a Canadian singer who married Oskar Brandt."
    ),
]


def test_triples_are_extracted_counted_and_cached(
    tmp_path: Path, minilm: Embedder, llama: LlamaServer, make_client
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        llm=llama.settings(max_output_tokens=400),
        graph=GraphSettings(llm_triples=True, llm_triples_batch=2),
    )
    col = open_collection("songs", settings, embedder=minilm)
    client = make_client(max_output_tokens=400)
    pipeline = IngestPipeline(col, llm=client)
    report = pipeline.ingest(DOCS)
    assert len(client.calls) == 1
    triples = report.triples
    assert triples is not None
    assert (triples.asked, triples.requests, triples.cached) == (2, 1, 0)
    assert triples.extracted + sum(triples.failed.values()) == 2
    assert triples.extracted >= 1, triples.failed
    assert set(triples.failed) <= {
        "unusable reply",
        MISSING,
    }  # accepted, and never a timeout: only unfit JSON
    assert col.triple_cache.count() == triples.extracted
    pipeline.rebuild_graph()  # every passage again: the extracted ones from the cache
    again = pipeline.ingest(DOCS)  # nothing changed: nothing asked
    assert again.triples is None or again.triples.asked == 0
