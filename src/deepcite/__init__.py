"""deepcite: answers hard questions from a corpus you own, every sentence tied to a passage you can check.

    import deepcite
    col = deepcite.open_collection("papers")
    col.ingest("corpus.jsonl")
    hits = col.search("statins and muscle pain", mode="hybrid", k=5)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from deepcite.retrieval.collection import Collection, open_collection

__all__ = ["Collection", "open_collection", "__version__"]


def __getattr__(name: str) -> Any:
    # heavy imports (torch, qdrant) only when the API is used, so `import deepcite` stays cheap
    if name in ("Collection", "open_collection"):
        from deepcite.retrieval import collection

        return getattr(collection, name)
    raise AttributeError(f"module 'deepcite' has no attribute {name!r}")
