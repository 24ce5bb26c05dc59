"""The corpus: document collections, ingest, removal, a document's passages and its stored original.

Usage::

    engine.corpus.ingest("papers", "pdfs/")                 # a file, a folder or Documents
    engine.corpus.collections()                             # names and chunk counts
    engine.corpus.document_passages("papers", doc_id)       # in reading order, ACL applied
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from deepcite.app.resources import Resources
from deepcite.config import Settings
from deepcite.errors import (
    CollectionNotFoundError,
    DeepciteError,
    ForbiddenError,
    InputError,
    NotFoundError,
    OwnershipConflictError,
    RequestError,
    document_not_found,
)
from deepcite.ingest.pipeline import IngestPipeline, OnError
from deepcite.ingest.report import FileProgressCallback, IngestReport, ProgressCallback
from deepcite.ingest.steps import EmbedBudget
from deepcite.models import Chunk, CollectionInfo, CollectionStats, Document, Filters
from deepcite.retrieval.check import CollectionCheck, check_collection
from deepcite.retrieval.collection import Collection
from deepcite.retrieval.embedders import embedder_precision
from deepcite.retrieval.filters import FILTER_FIELDS, check_filter_fields
from deepcite.retrieval.graph import EntityGraph
from deepcite.retrieval.integrity import require_space
from deepcite.retrieval.originals import OriginalsStore, StoredOriginal
from deepcite.service import Groups, restrict_filters


class Corpus:
    """The document collections of one store: each opened once, on first use."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self.settings: Settings = resources.settings
        self._collections: dict[str, Collection] = {}

    # -- collections --------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """The document collections (the practitioner directory's profile index is not one)."""
        internal = {self.settings.practitioners.collection}
        return sorted(n for n in self.resources.store.list_collections() if n not in internal)

    def collections(self, groups: Groups = None) -> list[CollectionInfo]:
        """The document collections with their chunk counts, read from each one's metadata: no collection is
        opened, so listing takes no lock (with ``groups``, the count of the chunks the caller may read opens
        it). A collection that cannot be read is listed as unreadable with the reason; the rest still work."""
        infos = []
        for name in self.names():
            info = self.resources.store.describe(name)
            if groups is not None and info.status == "ok":
                try:
                    info.chunks = self.count(name, groups)
                except DeepciteError as exc:
                    info = CollectionInfo(name=name, chunks=None, status="unreadable", problem=str(exc))
            infos.append(info)
        return infos

    def name(self, name: str | None = None) -> str:
        """The document collection ``name`` names (default ``server.default_collection``);
        CollectionNotFoundError (404, naming the known ones) when there is none."""
        name = (name or self.settings.server.default_collection).strip()
        if not self._is_document_collection(name):
            raise CollectionNotFoundError(name, self.names())
        return name

    def _is_document_collection(self, name: str) -> bool:
        return name != self.settings.practitioners.collection and self.resources.store.has_collection(name)

    def collection(self, name: str | None = None, *, create: bool = False) -> Collection:
        """The named document collection (default ``server.default_collection``), opened once; 404 naming the
        known ones. An internal collection (the practitioner index) is not one: it gets the same 404, or
        with ``create`` (a collection an ingest makes) a 400. Its embedder is loaded when it first embeds."""
        name = (name or self.settings.server.default_collection).strip()
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        with self.resources.lock:
            if name not in self._collections:
                if create:
                    self.check_target(name)
                else:
                    self.name(name)
                self._collections[name] = Collection(
                    name, self.resources.store, self.settings, lambda: self.resources.embedder
                )
            return self._collections[name]

    def check_target(self, name: str) -> None:
        """InputError (400) unless documents can be written to collection ``name``: a name that can name a
        folder, and not the practitioner directory's index."""
        OriginalsStore.for_collection(self.settings, name)  # checks the name
        if name == self.settings.practitioners.collection:
            raise InputError(
                f"{name!r} is the practitioner directory's index, not a document collection; "
                "write to another collection"
            )

    def checked(self, collection: str | None, filters: Filters | None) -> Collection:
        """The collection a request names, its filter fields checked against it: 404 for an unknown
        collection, RequestError (422) for a field that is neither a Chunk field nor a metadata key the
        collection has recorded (naming the known ones)."""
        col = self.collection(collection)
        if filters is not None and filters.equals:
            metadata = any(f not in FILTER_FIELDS for f in filters.equals)  # read the keys only when named
            keys = self.resources.store.metadata_keys(col.name) if metadata else ()
            try:
                check_filter_fields(filters, keys)
            except InputError as exc:
                raise RequestError(f"filters: {exc}") from exc
        return col

    def check(self, name: str) -> CollectionCheck:
        """Read a whole collection back and report what is damaged (see :func:`check_collection`; then SQLite's
        own verification of its entity graph and originals' manifest, and every stored original against its
        checksum, a missing one reported too), and warn
        when its entity graph or its BM25 terms were read by older rules (the next ingest reads them again)."""
        report = check_collection(self.resources.store, name)  # type: ignore[arg-type]
        graph = EntityGraph.for_collection(self.settings, name)
        report.problems.extend(graph.problems())
        report.problems.extend(OriginalsStore.for_collection(self.settings, name).problems())
        if report.problems:
            return report
        if self.settings.graph.enabled and not graph.current():
            report.warnings.append(
                "its entity graph was read by an older deepcite's rules; the next `deepcite ingest` into the "
                "collection (its files again will do) rebuilds the graph from the stored passages"
            )
        if not self.resources.store.terms_current(name):
            report.warnings.append(
                "its BM25 terms were read by an older deepcite's tokenizer (words with accents, Greek letters or "
                "letters such as ø and ł match as it split them); the next `deepcite ingest` into the collection "
                "(its files again will do) reads them again"
            )
        return report

    def stats(self, name: str) -> CollectionStats:
        """A collection's chunks, documents and chunks per source, counted over every chunk."""
        name = self.name(name)
        docs: set[str] = set()
        sources: Counter[str] = Counter()
        for chunk in self.resources.store.scroll(name):
            docs.add(chunk.doc_id)
            sources[chunk.source or "(none)"] += 1
        return CollectionStats(
            name=name,
            chunks=sources.total(),
            documents=len(docs),
            sources=dict(sources),
            backend=self.settings.store.backend,
            vectors=self.resources.store.vector_source(name),
            embedder_precision=embedder_precision(self.settings.embedder),
        )

    def count(self, name: str, groups: Groups = None) -> int:
        """How many chunks of collection ``name`` the caller with ``groups`` may read."""
        return self.resources.store.count(name, restrict_filters(None, groups))

    def drop(self, collection: str) -> None:
        """Delete a document collection, its originals and its graph (nothing happens when it does not exist)."""
        try:
            col = self.collection(collection)
        except CollectionNotFoundError:
            return
        with self.resources.lock:
            col.drop()
            self._collections.pop(col.name, None)

    def clear(self) -> None:
        """Forget the opened collections (the Engine is closing)."""
        self._collections.clear()

    # -- ingest ---------------------------------------------------------------------------------------------
    def pipeline(self, name: str) -> IngestPipeline:
        """An ingest into collection ``name`` (created on its first write) with the shared store and embedder,
        and the LLM client to read triples when ``graph.llm_triples`` is on."""
        collection = self.collection(name, create=True)
        llm = self.resources.llm if self.settings.graph.llm_triples else None
        return IngestPipeline(collection, llm=llm)

    def ingest(
        self,
        collection: str,
        source: str | Path | Iterable[Document],
        *,
        fmt: str = "auto",
        on_error: OnError = "fail",
        rebuild: bool = False,
        progress: ProgressCallback | None = None,
        on_progress: FileProgressCallback | None = None,
        ray: str | None = None,
    ) -> IngestReport:
        """Read, chunk, embed and index ``source`` (a file, a folder or Documents) into ``collection``, made
        on first ingest; ``rebuild`` drops the collection first. See :meth:`IngestPipeline.ingest`."""
        if isinstance(source, str | Path):
            self.require_space(_input_bytes([Path(source)]))
        if rebuild:
            self.drop(collection)
        return self.pipeline(collection).ingest(
            source, fmt=fmt, on_error=on_error, progress=progress, on_progress=on_progress, ray=ray
        )

    def ingest_files(
        self,
        collection: str,
        paths: Sequence[Path],
        *,
        names: Sequence[str] | None = None,
        acl: Sequence[str] = (),
        on_error: OnError = "fail",
        on_progress: FileProgressCallback | None = None,
    ) -> IngestReport:
        """Ingest these files (uploads) into ``collection`` under ``names``, each document shared with the
        ``acl`` groups, embedding for at most ``server.upload_embed_s``. See :meth:`IngestPipeline.ingest_files`."""
        self.require_space(_input_bytes(paths))
        server = self.settings.server
        budget = EmbedBudget(server.upload_embed_s, server.upload_embed_check_texts, "server.upload_embed_s")
        return self.pipeline(collection).ingest_files(
            paths, names=names, acl=acl, on_error=on_error, on_progress=on_progress, embed_budget=budget
        )

    def require_space(self, input_bytes: int) -> None:
        """NoSpaceError ("not enough space in <data dir>: needs about N MB, M MB free") before an ingest of
        ``input_bytes`` of files starts: their stored originals and index take about ``ingest.space_factor``
        times that, beyond ``store.min_free_mb``."""
        needed = int(input_bytes * self.settings.ingest.space_factor)
        require_space(self.settings.data_dir, needed, self.settings.store.min_free_mb)

    # -- documents --------------------------------------------------------------------------------------------
    def check_owner(self, collection: str, doc_ids: Iterable[str], groups: Groups) -> None:
        """OwnershipConflictError (409) when ``collection`` holds one of ``doc_ids`` and the caller with ``groups``
        does not own it (:meth:`owns`): an upload of that name would replace another group's document. The
        message is the same whether the caller may read that document or not, so its content never leaks."""
        if groups is None or not self._is_document_collection(collection):
            return
        store = self.resources.store
        for doc_id in doc_ids:
            if store.count(collection, Filters(doc_ids=[doc_id])) and not self.owns(
                collection, doc_id, groups
            ):
                raise OwnershipConflictError(
                    f"collection {collection!r} already holds a document named {doc_id!r} that belongs to other "
                    "groups (or is public, which only an unrestricted token may replace); rename your file and "
                    "upload it again"
                )

    def owns(self, collection: str, doc_id: str, groups: Groups) -> bool:
        """Whether the caller with ``groups`` owns document ``doc_id``: an unrestricted caller owns every
        document, a restricted one those shared with one of its groups (a public document: nobody restricted)."""
        if groups is None:
            return True
        acl = Filters(doc_ids=[doc_id], equals={"acl": list(groups)}) if groups else None
        return acl is not None and bool(self.resources.store.count(collection, acl))

    def remove(self, collection: str, doc_id: str, groups: Groups = None) -> int:
        """Delete a document's chunks and its original; returns the number of chunks deleted.

        NotFoundError (404) when the collection holds no such document the caller with ``groups`` may read;
        ForbiddenError (403) when the caller may read it but does not own it (:meth:`owns`: a public document
        only an unrestricted caller may delete).
        """
        col = self.collection(collection)
        readable = self._readable(col.name, doc_id, groups)
        if not readable and (groups is not None or col.originals.get(doc_id) is None):
            raise document_not_found(col.name)
        if not self.owns(col.name, doc_id, groups):
            raise ForbiddenError(
                "this document is public or shared with groups your token does not have; only an "
                "unrestricted token may delete it"
            )
        return col.delete_document(doc_id)

    def document_passages(self, collection: str, doc_id: str, groups: Groups = None) -> list[Chunk]:
        """A document's passages that the caller with ``groups`` may read, in reading order.

        CollectionNotFoundError (404) for an unknown collection; NotFoundError (404) when there are none: a
        document that does not exist and one the caller may not read look the same.
        """
        name = self.name(collection)
        chunks = list(self.resources.store.scroll(name, _document_filter(doc_id, groups)))
        if not chunks:
            raise document_not_found(name)
        return sorted(chunks, key=lambda chunk: chunk.position)

    def original_record(self, collection: str, doc_id: str, groups: Groups = None) -> StoredOriginal | None:
        """The record of a document's stored original file (its name and media type), None when none is
        stored, for a caller who may read the document: InputError (400) for a name that cannot be a
        collection, NotFoundError (404) when there is no such document the caller may read."""
        originals = OriginalsStore.for_collection(self.settings, collection)
        if not self._readable(collection, doc_id, groups):
            raise document_not_found(collection)
        return originals.get(doc_id)

    def original(self, collection: str, doc_id: str, groups: Groups = None) -> tuple[StoredOriginal, Path]:
        """A document's stored original file (its record and its path), as :meth:`original_record` checks
        it; NotFoundError also when no original is stored for it, CollectionDamagedError (503) when the stored
        file does not match its checksum."""
        row = self.original_record(collection, doc_id, groups)
        path = OriginalsStore.for_collection(self.settings, collection).verified_path(doc_id) if row else None
        if row is None or path is None:
            raise NotFoundError(
                f"the document is in collection {collection!r} but no original file is stored for it "
                "(it was ingested from records, or before originals were kept); re-ingest its file"
            )
        return row, path

    def _readable(self, collection: str, doc_id: str, groups: Groups) -> int:
        """How many chunks of document ``doc_id`` in ``collection`` the caller with ``groups`` may read (the
        search ACL rule; 0 for the practitioner index or a collection that does not exist)."""
        if not self._is_document_collection(collection):
            return 0
        return self.resources.store.count(collection, _document_filter(doc_id, groups))


def _input_bytes(paths: Iterable[Path]) -> int:
    """The size of these files, and of the files under these folders."""
    total = 0
    for path in paths:
        files = path.rglob("*") if path.is_dir() else [path]
        total += sum(f.stat().st_size for f in files if f.is_file())
    return total


def _document_filter(doc_id: str, groups: Groups) -> Filters | None:
    """The chunks of document ``doc_id`` that the caller with ``groups`` may read (the search ACL rule)."""
    return restrict_filters(Filters(doc_ids=[doc_id]), groups)
