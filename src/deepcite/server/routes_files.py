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

from fastapi import APIRouter, Path
from fastapi.responses import FileResponse

from deepcite.errors import InputError
from deepcite.server.resources import CallerDep, EngineDep

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
    responses={
        200: {"description": "The original file, inline, with its media type."},
        400: {"description": "The collection name or document id is malformed."},
        404: {"description": "No such document, or none you may read, or no original file stored."},
    },
)
async def original_file(
    engine: EngineDep,
    caller: CallerDep,
    collection: Annotated[str, Path(description="The collection the document is in.")],
    document_id: Annotated[str, Path(description="The document's id (a citation's doc_id).")],
) -> FileResponse:
    """The original file of a document, for a caller who may read it (append ``#page=N`` to open a PDF
    at page N)."""
    check_document_id(document_id, engine.settings.server.max_document_id_chars)
    row, path = await asyncio.to_thread(engine.corpus.original, collection, document_id, caller.groups)
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
