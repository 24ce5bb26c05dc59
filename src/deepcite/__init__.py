"""deepcite: answers hard questions from a corpus you own, every sentence tied to a passage you can check.

Usage::

    import deepcite

    col = deepcite.open_collection("papers", deepcite.Settings.load())  # a script's one collection
    deepcite.IngestPipeline(col).ingest("corpus.jsonl")

    with deepcite.Engine(deepcite.Settings.load()) as engine:  # one per process: built once, shared
        found = engine.search(deepcite.SearchRequest(query="statins and muscle pain", collection="papers"))
        answer = engine.ask_sync(deepcite.QuestionRequest(query="Do statins cause myalgia?", collection="papers"))
        print(answer.summary)
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from deepcite.version import __version__

# Every outward shape, by the module that defines it: the Engine and its settings; the requests a caller sends;
# the responses, records and reports it gets back; the errors it may catch. Imported lazily (torch and qdrant
# load only when the API is used), so `import deepcite` stays cheap; a type checker sees them all below.
_LAZY: dict[str, str] = {
    # the composition root and its settings
    "Engine": "deepcite.engine",
    "Settings": "deepcite.config",
    # requests
    "SearchRequest": "deepcite.service",
    "QuestionRequest": "deepcite.service",
    "PractitionerQuery": "deepcite.practitioners.api",
    "Filters": "deepcite.models",
    "SearchMode": "deepcite.models",
    "FusionMethod": "deepcite.models",
    # responses and records
    "SearchResponse": "deepcite.service",
    "Passage": "deepcite.service",
    "AskResponse": "deepcite.service",
    "PartResponse": "deepcite.service",
    "HopEvent": "deepcite.service",
    "Citation": "deepcite.answer.pipeline",
    "ResearchResult": "deepcite.research.agent",
    "EvidencePack": "deepcite.models",
    "RoundReport": "deepcite.models",
    "RankedList": "deepcite.models",
    "CoverageReport": "deepcite.models",
    "Chunk": "deepcite.models",
    "Document": "deepcite.models",
    "CollectionInfo": "deepcite.models",
    "CollectionStats": "deepcite.models",
    "IngestReport": "deepcite.ingest.report",
    "SavedAnswer": "deepcite.saved_answers",
    "SavedAnswerList": "deepcite.saved_answers",
    "PractitionerSearchResponse": "deepcite.practitioners.api",
    # errors: one hierarchy, each message saying what was wrong and what to do
    "DeepciteError": "deepcite.errors",
    "ConfigError": "deepcite.errors",
    "InputError": "deepcite.errors",
    "RequestError": "deepcite.errors",
    "IngestError": "deepcite.errors",
    "ForbiddenError": "deepcite.errors",
    "NotFoundError": "deepcite.errors",
    "CollectionNotFoundError": "deepcite.errors",
    "InsufficientEvidenceError": "deepcite.errors",
    "StoreError": "deepcite.errors",
    "CollectionBusyError": "deepcite.errors",
    "CollectionDamagedError": "deepcite.errors",
    "NoSpaceError": "deepcite.errors",
    "OwnershipConflictError": "deepcite.errors",
    "EmbedderError": "deepcite.errors",
    "LLMError": "deepcite.errors",
    "LLMTimeoutError": "deepcite.errors",
    # a script's one collection, without an Engine
    "Collection": "deepcite.retrieval.collection",
    "open_collection": "deepcite.retrieval.collection",
    "IngestPipeline": "deepcite.ingest.pipeline",
}

if TYPE_CHECKING:
    from deepcite.answer.pipeline import Citation
    from deepcite.config import Settings
    from deepcite.engine import Engine
    from deepcite.errors import (
        CollectionBusyError,
        CollectionDamagedError,
        CollectionNotFoundError,
        ConfigError,
        DeepciteError,
        EmbedderError,
        ForbiddenError,
        IngestError,
        InputError,
        InsufficientEvidenceError,
        LLMError,
        LLMTimeoutError,
        NoSpaceError,
        NotFoundError,
        OwnershipConflictError,
        RequestError,
        StoreError,
    )
    from deepcite.ingest.pipeline import IngestPipeline
    from deepcite.ingest.report import IngestReport
    from deepcite.models import (
        Chunk,
        CollectionInfo,
        CollectionStats,
        CoverageReport,
        Document,
        EvidencePack,
        Filters,
        FusionMethod,
        RankedList,
        RoundReport,
        SearchMode,
    )
    from deepcite.practitioners.api import PractitionerQuery, PractitionerSearchResponse
    from deepcite.research.agent import ResearchResult
    from deepcite.retrieval.collection import Collection, open_collection
    from deepcite.saved_answers import SavedAnswer, SavedAnswerList
    from deepcite.service import (
        AskResponse,
        HopEvent,
        PartResponse,
        Passage,
        QuestionRequest,
        SearchRequest,
        SearchResponse,
    )

__all__ = [
    "Engine",
    "Settings",
    "SearchRequest",
    "QuestionRequest",
    "PractitionerQuery",
    "Filters",
    "SearchMode",
    "FusionMethod",
    "SearchResponse",
    "Passage",
    "AskResponse",
    "PartResponse",
    "HopEvent",
    "Citation",
    "ResearchResult",
    "EvidencePack",
    "RoundReport",
    "RankedList",
    "CoverageReport",
    "Chunk",
    "Document",
    "CollectionInfo",
    "CollectionStats",
    "IngestReport",
    "SavedAnswer",
    "SavedAnswerList",
    "PractitionerSearchResponse",
    "DeepciteError",
    "ConfigError",
    "InputError",
    "RequestError",
    "IngestError",
    "ForbiddenError",
    "NotFoundError",
    "CollectionNotFoundError",
    "InsufficientEvidenceError",
    "StoreError",
    "CollectionBusyError",
    "CollectionDamagedError",
    "NoSpaceError",
    "OwnershipConflictError",
    "EmbedderError",
    "LLMError",
    "LLMTimeoutError",
    "Collection",
    "open_collection",
    "IngestPipeline",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'deepcite' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
