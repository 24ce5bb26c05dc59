"""The web UI: server-rendered pages (Jinja2) and their static files, no front-end build step.

``router`` serves ``/`` (research) and ``/practitioners``; the pages call the JSON API of the same app
(``/api/unified-search/stream``, ``/api/practitioners/search``, ``/api/collections``) from a little
plain JavaScript in ``static/``. Include it with ``app.include_router(ui.router)``.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.templating import Jinja2Templates

from deepcite.config import Settings
from deepcite.version import __version__

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
_STATIC_TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml", ".png": "image/png"}
# the files /static/ serves, listed once: a requested name is looked up here, never joined into a path
_STATIC_FILES = {p.name: p for p in STATIC_DIR.iterdir() if p.is_file() and p.suffix in _STATIC_TYPES}
# pdf.js, vendored from npm by `make` (Makefile target `pdfjs`; not in git): served the same way, from a
# listing made once; without it the viewer shows the stored text of PDFs too
PDFJS_DIR = STATIC_DIR / "pdfjs"
_PDFJS_TYPES = {
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".pfb": "application/octet-stream",
    ".ttf": "font/ttf",
}
_PDFJS_FILES = (
    {p.relative_to(PDFJS_DIR).as_posix(): p for p in PDFJS_DIR.rglob("*") if p.suffix in _PDFJS_TYPES}
    if PDFJS_DIR.is_dir()
    else {}
)

templates = Jinja2Templates(directory=HERE / "templates")
router = APIRouter(include_in_schema=False)


def _settings(request: Request) -> Settings:
    """The settings of the app's Engine."""
    return request.app.state.engine.settings


def render_page(request: Request, page: str, status_code: int = 200, **context: object) -> HTMLResponse:
    """Template ``<page>.html`` rendered with the version, the settings, ``page`` and ``context``."""
    settings = _settings(request)
    return templates.TemplateResponse(
        request,
        f"{page}.html",
        {"version": __version__, "settings": settings, "page": page, **context},
        status_code=status_code,
        headers={"Cache-Control": "no-store"},
    )


@router.get("/", response_class=HTMLResponse)
async def research_page(request: Request) -> HTMLResponse:
    """The research page: a question, a collection, live hops, then the cited summary and answer; past
    questions of the collection to reopen, re-run or delete."""
    return _research(request, answer_id="")


@router.get("/answers/{answer_id}", response_class=HTMLResponse)
async def saved_answer_page(request: Request, answer_id: str) -> HTMLResponse:
    """The research page reopening a saved answer (its stable URL); the page reads it from
    ``/api/answers/{answer_id}`` with the caller's token, so one it may not read shows the API's 404."""
    return _research(request, answer_id=answer_id)


def _research(request: Request, answer_id: str) -> HTMLResponse:
    settings = _settings(request)
    return render_page(
        request,
        "research",
        default_collection=settings.server.default_collection,
        max_hops=settings.research.stopping.max_hops,
        max_question_chars=settings.research.planning.max_question_chars,
        answer_id=answer_id,
    )


@router.get("/view/{collection}/{document_id:path}", response_class=HTMLResponse)
async def viewer_page(request: Request, collection: str, document_id: str) -> HTMLResponse:
    """The viewer: a cited document with the citation's quote marked (``?passage=<chunk id>&start=&end=``,
    offsets into that passage's text); a PDF at the passage's page in pdf.js, any other file as its
    stored text. The page reads ``/api/document-view`` and ``/files/…`` with the caller's token."""
    return render_page(
        request, "viewer", collection=collection, document_id=document_id, pdfjs=bool(_PDFJS_FILES)
    )


@router.get("/practitioners", response_class=HTMLResponse)
async def practitioners_page(request: Request) -> HTMLResponse:
    """The practitioner finder: a request with an optional city/state, result cards and the intent panel."""
    settings = _settings(request)
    return render_page(request, "practitioners", max_request_chars=settings.practitioners.max_query_chars)


@router.get("/static/{name}")
async def static_file(name: str) -> FileResponse:
    """One file of ``static/`` (flat folder; nothing outside it is ever served; any other name is 404)."""
    path = _STATIC_FILES.get(name)
    if path is None:
        raise HTTPException(status_code=404, detail="no such static file")
    return FileResponse(path, media_type=_STATIC_TYPES[path.suffix], headers={"Cache-Control": "no-cache"})


@router.get("/favicon.ico")
async def favicon() -> FileResponse:
    """The site's icon where browsers look for it without a ``<link rel=icon>`` (an SVG, which they all draw)."""
    return FileResponse(
        _STATIC_FILES["favicon.svg"], media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
    )


@router.get("/static/pdfjs/{name:path}")
async def pdfjs_file(name: str) -> FileResponse:
    """One file of the vendored pdf.js (its module, worker and standard fonts); any other name is 404."""
    path = _PDFJS_FILES.get(name)
    if path is None:
        raise HTTPException(status_code=404, detail="no such pdf.js file (run make to vendor pdf.js)")
    return FileResponse(
        path, media_type=_PDFJS_TYPES[path.suffix], headers={"Cache-Control": "max-age=86400"}
    )
