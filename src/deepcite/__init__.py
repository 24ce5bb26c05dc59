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

if TYPE_CHECKING:
    from deepcite.config import Settings
    from deepcite.engine import Engine
    from deepcite.ingest.pipeline import IngestPipeline
    from deepcite.retrieval.collection import Collection, open_collection
    from deepcite.service import QuestionRequest, SearchRequest

__all__ = [
    "Collection",
    "Engine",
    "IngestPipeline",
    "QuestionRequest",
    "SearchRequest",
    "Settings",
    "open_collection",
    "__version__",
]

# heavy imports (torch, qdrant) only when the API is used, so `import deepcite` stays cheap
_LAZY = {
    "Collection": "deepcite.retrieval.collection",
    "open_collection": "deepcite.retrieval.collection",
    "Engine": "deepcite.engine",
    "IngestPipeline": "deepcite.ingest.pipeline",
    "QuestionRequest": "deepcite.service",
    "SearchRequest": "deepcite.service",
    "Settings": "deepcite.config",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'deepcite' has no attribute {name!r}")
