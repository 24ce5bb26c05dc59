"""Request bodies and responses of the JSON API beyond the shared ones of :mod:`deepcite.service`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deepcite.models import CollectionInfo
from deepcite.service import QuestionRequest


class UnifiedSearchRequest(QuestionRequest):
    """``POST /api/unified-search``: a question to research and answer with citations."""

    stream: bool = Field(False, description="Answer as Server-Sent Events (hop, summary, answer, done).")


class RequestIdRequest(BaseModel):
    """``POST /api/quick-summary`` and ``POST /api/detailed-answer``: regenerate from a stored context."""

    model_config = ConfigDict(extra="forbid")

    request_id: str = Field(min_length=1, description="The request_id of an earlier unified search.")


class CollectionsResponse(BaseModel):
    collections: list[CollectionInfo]
    default: str


class HealthResponse(BaseModel):
    status: str
    version: str
    contexts: int
    context_cap: int
    auth: bool
    # the models and the default collection are loaded (server.warm_start), or warm start is off and each
    # loads on first use; warm_s: the seconds loading took
    ready: bool
    warm_s: float | None = None
