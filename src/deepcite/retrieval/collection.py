"""A named collection: ingestion (load → chunk → embed → index) and search, over one store and embedder.

Usage::

    import deepcite

    col = deepcite.open_collection("papers")
    col.ingest("corpus.jsonl")
    for hit in col.search("statins and muscle pain", mode="hybrid", k=5):
        print(hit.rank, hit.score, hit.chunk.title)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

import numpy as np

from deepcite.config import Settings, get_settings
from deepcite.errors import CollectionNotFoundError, IngestError, InputError
from deepcite.ingest.chunker import chunk_reads
from deepcite.ingest.formats import InputFormat, detect_format, document_files
from deepcite.ingest.loaders import LoadProblem, iter_documents
from deepcite.ingest.originals import OriginalsStore
from deepcite.ingest.readers import MEDIA_TYPES, ReadDocument, ReadResult
from deepcite.ingest.report import (
    FileProgressCallback,
    FileReport,
    FileStatus,
    IngestProgress,
    IngestReport,
    ProgressCallback,
    TripleCounts,
    read_file_report,
)
from deepcite.models import Chunk, Document, Filters, FusionMethod, SearchHit, SearchMode
from deepcite.retrieval.embedders import Embedder, get_embedder
from deepcite.retrieval.fusion import reciprocal_rank_fusion
from deepcite.retrieval.graph import EntityGraph, GraphStats, GraphWalk, GraphWalker
from deepcite.retrieval.graph.triples import PassageFacts, TripleCache, TripleExtractor
from deepcite.retrieval.store import SearchStore, open_store

log = logging.getLogger(__name__)

OnError = Literal["skip", "fail"]
FileRead = tuple[FileReport, Path, ReadResult]  # a file read: its report, its path, what was read


def passage_text(chunk: Chunk) -> str:
    """The text a chunk is embedded with: its title, then its text."""
    return f"{chunk.title}. {chunk.text}" if chunk.title else chunk.text


@dataclass
class WritePlan:
    """One batch's write: the chunks of its new or changed documents (``changed``, their ids) and every
    document's chunk count."""

    chunks: list[Chunk]
    changed: set[str]
    counts: dict[str, int]

    @property
    def texts(self) -> list[str]:
        """The texts the chunks are embedded with."""
        return [passage_text(c) for c in self.chunks]


class Collection:
    """One collection of chunks in a :class:`SearchStore`, embedded with one :class:`Embedder`."""

    def __init__(
        self, name: str, store: SearchStore, settings: Settings, embedder: Embedder | None = None
    ) -> None:
        self.name = name
        self.store = store
        self.settings = settings
        self._embedder = embedder
        self._graph_walker: GraphWalker | None = None

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
        on_progress: FileProgressCallback | None = None,
        ray: str | None = None,
    ) -> IngestReport:
        """Load, chunk, embed and index ``source`` (a path in any supported format, or Documents).

        Idempotent: chunk ids are stable, so a re-run writes nothing new, and an interrupted run
        re-started completes without duplicates. A document whose text changed is replaced whole.
        ``on_error="fail"`` (the default) checks the whole input before writing anything and raises
        :class:`IngestError` naming file and line; ``"skip"`` writes the good records and reports the rest.
        A folder (or a file that is not a corpus of records) goes through :meth:`ingest_files`, which calls
        ``on_progress`` as each file is done. ``ray`` runs the reading, chunking and embedding on Ray
        (the ``ray`` extra): ``"local"`` starts Ray on this machine (or joins the one this process has
        started), any other value is a cluster address for ``ray.init`` (``"auto"``,
        ``"ray://head:10001"``); the store is written by this process, so the result is the same.
        """
        if on_error not in ("skip", "fail"):
            raise InputError(f"on_error must be 'skip' or 'fail', not {on_error!r}")
        if isinstance(source, (str, Path)):
            path = Path(source)
            kind = InputFormat.from_str(fmt)
            kind = detect_format(path) if kind is InputFormat.AUTO else kind
            if kind in (InputFormat.FILES, InputFormat.TEXT):
                iter_documents(path, kind)  # raises at once for a missing path or an empty folder
                files = document_files(path)
                base = path.parent if path.is_file() else path
                return self.ingest_files(
                    files,
                    names=[f.relative_to(base).as_posix() for f in files],
                    on_error=on_error,
                    batch_docs=batch_docs,
                    progress=progress,
                    on_progress=on_progress,
                    ray=ray,
                )
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
        batches = self._document_batches(source, fmt, batch_docs, report)
        if ray is not None:
            from deepcite.ingest.distributed import RayIngest

            with RayIngest.start(self, ray, embedder=get_embedder) as pool:
                pool.write_documents(batches, report, progress)
            return self._finish(report, started)
        self.store.create_collection(self.name, dense_dim=self.embedder.dim)
        for batch in batches:
            self._write_batch(batch, report)
            if progress:
                progress(report.documents, report.written)
        return self._finish(report, started)

    def _document_batches(
        self, source: str | Path | Iterable[Document], fmt: str, batch_docs: int, report: IngestReport
    ) -> Iterator[list[Document]]:
        """The documents of ``source`` in batches of ``batch_docs`` to write together; the records that
        could not be read go to the report's ``skipped``."""
        batch: list[Document] = []
        for item in self._documents(source, fmt):
            if isinstance(item, LoadProblem):
                report.skipped.append(item)
                continue
            batch.append(item)
            if len(batch) >= batch_docs:
                yield batch
                batch = []
        if batch:
            yield batch

    def _finish(self, report: IngestReport, started: float) -> IngestReport:
        """Optimise the index when anything was written and stamp the report's total time."""
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

    def _write_batch(self, docs: Sequence[Document | ReadDocument], report: IngestReport) -> WritePlan:
        """Chunk, embed and index ``docs``; returns what was written."""
        reads = [d if isinstance(d, ReadDocument) else ReadDocument(d) for d in docs]
        plan = self._plan_write(chunk_reads(reads, self.settings.chunker), len(reads), report)
        if plan.chunks:
            t0 = time.perf_counter()
            vectors = self.embedder.encode(plan.texts, kind="passage")
            report.embed_seconds += time.perf_counter() - t0
            self._store_chunks(plan, vectors, report)
        return plan

    def _plan_write(
        self, chunks_by_doc: dict[str, list[Chunk]], documents: int, report: IngestReport
    ) -> WritePlan:
        """What one batch of ``documents`` writes: the chunks of its new or changed documents (the stored
        chunks of a changed document are deleted here: it is replaced whole). Unchanged documents are
        counted in the report and left alone, so a re-run embeds nothing it already stored."""
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
        report.documents += documents
        report.chunks += len(all_ids)
        counts = {doc_id: len(chunks) for doc_id, chunks in chunks_by_doc.items()}
        return WritePlan(to_write, set(new_or_changed), counts)

    def _store_chunks(self, plan: WritePlan, vectors: np.ndarray, report: IngestReport) -> None:
        """Index a batch's chunks with their vectors (one per chunk, in order). LLM triples (when on) are
        extracted first: an ingest killed while the LLM reads leaves the batch unwritten, so a re-run takes
        it up again, its passages' replies read back from the cache."""
        t = time.perf_counter()
        facts = self._passage_facts(plan.chunks, report)
        t0 = time.perf_counter()
        report.graph_seconds += t0 - t
        self.store.upsert(self.name, plan.chunks, vectors)
        t1 = time.perf_counter()
        if self.settings.graph.enabled:
            self.graph.add(plan.chunks, embed=self._embed_names, facts=facts)
        report.index_seconds += t1 - t0
        report.graph_seconds += time.perf_counter() - t1
        report.written += len(plan.chunks)

    # -- files ---------------------------------------------------------------------------------------
    @property
    def originals(self) -> OriginalsStore:
        """The original files of this collection's documents (served at their pages; apply ACL first)."""
        return OriginalsStore.for_collection(self.settings, self.name)

    def ingest_files(
        self,
        paths: Sequence[Path],
        *,
        names: Sequence[str] | None = None,
        acl: Sequence[str] = (),
        on_error: OnError = "fail",
        batch_docs: int | None = None,
        progress: ProgressCallback | None = None,
        on_progress: FileProgressCallback | None = None,
        ray: str | None = None,
    ) -> IngestReport:
        """Read, chunk, embed and index files of any readable type; every file is accounted for in the
        report's ``files`` (ingested, unchanged, or skipped with its reason).

        ``names`` are the files' names as the user knows them (relative paths, upload names; default: the
        file names); a file's document id is its name. ``acl`` groups are given to every document read.
        Each file is read in a bounded child process (``ingest`` settings). ``on_error="fail"`` reads
        every file first and raises :class:`IngestError` listing the failures before writing anything;
        ``"skip"`` goes on and reports them. ``on_progress`` gets an :class:`IngestProgress` as each file
        is done. The originals of ingested files are kept in :attr:`originals`. ``ray`` as in
        :meth:`ingest` (on a cluster, every node must see the files at the same paths).
        """
        if on_error not in ("skip", "fail"):
            raise InputError(f"on_error must be 'skip' or 'fail', not {on_error!r}")
        names = list(names) if names is not None else [p.name for p in paths]
        if len(names) != len(paths):
            raise InputError(f"{len(paths)} files but {len(names)} names; give one name per file")
        batch_docs = batch_docs or self.settings.embedder.ingest_batch_docs
        report = IngestReport(collection=self.name)
        started = time.perf_counter()
        if ray is not None:
            from deepcite.ingest.distributed import RayIngest

            with RayIngest.start(self, ray, embedder=get_embedder) as pool:
                reads = pool.read_files(paths, names, acl, report)
                if on_error == "fail":
                    reads = iter(list(reads))
                    self._refuse_failed_files(report)
                groups = self._file_groups(reads, batch_docs)
                pool.write_files(groups, report, len(paths), progress, on_progress)
            return self._finish(report, started)
        reads = (self._read(path, name, acl, report) for path, name in zip(paths, names, strict=True))
        if on_error == "fail":
            reads = iter(list(reads))  # read everything before writing anything
            self._refuse_failed_files(report)
        done = 0
        for group in self._file_groups(reads, batch_docs):
            plan = None
            if group[0][0].status is not FileStatus.SKIPPED:
                self.store.create_collection(self.name, dense_dim=self.embedder.dim)
                plan = self._write_batch([d for _, _, r in group for d in r.documents], report)
            done = self._files_written(group, plan, report, done, len(paths), progress, on_progress)
        return self._finish(report, started)

    @staticmethod
    def _refuse_failed_files(report: IngestReport) -> None:
        """Raise :class:`IngestError` listing the files and records that could not be read, if any."""
        failed = [f for f in report.files if f.status is FileStatus.SKIPPED]
        if failed or report.skipped:
            listing = "; ".join(
                [f"{f.file}: {f.message}" for f in failed]
                + [f"{p.path}:{p.line}: {p.reason}" for p in report.skipped]
            )
            raise IngestError(
                f"{len(failed) + len(report.skipped)} problems, nothing was written ({listing}). Fix "
                "or remove those files, or re-run with --on-error skip"
            )

    def _file_groups(self, reads: Iterable[FileRead], batch_docs: int) -> Iterator[list[FileRead]]:
        """The files read, grouped to be written together: a skipped file alone; files read are written
        once ``ingest.batch_chars`` of text (or ``batch_docs`` documents) are pending, so progress is
        reported as files are done."""
        pending: list[FileRead] = []
        for read in reads:
            if read[0].status is FileStatus.SKIPPED:
                yield [read]
                continue
            pending.append(read)
            if (
                sum(len(r.documents) for _, _, r in pending) >= batch_docs
                or sum(len(d.document.text) for _, _, r in pending for d in r.documents)
                >= self.settings.ingest.batch_chars
            ):
                yield pending
                pending = []
        if pending:
            yield pending

    def _read(self, path: Path, name: str, acl: Sequence[str], report: IngestReport) -> FileRead:
        file, result = read_file_report(path, name, acl, self.settings.ingest)
        self._account(file, result, report)
        return file, path, result

    @staticmethod
    def _account(file: FileReport, result: ReadResult, report: IngestReport) -> None:
        """Add a file read to the report: its entry, its reading time, the records it could not read."""
        report.read_seconds += file.seconds
        report.skipped.extend(result.problems)
        report.files.append(file)

    def _files_written(
        self,
        group: list[FileRead],
        plan: WritePlan | None,
        report: IngestReport,
        done: int,
        total: int,
        progress: ProgressCallback | None,
        on_progress: FileProgressCallback | None,
    ) -> int:
        """Finish the files of a group once its ``plan`` is written (``None`` for a skipped file): chunk
        counts, unchanged status, originals kept, progress; returns the number of files done."""
        for file, path, result in group:
            if plan is not None:
                file.chunks = sum(plan.counts.get(doc_id, 0) for doc_id in file.doc_ids)
                if not plan.changed.intersection(file.doc_ids):
                    file.status = FileStatus.UNCHANGED
                if result.kind and result.kind not in ("json", "jsonl") and len(file.doc_ids) == 1:
                    self.originals.put(
                        file.doc_ids[0], path, media_type=MEDIA_TYPES[result.kind], name=file.file
                    )
            done += 1
            if on_progress:
                on_progress(IngestProgress(done=done, total=total, file=file))
        if progress and plan is not None:
            progress(report.documents, report.written)
        return done

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
        if mode is SearchMode.GRAPH:
            return self.graph_hits(self.graph_walk(query, filters=filters), k, filters)
        if mode is SearchMode.HYBRID and self.settings.graph.enabled and self.settings.graph.in_hybrid:
            return self._hybrid_with_graph(query, k, filters, fusion)
        vector = None
        if mode is not SearchMode.BM25:
            vector = self.embed_query(query)
        return self.store.search(
            self.name, text=query, vector=vector, mode=mode, k=k, filters=filters, fusion=fusion
        )

    # -- the entity graph ----------------------------------------------------------------------------
    @property
    def graph(self) -> EntityGraph:
        """The collection's entity graph (SQLite beside the index)."""
        return EntityGraph.for_collection(self.settings, self.name)

    @property
    def triple_cache(self) -> TripleCache:
        """The LLM triples' cache of this collection (beside its graph)."""
        return TripleCache(self.graph.path.with_suffix(".triples.sqlite"))

    @cached_property
    def _triple_extractor(self) -> TripleExtractor | None:
        """The LLM triple extractor when ``graph.llm_triples`` is on and an LLM is configured (built once)."""
        if not self.settings.graph.llm_triples:
            return None
        from deepcite.llm.factory import get_llm  # the LLM SDK loads only when triples are on

        llm = get_llm(self.settings)
        if llm is None:
            log.warning("graph.llm_triples is on but no LLM is configured; offline entities only")
            return None
        return TripleExtractor(llm, self.triple_cache, self.settings.graph)

    def _passage_facts(
        self, chunks: Sequence[Chunk], report: IngestReport | None
    ) -> dict[str, PassageFacts] | None:
        """What the LLM reads in ``chunks`` (``graph.llm_triples``), counted in ``report``; None when off."""
        extractor = self._triple_extractor if self.settings.graph.enabled and chunks else None
        if extractor is None:
            return None
        found = extractor.extract(chunks)
        if report is not None:
            if report.triples is None:
                report.triples = TripleCounts()
            report.triples.add(found.counts)
        return found.facts

    def _embed_names(self, names: list[str]) -> np.ndarray:
        return self.embedder.encode(names, kind="passage")

    def rebuild_graph(self) -> GraphStats:
        """Build the entity graph again from every stored chunk (a collection ingested before graphs)."""
        graph = self.graph
        graph.clear()
        batch: list[Chunk] = []
        for chunk in self.store.scroll(self.name):
            batch.append(chunk)
            if len(batch) >= self.settings.embedder.ingest_batch_docs:
                graph.add(batch, embed=self._embed_names, facts=self._passage_facts(batch, None))
                batch = []
        graph.add(batch, embed=self._embed_names, facts=self._passage_facts(batch, None))
        return graph.stats()

    def graph_walk(
        self,
        query: str,
        *,
        seed_chunk_ids: Sequence[str] | None = None,
        filters: Filters | None = None,
        first_hop: Sequence[SearchHit] | None = None,
    ) -> GraphWalk:
        """Personalized PageRank from the query's entities and seed passages: ``seed_chunk_ids`` (best
        first) when given, else ``first_hop`` hits, else the top ``graph.first_hop_k`` of a
        ``graph.first_hop_mode`` search. The walk covers every passage; filters apply to the hits it becomes.
        """
        cfg = self.settings.graph
        if not cfg.enabled:
            raise InputError("the entity graph is off (graph.enabled = false); turn it on and re-ingest")
        if self._graph_walker is None:
            if not self.graph.exists() and self.store.has_collection(self.name):
                self.rebuild_graph()
            self._graph_walker = GraphWalker(self.graph)
        self._graph_walker.settings = cfg
        if seed_chunk_ids is None:
            if first_hop is None:
                first_hop = self.search(query, mode=cfg.first_hop_mode, k=cfg.first_hop_k, filters=filters)
            seed_chunk_ids = [h.chunk.chunk_id for h in first_hop[: cfg.first_hop_k]]
        seeds = {c: 1.0 / rank for rank, c in enumerate(seed_chunk_ids, start=1)}
        return self._graph_walker.walk(query, seed_passages=seeds)

    def graph_hits(self, walk: GraphWalk, k: int, filters: Filters | None) -> list[SearchHit]:
        """The walk's passages as graph-mode hits, keeping only chunks the filters (and ACL) allow."""
        ranked = walk.passages
        doc_ids = list(dict.fromkeys(p.doc_id for p in ranked))
        if filters is not None and filters.doc_ids is not None:
            doc_ids = [d for d in doc_ids if d in set(filters.doc_ids)]
        if not doc_ids:
            return []
        allowed = (filters or Filters()).model_copy(update={"doc_ids": doc_ids})
        chunks = {c.chunk_id: c for c in self.store.scroll(self.name, allowed)}
        kept = [p for p in ranked if p.chunk_id in chunks][:k]
        return [
            SearchHit(chunk=chunks[p.chunk_id], score=p.score, rank=rank, mode=SearchMode.GRAPH, graph=p.link)
            for rank, p in enumerate(kept, start=1)
        ]

    def _hybrid_with_graph(
        self, query: str, k: int, filters: Filters | None, fusion: FusionMethod
    ) -> list[SearchHit]:
        """Hybrid hits fused (RRF, ``search.rrf_k``) with the graph's, weighted ``graph.hybrid_weight``; the
        hybrid list's head seeds the walk."""
        cfg = self.settings.graph
        depth = max(k, cfg.first_hop_k, self.settings.search.default_k)
        hybrid = self.store.search(
            self.name,
            text=query,
            vector=self.embed_query(query),
            mode=SearchMode.HYBRID,
            k=depth,
            filters=filters,
            fusion=fusion,
        )
        graph = self.graph_hits(self.graph_walk(query, filters=filters, first_hop=hybrid), depth, filters)
        return self.fuse_with_graph(hybrid, graph, k)

    def fuse_with_graph(
        self, hybrid: Sequence[SearchHit], graph: Sequence[SearchHit], k: int
    ) -> list[SearchHit]:
        """RRF (``search.rrf_k``) of a hybrid list and a graph list, the graph's weighted ``graph.hybrid_weight``."""
        by_id = {h.chunk.chunk_id: h for h in hybrid} | {h.chunk.chunk_id: h for h in graph}
        fused = reciprocal_rank_fusion(
            [[h.chunk.chunk_id for h in hybrid], [h.chunk.chunk_id for h in graph]],
            self.settings.search.rrf_k,
            weights=[1.0, self.settings.graph.hybrid_weight],
        )
        return [
            SearchHit(
                chunk=by_id[c].chunk, score=score, rank=rank, mode=SearchMode.HYBRID, graph=by_id[c].graph
            )
            for rank, (c, score) in enumerate(fused[:k], start=1)
        ]

    @property
    def rrf_k(self) -> int:
        """The RRF constant of every fusion over this collection's lists (``search.rrf_k``)."""
        return self.settings.search.rrf_k

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
        """Delete a document's chunks and its stored original; returns the number of chunks deleted."""
        self.originals.remove(doc_id)
        self.graph.delete_documents([doc_id])
        return self.store.delete_document(self.name, doc_id)

    def drop(self) -> None:
        self.store.drop_collection(self.name)
        self.originals.clear()
        self.graph.clear()
        self.triple_cache.clear()

    def close(self) -> None:
        """Close the store (for a collection opened with its own store by :func:`open_collection`): its
        shards are unlocked for other processes."""
        self.store.close()


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
