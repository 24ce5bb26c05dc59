"""Ingestion: loaders per input format (yielding Documents) and the sentence-aware chunker."""

from deepcite.ingest.chunker import chunk_document, chunk_id, count_tokens
from deepcite.ingest.formats import InputFormat, detect_format
from deepcite.ingest.loaders import LOADERS, iter_documents, paragraph_id
from deepcite.ingest.problems import LoadProblem

__all__ = [
    "LOADERS",
    "InputFormat",
    "LoadProblem",
    "chunk_document",
    "chunk_id",
    "count_tokens",
    "detect_format",
    "iter_documents",
    "paragraph_id",
]
