"""JSON and JSON Lines record files: one document per record, read by the corpus loaders (plain records,
BEIR, HotpotQA, MuSiQue, PubMedQA are told apart by the records' keys)."""

from __future__ import annotations

from pathlib import Path

from deepcite.config import IngestSettings
from deepcite.ingest.formats import detect_records_format
from deepcite.ingest.loaders import LOADERS
from deepcite.ingest.problems import LoadProblem
from deepcite.ingest.readers.base import ReadDocument, ReadResult, SkipReason


class JsonRecordsReader:
    """Records of a JSON array, JSON object or JSON Lines file; a bad record is a problem, not a skip."""

    def read(self, path: Path, *, doc_id: str, name: str, settings: IngestSettings) -> ReadResult:
        result = ReadResult()
        for item in LOADERS[detect_records_format(path)](path):
            if isinstance(item, LoadProblem):
                result.problems.append(LoadProblem(name, item.line, item.reason))
            else:
                result.documents.append(ReadDocument(item.model_copy(update={"file": name})))
        if not result.documents and not result.problems:
            return ReadResult.skipped(SkipReason.EMPTY, "the file holds no records; nothing to ingest")
        return result
