"""A reader for the tests (``ingest.readers``) that reports, as its text, how many of dateparser's languages
have their patterns compiled in the process that reads: the reader's child, forked from the fork server."""

from __future__ import annotations

from pathlib import Path

from dateparser.languages.dictionary import Dictionary

from deepcite.config import IngestSettings
from deepcite.ingest.readers import Block, ReadResult, document_from_blocks


class LanguagesReady:
    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        ready = sum(len(patterns) for patterns in Dictionary._split_regex_cache.values())
        return document_from_blocks([Block(f"{ready} languages ready")], doc_id=doc_id, name=name)
