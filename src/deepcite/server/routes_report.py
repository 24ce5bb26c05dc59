"""``POST /api/report``: the answer the caller holds, rendered as a report to keep (Markdown, BibTeX, RIS).

The body is the answer as ``/api/unified-search`` returned it (citation texts may be left empty: the
report lists references, not passages); rendering is :mod:`deepcite.answer.report`, shared with
``deepcite ask --format``. The server keeps no state for it, so a report can be made for as long as the
caller keeps the answer.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from deepcite.answer.pipeline import AnswerResult
from deepcite.answer.report import ReportFormat, render_report, report_filename
from deepcite.errors import RequestError
from deepcite.server.resources import CallerDep
from deepcite.server.routes_files import safe_filename
from deepcite.validation import surrogate_at, surrogate_problem

router = APIRouter(prefix="/api", tags=["answer"])

# what a report route answers: one media type per format
REPORT_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"content": {f.media_type.split(";")[0]: {} for f in ReportFormat}}
}


def report_response(answer: AnswerResult, fmt: ReportFormat) -> Response:
    """``answer`` rendered as ``fmt``, as a download named after its question."""
    # the name comes from the caller's text: no control characters, quotes or separators, ASCII only
    name = safe_filename(report_filename(answer, fmt)).encode("ascii", "ignore").decode() or "deepcite-report"
    return Response(
        render_report(answer, fmt),
        media_type=fmt.media_type,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.post("/report", response_class=Response, responses=REPORT_RESPONSES)
async def report(
    answer: AnswerResult,
    caller: CallerDep,
    format: Annotated[str, Query(description="markdown, bibtex or ris")] = "markdown",  # noqa: A002
) -> Response:
    """The answer as a downloadable report; 400 naming the formats when ``format`` is unknown, 422 naming
    the field when a text is not valid Unicode."""
    fmt = ReportFormat.from_str(format)
    where = surrogate_at(answer, "body")
    if where is not None:
        raise RequestError(surrogate_problem(where))
    return report_response(answer, fmt)
