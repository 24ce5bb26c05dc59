"""``GET /files/{collection}/{document_id}``: the original file a citation points into.

The UI links a citation to ``/files/{collection}/{document_id}#page=7``; a browser's PDF viewer opens the
file at that page. The file is served only to a caller whose ACL groups may read the document (the same
rule as search: a public document, or one shared with one of the caller's groups); any other caller gets
the same 404 as for a document that does not exist, so existence does not leak. Ids are checked before
use and files are found only through the collection's manifest
(:class:`~deepcite.retrieval.originals.OriginalsStore`): nothing from the URL is ever joined into a path.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import FileResponse, HTMLResponse

from deepcite.engine import Engine
from deepcite.errors import CollectionNotFoundError, InputError, NotFoundError
from deepcite.server.resources import CallerDep, EngineDep
from deepcite.server.ui import render_page
from deepcite.service import Groups

router = APIRouter(tags=["files"])

# media types a browser renders without running the file's own scripts; anything else is sandboxed
_UNSANDBOXED = frozenset({"application/pdf"})
_UNSAFE_NAME_CHARS = re.compile(r'[\x00-\x1f\x7f"\\/;]+')


def check_document_id(doc_id: str, max_chars: int) -> None:
    """InputError (400) unless ``doc_id`` could be a document id: 1..``max_chars`` characters, no control
    characters, no backslash, not absolute, no ``..`` segment. The message never repeats the id."""
    if not doc_id or len(doc_id) > max_chars:
        raise InputError(
            f"a document id has 1 to {max_chars} characters (setting server.max_document_id_chars); "
            "take it from a search hit's or citation's doc_id"
        )
    if (
        any(unicodedata.category(ch) == "Cc" for ch in doc_id)
        or "\\" in doc_id
        or doc_id.startswith("/")
        or ".." in doc_id.split("/")
    ):
        raise InputError(
            "that is not a document id (control characters, '\\', a leading '/' or a '..' segment); "
            "take it from a search hit's or citation's doc_id"
        )


def safe_filename(name: str) -> str:
    """The original's name for Content-Disposition: its last path part, without control characters,
    quotes, slashes or semicolons; ``document`` when nothing is left."""
    base = re.split(r"[\\/]", name)[-1]
    cleaned = _UNSAFE_NAME_CHARS.sub("_", base).strip(" .")
    return cleaned[:200] or "document"


@router.get(
    "/files/{collection}/{document_id:path}",
    response_class=FileResponse,
    response_model=None,
    responses={
        200: {"description": "The original file, inline, with its media type."},
        400: {"description": "The collection name or document id is malformed."},
        404: {"description": "No such document, or none you may read, or no original file stored."},
    },
)
async def original_file(
    request: Request,
    engine: EngineDep,
    caller: CallerDep,
    collection: Annotated[str, Path(description="The collection the document is in.")],
    document_id: Annotated[str, Path(description="The document's id (a citation's doc_id).")],
) -> FileResponse | HTMLResponse:
    """The original file of a document, for a caller who may read it (append ``#page=N`` to open a PDF
    at page N). A browser opening the link (``Accept: text/html``) gets a page in a reader's words for a
    missing file; an API caller the JSON 404."""
    check_document_id(document_id, engine.settings.server.max_document_id_chars)
    try:
        row, path = await asyncio.to_thread(engine.corpus.original, collection, document_id, caller.groups)
    except (NotFoundError, CollectionNotFoundError):
        if "text/html" not in request.headers.get("accept", ""):
            raise
        held = await asyncio.to_thread(_record_held, engine, collection, document_id, caller.groups)
        return render_page(request, "file_missing", status_code=404, collection=collection, held=held)
    media_type = row.media_type
    headers = {
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "private, no-cache",
        "Referrer-Policy": "no-referrer",
    }
    if media_type not in _UNSANDBOXED:  # an uploaded HTML or SVG file never runs in the app's origin
        headers["Content-Security-Policy"] = "sandbox"
    return FileResponse(
        path,
        media_type=media_type,
        filename=safe_filename(row.name),
        content_disposition_type="inline",
        headers=headers,
    )


def _record_held(engine: Engine, collection: str, document_id: str, groups: Groups) -> bool:
    """Whether the caller may read the document's passages although it has no original file (ingested from
    records); False when the document is gone or not shared with them (not told apart)."""
    try:
        return engine.corpus.original_record(collection, document_id, groups) is None
    except (NotFoundError, CollectionNotFoundError):
        return False
