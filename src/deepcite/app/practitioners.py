"""The practitioner finder as a service: a patient's words in, ranked practitioners out; imports of directory
files, re-indexing and counts. Its directory (SQLite) is opened on first use, over the shared store."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from deepcite.app.resources import Resources

if TYPE_CHECKING:
    from deepcite.practitioners.api import PractitionerQuery, PractitionerSearchResponse
    from deepcite.practitioners.finder import PractitionerFinder
    from deepcite.practitioners.importers import ImportReport

# told, during an import, the rows read so far ("read") and each batch of profiles indexed ("indexed")
ImportProgress = Callable[[Literal["read", "indexed"], int], None]


class Practitioners:
    """The practitioner finder over the shared store, embedder and LLM client."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self._finder: PractitionerFinder | None = None

    @property
    def finder(self) -> PractitionerFinder:
        """The finder, its directory opened on first use (once, under the lock)."""
        if self._finder is None:
            with self.resources.lock:
                if self._finder is None:
                    from deepcite.practitioners.finder import PractitionerFinder

                    r = self.resources
                    self._finder = PractitionerFinder.open(
                        r.settings, store=r.store, embedder=r.embedder, llm=r.llm
                    )
        return self._finder

    async def find(self, query: PractitionerQuery) -> PractitionerSearchResponse:
        """Ranked practitioners for a patient's request, with the intent behind them and the timings."""
        from deepcite.practitioners.finder import search_practitioners

        finder = await asyncio.to_thread(lambda: self.finder)
        return await search_practitioners(query, finder)

    def import_file(self, path: Path, fmt: str, progress: ImportProgress | None = None) -> ImportReport:
        """Import (or update by NPI) a practitioner file into the directory in one transaction, then index the
        profiles; ``progress`` is told the rows read so far and each batch of profiles indexed."""
        if progress is None:
            return self.finder.import_file(path, fmt)
        return self.finder.import_file(
            path, fmt, on_row=lambda n: progress("read", n), on_index=lambda n: progress("indexed", n)
        )

    def reindex(self) -> int:
        """Rewrite every profile into the practitioner search collection; returns how many were written."""
        return self.finder.index.sync(self.finder.directory)

    def count(self) -> int:
        """How many practitioners the directory holds."""
        return self.finder.directory.count()

    def close(self) -> None:
        """Close the directory (not the finder's store: it is shared)."""
        with self.resources.lock:
            if self._finder is not None:
                self._finder.directory.close()
                self._finder = None
