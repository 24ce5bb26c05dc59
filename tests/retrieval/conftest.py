"""Fixtures for the retrieval tests: a small hand-written corpus, seeded dense vectors, both stores."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from deepcite.config import SearchSettings, Settings, StoreSettings
from deepcite.models import Chunk
from deepcite.retrieval.edge_store import EdgeStore
from deepcite.retrieval.qdrant_engine_store import QdrantEngineStore
from deepcite.retrieval.qdrant_store import QdrantStore

DIM = 8

# (doc_id, title, text, year, source, acl, metadata): short medical abstracts written for these tests.
RECORDS: list[tuple[str, str, str, int | None, str, list[str], dict]] = [
    (
        "d01",
        "Statins and muscle pain",
        "Statin therapy is associated with muscle pain and myopathy in a minority of "
        "patients. Muscle symptoms rarely lead to stopping treatment.",
        2015,
        "pubmed",
        [],
        {"journal": "BMJ"},
    ),
    (
        "d01",
        "Statins and muscle pain",
        "Creatine kinase levels rise in statin myopathy. Muscle pain resolves after "
        "withdrawal of the statin.",
        2015,
        "pubmed",
        [],
        {"journal": "BMJ"},
    ),
    (
        "d02",
        "Aspirin for primary prevention",
        "Daily aspirin reduces the risk of heart attack but increases gastrointestinal bleeding.",
        2018,
        "pubmed",
        [],
        {"journal": "NEJM"},
    ),
    (
        "d03",
        "Vitamin D and bone health",
        "Vitamin D supplementation improves bone mineral density in older adults with deficiency.",
        2012,
        "pubmed",
        [],
        {"journal": "Lancet"},
    ),
    (
        "d04",
        "Exercise and depression",
        "Aerobic exercise reduces symptoms of depression in randomized trials. "
        "Running three times a week helped most.",
        2020,
        "cochrane",
        [],
        {"journal": "Cochrane"},
    ),
    (
        "d05",
        "Sleep and memory",
        "Sleep deprivation impairs memory consolidation. Slow wave sleep supports learning.",
        2019,
        "pubmed",
        ["neuro"],
        {"journal": "Nature"},
    ),
    (
        "d06",
        "Metformin and cancer",
        "Metformin use is associated with lower cancer incidence in diabetic patients "
        "in observational studies.",
        2016,
        "pubmed",
        ["onco"],
        {"journal": "JCO"},
    ),
    (
        "d07",
        "Coffee and liver disease",
        "Coffee consumption is linked to a lower risk of liver cirrhosis and liver cancer.",
        2017,
        "cochrane",
        [],
        {"journal": "Hepatology"},
    ),
    (
        "d08",
        "Antibiotics and gut microbiome",
        "Broad spectrum antibiotics disrupt the gut microbiome for months after treatment.",
        2021,
        "pubmed",
        ["onco", "neuro"],
        {"journal": "Cell"},
    ),
    (
        "d09",
        "Smoking cessation",
        "Varenicline doubles the rate of smoking cessation compared with placebo.",
        2014,
        "cochrane",
        [],
        {"journal": "Cochrane"},
    ),
    (
        "d10",
        "Blood pressure targets",
        "Intensive blood pressure control below 120 mmHg reduced cardiovascular events and heart failure.",
        2015,
        "nejm",
        [],
        {"journal": "NEJM"},
    ),
    (
        "d11",
        "Statins in the elderly",
        "Statins for primary prevention in adults over 75 show uncertain benefit for "
        "heart attack and stroke.",
        2022,
        "pubmed",
        ["cardio"],
        {"journal": "JAMA"},
    ),
    (
        "d12",
        "Omega-3 and heart disease",
        "Omega-3 fatty acid supplements did not reduce heart disease events in a large trial.",
        2019,
        "nejm",
        [],
        {"journal": "NEJM"},
    ),
    (
        "d13",
        "Mediterranean diet",
        "A Mediterranean diet with olive oil reduced cardiovascular events compared with a low fat diet.",
        2013,
        "nejm",
        [],
        {"journal": "NEJM"},
    ),
    (
        "d14",
        "Untitled note",
        "Muscle cramps at night are common in older adults and rarely serious.",
        None,
        "notes",
        [],
        {},
    ),
    (
        "d15",
        "Zinc and the common cold",
        "Zinc lozenges may shorten the duration of the common cold.",
        2011,
        "cochrane",
        [],
        {"journal": "Cochrane"},
    ),
]


def make_chunks(records: list[tuple] = RECORDS, *, prefix: str = "") -> list[Chunk]:
    """Chunks of ``records``; ids depend only on content, so the same records give the same chunks."""
    chunks = []
    position: dict[str, int] = {}
    for doc_id, title, text, year, source, acl, metadata in records:
        pos = position.get(doc_id, 0)
        position[doc_id] = pos + 1
        chunks.append(
            Chunk(
                chunk_id=f"{prefix}{doc_id}#{pos}",
                doc_id=f"{prefix}{doc_id}",
                text=text,
                title=title,
                year=year,
                source=source,
                acl=acl,
                position=pos,
                metadata=metadata,
            )
        )
    return chunks


def vector_for(key: str, dim: int = DIM) -> np.ndarray:
    """A seeded random unit vector: the same key always gives the same vector."""
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    v = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def vectors_for(chunks: list[Chunk]) -> np.ndarray:
    return np.stack([vector_for(c.chunk_id) for c in chunks])


def make_settings(tmp_path: Path, **search: object) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        search=SearchSettings(**search),
        store=StoreSettings(upsert_batch=7),  # small batches exercise batching and scroll paging
    )


StoreFactory = Callable[..., QdrantEngineStore]
BACKENDS = ["edge", "qdrant"]


def open_backend(backend: str, path: Path, settings: Settings) -> QdrantEngineStore:
    if backend == "edge":
        return EdgeStore(path, settings)
    from qdrant_client import QdrantClient

    return QdrantStore(settings, QdrantClient(path=str(path)))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_store(tmp_path: Path, backend: str) -> Iterator[StoreFactory]:
    """Opens stores of the parametrized backend on fresh folders under tmp_path; closes them after."""
    opened: list[QdrantEngineStore] = []
    counter = iter(range(1000))

    def factory(**search: object) -> QdrantEngineStore:
        store = open_backend(
            backend, tmp_path / f"{backend}-{next(counter)}", make_settings(tmp_path, **search)
        )
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: StoreFactory) -> QdrantEngineStore:
    return make_store()


@pytest.fixture
def loaded(store: QdrantEngineStore) -> QdrantEngineStore:
    """A store holding collection "papers" with the fixture corpus and seeded dense vectors."""
    chunks = make_chunks()
    store.create_collection("papers", dense_dim=DIM)
    store.upsert("papers", chunks, vectors_for(chunks))
    return store
