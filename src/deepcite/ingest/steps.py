"""The steps of an ingest into one collection: read → chunk → dedupe ids → embed → write → graph.

:class:`IngestSteps` holds the steps that touch the collection (checking chunk ids against the store,
writing chunks and vectors, the entity graph and its LLM triples, accounting for files); reading
(:func:`~deepcite.ingest.report.read_file_report`), chunking (:func:`chunk_batch`) and embedding
(:func:`embed_texts`) are plain functions of the settings and the model, so they can run anywhere. The two executors of the same steps are the single-process
:class:`~deepcite.ingest.pipeline.IngestPipeline` and :class:`~deepcite.ingest.distributed.RayIngest`
(reading, chunking and embedding on Ray actors; the steps that touch the collection in the driver).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deepcite.config import ChunkerSettings
from deepcite.errors import IngestError, InputError
from deepcite.ingest.chunker import chunk_reads
from deepcite.ingest.readers import MEDIA_TYPES, ReadDocument, ReadResult
from deepcite.ingest.report import (
    FileProgressCallback,
    FileReport,
    FileStatus,
    IngestProgress,
    IngestReport,
    ProgressCallback,
)
from deepcite.models import Chunk, Document, Filters, TripleCounts, VectorSource
from deepcite.retrieval.collection import Collection, passage_text
from deepcite.retrieval.embedders import Embedder
from deepcite.retrieval.graph import GraphStats
from deepcite.retrieval.graph.triples import PassageFacts, TripleExtractor

FileRead = tuple[FileReport, Path, ReadResult]  # a file read: its report, its path, what was read
ChunksByDoc = dict[str, list[Chunk]]

log = logging.getLogger(__name__)


def chunk_batch(docs: Sequence[Document | ReadDocument], settings: ChunkerSettings) -> ChunksByDoc:
    """The chunk step: a batch of documents (records, or documents read from files) chunked, by document id."""
    return chunk_reads([d if isinstance(d, ReadDocument) else ReadDocument(d) for d in docs], settings)


@dataclass
class EmbedBudget:
    """The embedding time an ingest may spend (an upload's job: ``server.upload_embed_s``, named by ``setting``):
    :func:`embed_texts` embeds ``check_texts`` texts at a time and stops once ``limit_s`` is spent."""

    limit_s: float
    check_texts: int
    setting: str
    spent_s: float = 0.0


def embed_texts(
    embedder: Embedder, texts: list[str], budget: EmbedBudget | None = None
) -> tuple[np.ndarray, float]:
    """The embed step: the passage vectors of a batch's texts, and the seconds the model took. With a ``budget``,
    IngestError once it is spent (checked between slices of its ``check_texts``): nothing of the batch is
    written, what earlier batches wrote stays."""
    t0 = time.perf_counter()
    if budget is None:
        vectors = embedder.encode(texts, kind="passage")
    else:
        parts = []
        for start in range(0, len(texts), budget.check_texts):
            if budget.spent_s + time.perf_counter() - t0 >= budget.limit_s:
                raise IngestError(
                    f"embedding stopped at this upload's time limit ({budget.setting} = {budget.limit_s:g} s): the "
                    "files listed as done are in the collection, the others are not. Upload those in smaller parts "
                    "or fewer at a time, or raise the setting"
                )
            parts.append(embedder.encode(texts[start : start + budget.check_texts], kind="passage"))
        vectors = np.concatenate(parts)
    seconds = time.perf_counter() - t0
    if budget is not None:
        budget.spent_s += seconds
    return vectors, seconds


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


class IngestSteps:
    """The steps of an ingest that touch ``collection``: the chunk-id check, the write, the graph (with
    ``triples``, the LLM triple extractor, when ``graph.llm_triples`` is on), the files' accounting."""

    def __init__(self, collection: Collection, triples: TripleExtractor | None = None) -> None:
        self.collection = collection
        self.settings = collection.settings
        self.triples = triples

    def open(self, dim: int, source: VectorSource) -> None:
        """Create the collection for vectors of ``dim`` dimensions unless it exists, and make sure vectors
        made by ``source`` may be added to it: one collection never mixes two models or precisions (their
        cosines would not compare). ``source`` is recorded where none is yet, in the same atomic step as the
        check (two first ingests that start together cannot both record theirs)."""
        store, name = self.collection.store, self.collection.name
        store.create_collection(name, dense_dim=dim)
        recorded = store.claim_vector_source(name, source)
        if recorded is not None:
            if recorded.model is not None and recorded.model != source.model:
                fix = f"set embedder.model = {recorded.model!r}"
            else:
                fix = f'set embedder.precision = "{recorded.precision}" (DEEPCITE_EMBEDDER_PRECISION={recorded.precision})'
            raise InputError(
                f"collection {name!r} holds vectors of {recorded}; this ingest makes vectors of {source}, and "
                f"one collection never mixes two. To add to it, {fix}; or re-ingest it whole with --rebuild"
            )
        if store.refresh_terms(name):
            log.info("collection %r: its BM25 terms, read by an older tokenizer, were read again", name)
        if self.settings.graph.enabled and not self.collection.graph.current():
            log.info(
                "collection %r: its entity graph was read by older rules; rebuilding it from its chunks", name
            )
            self.rebuild_graph()

    def rebuild_graph(self) -> GraphStats:
        """Build the entity graph again from every stored chunk (LLM triples as at ingest, when on)."""
        col = self.collection
        return col.graph.rebuild(
            col.store.scroll(col.name),
            batch=self.settings.embedder.ingest_batch_docs,
            embed=col.embed,
            facts=lambda chunks: self.passage_facts(chunks, None),
        )

    # -- dedupe ids ------------------------------------------------------------------------------------
    def plan(self, chunks_by_doc: ChunksByDoc, documents: int, report: IngestReport) -> WritePlan:
        """What one batch of ``documents`` writes: the chunks of its new or changed documents (the stored
        chunks of a changed document are deleted here: it is replaced whole). Unchanged documents are
        counted in the report and left alone, so a re-run embeds nothing it already stored."""
        store, name = self.collection.store, self.collection.name
        all_ids = [c.chunk_id for chunks in chunks_by_doc.values() for c in chunks]
        existing = store.existing_ids(name, all_ids)
        to_write: list[Chunk] = []
        new_or_changed: list[str] = []
        for doc_id, chunks in chunks_by_doc.items():
            if {c.chunk_id for c in chunks} <= existing:
                report.unchanged += len(chunks)
                continue
            new_or_changed.append(doc_id)
            to_write.extend(chunks)
        # one count for the batch: a fresh ingest never looks documents up one by one
        if new_or_changed and store.count(name, Filters(doc_ids=new_or_changed)):
            for doc_id in new_or_changed:
                store.delete_document(name, doc_id)  # a changed document is replaced whole
        report.documents += documents
        report.chunks += len(all_ids)
        counts = {doc_id: len(chunks) for doc_id, chunks in chunks_by_doc.items()}
        return WritePlan(to_write, set(new_or_changed), counts)

    # -- write, graph ----------------------------------------------------------------------------------
    def write(self, plan: WritePlan, vectors: np.ndarray, report: IngestReport) -> None:
        """Index a batch's chunks with their vectors (one per chunk, in order), then add them to the entity
        graph. LLM triples (when on) are extracted first: an ingest killed while the LLM reads leaves the
        batch unwritten, so a re-run takes it up again, its passages' replies read back from the cache."""
        t = time.perf_counter()
        facts = self.passage_facts(plan.chunks, report)
        t0 = time.perf_counter()
        report.graph_seconds += t0 - t
        self.collection.store.upsert(self.collection.name, plan.chunks, vectors)
        t1 = time.perf_counter()
        if self.settings.graph.enabled:
            self.collection.graph.add(plan.chunks, embed=self.collection.embed, facts=facts)
        report.index_seconds += t1 - t0
        report.graph_seconds += time.perf_counter() - t1
        report.written += len(plan.chunks)

    def passage_facts(
        self, chunks: Sequence[Chunk], report: IngestReport | None
    ) -> dict[str, PassageFacts] | None:
        """What the LLM reads in ``chunks`` (``graph.llm_triples``), counted in ``report``; None when off."""
        if self.triples is None or not self.settings.graph.enabled or not chunks:
            return None
        found = self.triples.extract(chunks)
        if report is not None:
            if report.triples is None:
                report.triples = TripleCounts()
            report.triples.add(found.counts)
        return found.facts

    # -- files -----------------------------------------------------------------------------------------
    @staticmethod
    def account(file: FileReport, result: ReadResult, report: IngestReport) -> None:
        """Add a file read to the report: its entry, its reading time, the records it could not read."""
        report.read_seconds += file.seconds
        report.skipped.extend(result.problems)
        report.files.append(file)

    def file_groups(self, reads: Iterable[FileRead], batch_docs: int) -> Iterator[list[FileRead]]:
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

    def files_written(
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
                    self.collection.originals.put(
                        file.doc_ids[0], path, media_type=MEDIA_TYPES[result.kind], name=file.file
                    )
            done += 1
            if on_progress:
                on_progress(IngestProgress(done=done, total=total, name=file.file, file=file))
        if progress and plan is not None:
            progress(report.documents, report.written)
        return done

    @staticmethod
    def refuse_failed_files(report: IngestReport) -> None:
        """Raise :class:`IngestError` listing the files and records that could not be read, if any."""
        failed = [f for f in report.files if f.status is FileStatus.SKIPPED]
        if failed or report.skipped:
            listing = "; ".join(
                [f"{f.file}: {f.message}" for f in failed]
                + [f"{p.path}:{p.line}: {p.reason}" for p in report.skipped]
            )
            count = len(failed) + len(report.skipped)
            raise IngestError(
                f"{count} problem{'s' if count != 1 else ''}, nothing was written ({listing}). Fix "
                "or remove those files, or re-run with --on-error skip"
            )

    def finish(self, report: IngestReport, started: float) -> IngestReport:
        """Optimise the index when anything was written and stamp the report's total time."""
        if report.written:
            t0 = time.perf_counter()
            self.collection.store.optimize(self.collection.name)
            report.index_seconds += time.perf_counter() - t0
        report.seconds = time.perf_counter() - started
        return report
