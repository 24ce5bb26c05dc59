"""How a chunk becomes a Qdrant point on every backend: its id, its payload, and collection names.

Payload layout (the same on Edge and qdrant-client, so filters and scores agree):

- every :class:`~deepcite.models.Chunk` field at the top level (``chunk_id``, ``doc_id``, ``text``,
  ``title``, ``year``, ``source``, ``acl`` …); free metadata stays nested under ``metadata``, so a filter on
  a metadata key ``k`` addresses ``metadata.k``;
- ``_dl``: the chunk's BM25 document length (tokens after :func:`deepcite.text.tokenize`), which keeps the
  collection's BM25 statistics exact when a chunk is replaced or deleted.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from deepcite.errors import InputError
from deepcite.models import Chunk

DENSE_VECTOR_NAME = "dense"
LENGTH_KEY = "_dl"
METADATA_KEY = "metadata"
CHUNK_FIELDS: frozenset[str] = frozenset(Chunk.model_fields)

_NAMESPACE = uuid.UUID("5b0e7a36-2d1c-5d5e-9a55-4c7a6b1f3d21")  # deepcite's UUID5 namespace for point ids
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def point_id(chunk_id: str) -> str:
    """The point id of a chunk: UUID5 of its ``chunk_id`` (stable, so re-upserting replaces it)."""
    return str(uuid.uuid5(_NAMESPACE, chunk_id))


def validate_collection_name(name: str, max_chars: int = 64) -> str:
    """Return ``name`` if it is a valid collection name of at most ``max_chars`` (setting
    ``store.max_collection_name_chars``), else raise :class:`InputError` saying why; no file is touched."""
    if isinstance(name, str) and len(name) > max_chars:
        raise InputError(
            f"invalid collection name: {len(name)} characters is too long, use at most {max_chars} "
            "(setting store.max_collection_name_chars)"
        )
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name) or name.endswith("."):
        shown = name[:40] + "…" if isinstance(name, str) and len(name) > 40 else name
        raise InputError(
            f"invalid collection name {shown!r}: use 1-{max_chars} letters, digits, '_', '-' or '.', "
            "starting with a letter or digit (e.g. 'papers' or 'scifact-2024')"
        )
    return name


def chunk_payload(chunk: Chunk, length: int) -> dict[str, Any]:
    """The stored payload of a chunk (all its fields) plus its BM25 length."""
    payload = chunk.model_dump(mode="json")
    payload[LENGTH_KEY] = length
    return payload


def payload_chunk(payload: dict[str, Any]) -> Chunk:
    """The chunk stored in a payload (internal keys dropped)."""
    return Chunk.model_validate({k: v for k, v in payload.items() if k in CHUNK_FIELDS})


def payload_key(field: str) -> str:
    """The payload path a filter on ``field`` addresses: a Chunk field as is, anything else in metadata."""
    if field in CHUNK_FIELDS or field.startswith(f"{METADATA_KEY}."):
        return field
    return f"{METADATA_KEY}.{field}"
