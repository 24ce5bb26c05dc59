"""Open the configured search engine: Qdrant Edge in-process (default) or a Qdrant server/cluster."""

from __future__ import annotations

from deepcite.config import Settings, get_settings
from deepcite.retrieval.store import SearchStore


def open_store(settings: Settings | None = None) -> SearchStore:
    """The store ``settings.store.backend`` names.

    ``edge`` (default): shards under ``<data_dir>/edge``. ``qdrant``: ``settings.store.url`` (with
    ``api_key``) when set, else qdrant-client's local mode at ``settings.qdrant_path``.
    """
    settings = settings or get_settings()
    if settings.store.backend == "qdrant":
        from deepcite.retrieval.qdrant_store import QdrantStore

        return QdrantStore(settings)
    from deepcite.retrieval.edge_store import EdgeStore

    return EdgeStore(settings.edge_path, settings)
