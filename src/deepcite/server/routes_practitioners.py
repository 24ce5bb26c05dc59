"""``POST /api/practitioners/search``: the practitioner finder behind the same auth and limits."""

from __future__ import annotations

from fastapi import APIRouter

from deepcite.practitioners.api import PractitionerQuery, PractitionerSearchResponse
from deepcite.server.resources import CallerDep, EngineDep

router = APIRouter(prefix="/api/practitioners", tags=["practitioners"])


@router.post("/search", response_model=PractitionerSearchResponse)
async def practitioners_search(
    body: PractitionerQuery, engine: EngineDep, caller: CallerDep
) -> PractitionerSearchResponse:
    """Ranked practitioners for a patient's request, with the intent behind them and the timings."""
    return await engine.practitioners.find(body)
