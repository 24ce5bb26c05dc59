"""A named collection: ingestion (load → chunk → embed → index) and search, over one store and embedder.

Usage::

    import deepcite

    col = deepcite.open_collection("papers")
    col.ingest("corpus.jsonl")
    for hit in col.search("statins and muscle pain", mode="hybrid", k=5):
        print(hit.rank, hit.score, hit.chunk.title)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from deepcite.config import Settings, get_settings
from deepcite.errors import CollectionNotFoundError, IngestError, InputError
from deepcite.ingest.chunker import chunk_document
from deepcite.ingest.loaders import LoadProblem, iter_documents
from deepcite.models import Chunk, Document, Filters, FusionMethod, SearchHit, SearchMode
from deepcite.retrieval.embedder import Embedder
from deepcite.retrieval.embedders import get_embedder
from deepcite.retrieval.factory import open_store
from deepcite.retrieval.store import SearchStore

OnError = Literal["skip", "fail"]
ProgressCallback = Callable[[int, int], None]  # (documents done, chunks written)


@dataclass
class IngestReport:
    """What one ingest did: counts, what was skipped and why, and the time it took."""

    collection: str
    documents: int = 0
    chunks: int = 0
    written: int = 0
    unchanged: int = 0
    skipped: list[LoadProblem] = field(default_factory=list)
    seconds: float = 0.0
    embed_seconds: float = 0.0
    index_seconds: float = 0.0

    @property
    def docs_per_s(self) -> float:
        return self.documents / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "collection": self.collection,
            "documents": self.documents,
            "chunks": self.chunks,
            "written": self.written,
            "unchanged": self.unchanged,
            "skipped": [{"path": p.path, "line": p.line, "reason": p.reason} for p in self.skipped],
            "seconds": round(self.seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
            "index_seconds": round(self.index_seconds, 3),
            "docs_per_s": round(self.docs_per_s, 2),
        }


def passage_text(chunk: Chunk) -> str:
    """The text a chunk is embedded with: its title, then its text."""
    return f"{chunk.title}. {chunk.text}" if chunk.title else chunk.text


class Collection:
    """One collection of chunks in a :class:`SearchStore`, embedded with one :class:`Embedder`."""

    def __init__(
        self, name: str, store: SearchStore, settings: Settings, embedder: Embedder | None = None
    ) -> None:
        self.name = name
        self.store = store
        self.settings = settings
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        """The dense model, loaded on first use (a BM25-only search never loads it)."""
        if self._embedder is None:
            self._embedder = get_embedder(self.settings)
        return self._embedder

    # -- ingestion -----------------------------------------------------------------------------------
    def ingest(
        self,
        source: str | Path | Iterable[Document],
        *,
        fmt: str = "auto",
        on_error: OnError = "fail",
        batch_docs: int | None = None,
        progress: ProgressCallback | None = None,
    ) -> IngestReport:
        """Load, chunk, embed and index ``source`` (a path in any supported format, or Documents).

        Idempotent: chunk ids are stable, so a re-run writes nothing new, and an interrupted run
        re-started completes without duplicates. A document whose text changed is replaced whole.
        ``on_error="fail"`` (the default) checks the whole input before writing anything and raises
        :class:`IngestError` naming file and line; ``"skip"`` writes the good records and reports the rest.
        """
        if on_error not in ("skip", "fail"):
            raise InputError(f"on_error must be 'skip' or 'fail', not {on_error!r}")
        batch_docs = batch_docs or self.settings.embedder.ingest_batch_docs
        report = IngestReport(collection=self.name)
        started = time.perf_counter()
        if on_error == "fail" and isinstance(source, (str, Path)):
            problems = [item for item in iter_documents(source, fmt) if isinstance(item, LoadProblem)]
            if problems:
                first = problems[0]
                more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
                raise IngestError(
                    f"{first.reason}{more}; nothing was written. Fix the input or re-run with --on-error skip",
                    path=first.path,
                    line=first.line,
                )
        self.store.create_collection(self.name, dense_dim=self.embedder.dim)
        batch: list[Document] = []
        for item in self._documents(source, fmt):
            if isinstance(item, LoadProblem):
                report.skipped.append(item)
                continue
            batch.append(item)
            if len(batch) >= batch_docs:
                self._write_batch(batch, report)
                batch = []
                if progress:
                    progress(report.documents, report.written)
        if batch:
            self._write_batch(batch, report)
            if progress:
                progress(report.documents, report.written)
        if report.written:
            t0 = time.perf_counter()
            self.store.optimize(self.name)
            report.index_seconds += time.perf_counter() - t0
        report.seconds = time.perf_counter() - started
        return report

    @staticmethod
    def _documents(source: str | Path | Iterable[Document], fmt: str) -> Iterator[Document | LoadProblem]:
        if isinstance(source, (str, Path)):
            yield from iter_documents(source, fmt)
        else:
            yield from source

    def _write_batch(self, docs: Sequence[Document], report: IngestReport) -> None:
        chunks_by_doc = {doc.id: chunk_document(doc, self.settings.chunker) for doc in docs}
        all_ids = [c.chunk_id for chunks in chunks_by_doc.values() for c in chunks]
        existing = self.store.existing_ids(self.name, all_ids)
        to_write: list[Chunk] = []
        new_or_changed: list[str] = []
        for doc_id, chunks in chunks_by_doc.items():
            if {c.chunk_id for c in chunks} <= existing:
                report.unchanged += len(chunks)
                continue
            new_or_changed.append(doc_id)
            to_write.extend(chunks)
        # one count for the batch: a fresh ingest never looks documents up one by one
        if new_or_changed and self.store.count(self.name, Filters(doc_ids=new_or_changed)):
            for doc_id in new_or_changed:
                self.store.delete_document(self.name, doc_id)  # a changed document is replaced whole
        report.documents += len(docs)
        report.chunks += len(all_ids)
        if not to_write:
            return
        t0 = time.perf_counter()
        vectors = self.embedder.encode([passage_text(c) for c in to_write], kind="passage")
        t1 = time.perf_counter()
        self.store.upsert(self.name, to_write, vectors)
        t2 = time.perf_counter()
        report.embed_seconds += t1 - t0
        report.index_seconds += t2 - t1
        report.written += len(to_write)

    # -- search --------------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        mode: SearchMode | str | None = None,
        k: int | None = None,
        filters: Filters | None = None,
        fusion: FusionMethod | str | None = None,
    ) -> list[SearchHit]:
        """Top-``k`` chunks for ``query`` by BM25, dense vectors, or both fused engine-side."""
        if not query or not query.strip():
            raise InputError("the query is empty; give some words to search for")
        search = self.settings.search
        mode = SearchMode.from_str(mode or search.default_mode) if not isinstance(mode, SearchMode) else mode
        if not isinstance(fusion, FusionMethod):
            fusion = FusionMethod.from_str(fusion or search.fusion)
        k = search.default_k if k is None else k
        if k < 1:
            raise InputError(f"k must be at least 1, not {k}")
        vector = None
        if mode is not SearchMode.BM25:
            vector = self.embed_query(query)
        return self.store.search(
            self.name, text=query, vector=vector, mode=mode, k=k, filters=filters, fusion=fusion
        )

    def embed_query(self, query: str) -> list[float]:
        """The query's dense vector."""
        return self.embedder.encode([query], kind="query")[0].tolist()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Dense vectors of passages (for MMR and coverage similarity)."""
        return self.embedder.encode(list(texts), kind="passage")

    def vectors(self, chunks: Sequence[Chunk]) -> np.ndarray:
        """Dense vectors of these chunks: read back from the store, embedding only chunks it does not hold."""
        stored = self.store.dense_vectors(self.name, [c.chunk_id for c in chunks])
        missing = [c for c in chunks if c.chunk_id not in stored]
        if missing:
            for chunk, vector in zip(missing, self.embed([passage_text(c) for c in missing]), strict=True):
                stored[chunk.chunk_id] = vector.tolist()
        if not chunks:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.asarray([stored[c.chunk_id] for c in chunks], dtype=np.float32)

    def count(self, filters: Filters | None = None) -> int:
        return self.store.count(self.name, filters)

    def delete_document(self, doc_id: str) -> int:
        return self.store.delete_document(self.name, doc_id)

    def drop(self) -> None:
        self.store.drop_collection(self.name)


def open_collection(
    name: str,
    settings: Settings | None = None,
    *,
    create: bool = True,
    store: SearchStore | None = None,
    embedder: Embedder | None = None,
) -> Collection:
    """Open collection ``name`` (created on first ingest when ``create``; else it must exist)."""
    settings = settings or get_settings()
    store = store or open_store(settings)
    if not create and not store.has_collection(name):
        raise CollectionNotFoundError(name, store.list_collections())
    return Collection(name, store, settings, embedder)
