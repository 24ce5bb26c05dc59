"""``POST /api/practitioners/search``: the practitioner finder behind the same auth and limits."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from deepcite.practitioners.api import PractitionerQuery, PractitionerSearchResponse
from deepcite.practitioners.finder import search_practitioners
from deepcite.server.auth import Caller, current_caller
from deepcite.server.resources import ServerResources

router = APIRouter(prefix="/api/practitioners", tags=["practitioners"])


@router.post("/search", response_model=PractitionerSearchResponse)
async def practitioners_search(
    body: PractitionerQuery, request: Request, caller: Caller = Depends(current_caller)
) -> PractitionerSearchResponse:
    """Ranked practitioners for a patient's request, with the intent behind them and the timings."""
    resources: ServerResources = request.app.state.resources
    return await search_practitioners(body, resources.practitioner_finder())
