"""Saved answers: list, read, re-run, delete, and download one as a report or evidence table.

Every answer the API gives is saved under its ``request_id`` (:mod:`deepcite.saved_answers`); these routes
reach it for a caller whose ACL groups may read it, and answer 404 to anyone else, as for an id that does
not exist. ``/answers/{id}`` (:mod:`deepcite.server.ui`) is the page that reopens one.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel

from deepcite.answer.report import ReportFormat
from deepcite.saved_answers import SavedAnswer, SavedAnswerList
from deepcite.server.disconnect import cancel_on_disconnect
from deepcite.server.resources import CallerDep, EngineDep
from deepcite.server.routes_report import REPORT_RESPONSES, report_response

router = APIRouter(prefix="/api/answers", tags=["saved answers"])

AnswerId = Annotated[str, Path(description="A saved answer's id (the request_id of the answer).")]


class DeletedAnswer(BaseModel):
    deleted: str


@router.get("", response_model=SavedAnswerList)
async def list_answers(
    engine: EngineDep,
    caller: CallerDep,
    collection: Annotated[str | None, Query(description="The collection (default: the server's).")] = None,
    limit: Annotated[
        int | None, Query(ge=1, description="At most this many (up to saved.list_limit).")
    ] = None,
) -> SavedAnswerList:
    """The newest saved answers of a collection that you may read."""
    return await asyncio.to_thread(engine.saved.list, collection, caller.groups, limit)


@router.get("/{answer_id}", response_model=SavedAnswer)
async def get_answer(answer_id: AnswerId, engine: EngineDep, caller: CallerDep) -> SavedAnswer:
    """A saved answer: question, request, settings, evidence pack, response and citation check."""
    return await asyncio.to_thread(engine.saved.get, answer_id, caller.groups)


@router.delete("/{answer_id}", response_model=DeletedAnswer)
async def delete_answer(answer_id: AnswerId, engine: EngineDep, caller: CallerDep) -> DeletedAnswer:
    """Delete a saved answer you own: asked under your token's groups (any saved answer with an unrestricted
    token); 403 for one you may only read."""
    await asyncio.to_thread(engine.saved.delete, answer_id, caller.groups)
    return DeletedAnswer(deleted=answer_id)


@router.post("/{answer_id}/rerun", response_model=SavedAnswer)
async def rerun_answer(
    answer_id: AnswerId, engine: EngineDep, caller: CallerDep, http: Request
) -> SavedAnswer | Response:
    """Ask a saved question again against the collection as it is now; the new answer is saved, and its
    ``changes`` say which cited passages were added, removed or changed."""
    work = engine.answers.rerun(answer_id, caller.groups)
    return await cancel_on_disconnect(http, work, engine.settings.server.disconnect_poll_s)


@router.get("/{answer_id}/report", response_class=Response, responses=REPORT_RESPONSES)
async def answer_report(
    answer_id: AnswerId,
    engine: EngineDep,
    caller: CallerDep,
    format: Annotated[
        str, Query(description="markdown, bibtex, ris or csv (the evidence table)")
    ] = "markdown",  # noqa: A002
) -> Response:
    """A saved answer as a downloadable report, its references, or its evidence table (``format=csv``);
    400 naming the formats when ``format`` is unknown."""
    fmt = ReportFormat.from_str(format)
    saved = await asyncio.to_thread(engine.saved.get, answer_id, caller.groups)
    return report_response(saved.response, fmt)
