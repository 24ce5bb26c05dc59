"""The practitioners' search collection: one BM25-only chunk per NPI, kept in step with the directory."""

from __future__ import annotations

from collections.abc import Callable

from deepcite.config import Settings
from deepcite.models import Chunk, Filters, SearchMode
from deepcite.practitioners.directory import Directory
from deepcite.practitioners.profiles import profile_chunk
from deepcite.practitioners.taxonomy import Taxonomy
from deepcite.retrieval.store import SearchStore


class ProfileIndex:
    """BM25 over practitioner profiles in ``settings.practitioners.collection`` of a SearchStore."""

    def __init__(self, store: SearchStore, settings: Settings, taxonomy: Taxonomy) -> None:
        self.store = store
        self.settings = settings
        self.taxonomy = taxonomy
        self.name = settings.practitioners.collection

    def is_current(self, directory: Directory) -> bool:
        """True when the collection exists and holds exactly the directory's profiles."""
        if directory.index_dirty() or not self.store.has_collection(self.name):
            return False
        return self.store.count(self.name) == directory.count()

    def sync(self, directory: Directory, *, on_batch: Callable[[int], None] | None = None) -> int:
        """Write every directory profile (idempotent by NPI), remove NPIs the directory lacks, mark clean.

        Returns the number of profiles written. The directory stays marked stale if this fails, so the next
        search or ``deepcite practitioners reindex`` finishes the job.
        """
        self.store.create_collection(self.name, dense_dim=None)
        batch: list[Chunk] = []
        written = 0
        size = self.settings.practitioners.index_batch
        for practitioner in directory:
            batch.append(profile_chunk(practitioner, self.taxonomy))
            if len(batch) >= size:
                written += self._write(batch, on_batch)
                batch = []
        if batch:
            written += self._write(batch, on_batch)
        if self.store.count(self.name) > written:
            known = {p.npi for p in directory}
            for chunk in list(self.store.scroll(self.name)):
                if chunk.doc_id not in known:
                    self.store.delete_document(self.name, chunk.doc_id)
        directory.set_index_dirty(False)
        return written

    def _write(self, batch: list[Chunk], on_batch: Callable[[int], None] | None) -> int:
        self.store.upsert(self.name, batch, dense=None)
        if on_batch is not None:
            on_batch(len(batch))
        return len(batch)

    def search(self, text: str, k: int, filters: Filters | None = None) -> list[tuple[Chunk, float]]:
        """``(profile chunk, bm25 score)`` best first (the chunk's doc_id is the NPI); empty when the text
        has no searchable words.

        Profiles of one specialty often score exactly alike: the store orders equal scores by chunk id, here
        the NPI, and cuts at ``k`` among them by it, so the same request gets the same candidates.
        """
        hits = self.store.search(
            self.name, text=text, vector=None, mode=SearchMode.BM25, k=k, filters=filters
        )
        return [(hit.chunk, hit.score) for hit in hits]
