"""A reader for the tests (``ingest.readers``) whose blocks the chunker cannot use: a block of a kind that is
no :class:`~deepcite.models.TextKind`, as a third-party reader might give. Reading succeeds; chunking fails."""

from __future__ import annotations

from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.ingest.readers import Block, ReadResult, document_from_blocks


class UnknownKind:
    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        block = Block(path.read_text(encoding="utf-8"), kind="sidebar")  # type: ignore[arg-type]
        return document_from_blocks([block], doc_id=doc_id, name=name)
