"""Request bodies of the JSON API (responses are the service's models)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deepcite.models import Filters


class UnifiedSearchRequest(BaseModel):
    """``POST /api/unified-search``: a question to research and answer with citations."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="The question, in plain language.")
    collection: str | None = Field(None, description="Collection to search (default: the server's default).")
    filters: Filters | None = Field(None, description="Payload filters; ACL groups are capped by your token.")
    max_hops: int | None = Field(None, description="At most this many research hops (1..research.max_hops).")
    stream: bool = Field(False, description="Answer as Server-Sent Events (hop, summary, answer, done).")


class RequestIdRequest(BaseModel):
    """``POST /api/quick-summary`` and ``POST /api/detailed-answer``: regenerate from a stored context."""

    model_config = ConfigDict(extra="forbid")

    request_id: str = Field(min_length=1, description="The request_id of an earlier unified search.")


class CollectionInfo(BaseModel):
    name: str
    chunks: int


class CollectionsResponse(BaseModel):
    collections: list[CollectionInfo]
    default: str


class HealthResponse(BaseModel):
    status: str
    version: str
    contexts: int
    context_cap: int
    auth: bool
